// The package in real workerd, the way a Workers user ships it: the packed tarball is
// installed into a fresh project, wrangler bundles a module Worker that imports the package
// by name (resolving the "workerd" export condition and the .wasm as a compiled module),
// and Miniflare runs that bundle and answers a request through it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFile, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { packAndInstall, repoRoot } from './helpers.mjs';
import { EXPECTED } from './shared/sse-scenario.mjs';
import { startScenarioServer, startOpenAIServer, responsesTextChunks } from './shared/openai-server.mjs';
import { EXPECTED_SCENARIO } from './shared/agent-scenario.mjs';

const COMPAT_DATE = '2026-04-26';
const WORKER_KEY = 'sk-worker-secret-0123456789';
let installed;
let mf;

before(async () => {
  installed = await packAndInstall();
  const dir = installed.dir;
  await copyFile(join(repoRoot, 'tests/js/shared/sse-scenario.mjs'), join(dir, 'sse-scenario.mjs'));
  await copyFile(join(repoRoot, 'tests/js/shared/agent-scenario.mjs'), join(dir, 'agent-scenario.mjs'));
  await writeFile(
    join(dir, 'worker.mjs'),
    `import * as pkg from 'pi-agent-wasm';
import { getModel } from 'pi-agent-wasm/models';
import { runSseScenario } from './sse-scenario.mjs';
import { runToolScenario } from './agent-scenario.mjs';
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/env-key') {
      // The Workers pattern for keys: no global environment, so the key comes from env.
      const model = { ...getModel('openai', 'gpt-4o-mini'), baseUrl: url.searchParams.get('llm') };
      const config = { model, convertToLlm: (m) => m };
      const mode = url.searchParams.get('mode');
      if (mode === 'env') config.env = env;
      if (mode === 'getApiKey') config.getApiKey = () => env.OPENAI_API_KEY;
      if (mode === 'apiKey') config.apiKey = env.OPENAI_API_KEY;
      const messages = await pkg.runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [] }, config, () => {});
      const last = messages.at(-1);
      return Response.json({ process: typeof globalThis.process, stopReason: last.stopReason, errorMessage: last.errorMessage, text: last.content.map((b) => b.text).join('') });
    }
    if (url.pathname === '/agent') {
      const agentClass = url.searchParams.get('agentClass') === '1';
      return Response.json(await runToolScenario(pkg, url.searchParams.get('llm'), url.searchParams.get('api') ?? undefined, { agentClass }));
    }
    if (url.pathname === '/decode') {
      const d = new pkg.SseDecoder();
      const events = d.feed(new Uint8Array(await request.arrayBuffer()));
      events.push(...d.finish());
      return Response.json({ events, truncated: d.truncated });
    }
    return Response.json(runSseScenario(pkg));
  },
};
`,
  );
  await writeFile(
    join(dir, 'wrangler.toml'),
    `name = "pi-agent-wasm-test"\nmain = "worker.mjs"\ncompatibility_date = "${COMPAT_DATE}"\n`,
  );
  execFileSync(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], {
    cwd: dir,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  const files = await readdir(join(dir, 'dist'));
  assert.ok(files.some((f) => f.endsWith('.wasm')), `wrangler output lacks the .wasm: ${files}`);
  mf = new Miniflare({
    scriptPath: join(dir, 'dist/worker.js'),
    modules: true,
    modulesRoot: join(dir, 'dist'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: COMPAT_DATE,
    bindings: { OPENAI_API_KEY: WORKER_KEY },
  });
});

after(async () => {
  await mf?.dispose();
  await installed?.cleanup();
});

test('SseDecoder decodes the shared scenario identically at every split (workerd entry)', async () => {
  const res = await mf.dispatchFetch('http://localhost/');
  assert.equal(res.status, 200);
  const r = await res.json();
  assert.deepEqual(r.events, EXPECTED.events);
  assert.equal(r.truncated, EXPECTED.truncated);
  assert.equal(r.retry, EXPECTED.retry);
  assert.equal(r.firstMismatch, -1);
});

test('a Worker decodes a request body through the package', async () => {
  const res = await mf.dispatchFetch('http://localhost/decode', {
    method: 'POST',
    body: 'data: {"a":1}\r\n\r\nevent: end\ndata: x',
  });
  assert.deepEqual(await res.json(), {
    events: [{ type: 'message', data: '{"a":1}', lastEventId: '' }],
    truncated: true,
  });
});

for (const [api, agentClass] of [['openai-completions', false], ['openai-responses', false], ['anthropic-messages', false], ['google-generative-ai', false], ['anthropic-messages', true]]) {
  test(`a Worker runs a tool-using ${agentClass ? 'Agent' : 'loop'} with the built-in stream over its fetch: ${api} (issue ${agentClass ? 6 : 5})`, async () => {
    const llm = await startScenarioServer(api);
    try {
      const res = await mf.dispatchFetch(`http://localhost/agent?llm=${encodeURIComponent(llm.baseUrl)}&api=${api}&agentClass=${agentClass ? 1 : 0}`);
      assert.equal(res.status, 200);
      const { usage, ...rest } = await res.json();
      assert.deepEqual(rest, EXPECTED_SCENARIO);
      assert.equal(usage.input, 11);
      assert.equal(llm.requests.length, 2);
    } finally {
      await llm.close();
    }
  });
}

test('a Worker has no global environment: the key comes from its env, as apiKey, getApiKey or the env option', async () => {
  const llm = await startOpenAIServer(() => responsesTextChunks('hello'), { api: 'responses' });
  try {
    const ask = async (mode) => (await mf.dispatchFetch(`http://localhost/env-key?llm=${encodeURIComponent(llm.baseUrl)}&mode=${mode}`)).json();
    const none = await ask('none');
    assert.equal(none.process, 'undefined');
    assert.equal(none.errorMessage, 'No API key for provider: openai');
    assert.equal(llm.requests.length, 0);
    for (const mode of ['apiKey', 'getApiKey', 'env']) {
      const out = await ask(mode);
      assert.deepEqual(out, { process: 'undefined', stopReason: 'stop', text: 'hello' }, mode);
      assert.equal(llm.requests.at(-1).headers.authorization, `Bearer ${WORKER_KEY}`, mode);
    }
    assert.equal(llm.requests.length, 3);
  } finally {
    await llm.close();
  }
});

test('a Worker bundled without the workerd condition gets an error that says to bundle with wrangler (issue 11)', async () => {
  // esbuild for the browser platform picks the browser entry, which compiles the .wasm from
  // bytes; workerd refuses that. The error must name the fix, not a browser's.
  const { build } = await import('esbuild');
  const dir = installed.dir;
  await writeFile(
    join(dir, 'misbundled.mjs'),
    `import { ready } from 'pi-agent-wasm';
export default { async fetch() { return ready().then(() => new Response('loaded'), (e) => Response.json({ code: e.code, message: e.message })); } };
`,
  );
  await build({ entryPoints: [join(dir, 'misbundled.mjs')], bundle: true, format: 'esm', platform: 'browser', outfile: join(dir, 'misbundled/worker.js'), logLevel: 'silent' });
  const worker = new Miniflare({ scriptPath: join(dir, 'misbundled/worker.js'), modules: true, modulesRoot: join(dir, 'misbundled'), compatibilityDate: COMPAT_DATE });
  try {
    const body = await (await worker.dispatchFetch('http://localhost/')).json();
    assert.equal(body.code, 'wasm_load_failed');
    assert.match(body.message, /bundle with wrangler/);
    assert.doesNotMatch(body.message, /Content-Security-Policy/);
  } finally {
    await worker.dispose();
  }
});
