// examples/worker, the way its README commands run it: wrangler bundles the example (its
// `pi-agent-wasm` dependency is this repository, as `npm install` links `file:../..`), and
// workerd runs it. Offline: the scripted demo model answers through the built-in provider
// over the Worker's own `fetch`, so a session uses a tool and answers with no key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { repoRoot } from './helpers.mjs';

const example = join(repoRoot, 'examples/worker');
const out = mkdtempSync(join(tmpdir(), 'pi-example-'));
let mf;

after(async () => {
  await mf?.dispose();
  rmSync(out, { recursive: true, force: true });
});

test('examples/worker bundles with wrangler and answers over the sessions API offline (demo model)', async () => {
  const link = join(example, 'node_modules/pi-agent-wasm');
  if (!existsSync(link)) {
    mkdirSync(join(example, 'node_modules'), { recursive: true });
    symlinkSync('../../..', link);
  }
  execFileSync(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: example,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  mf = new Miniflare({
    scriptPath: join(out, 'index.js'),
    modules: true,
    modulesRoot: out,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2026-04-26',
    durableObjects: { SESSIONS: 'Session' },
    bindings: { LLM_BASE_URL: '', LLM_MODEL: 'gpt-4o-mini', SESSION_TOKEN: '', CORS_ORIGIN: 'https://app.example' },
  });
  const res = await mf.dispatchFetch('http://localhost/sessions/demo/prompt', { method: 'POST', body: JSON.stringify({ text: 'What is 17*23?' }) });
  assert.equal(res.status, 202);
  const deadline = Date.now() + 20000;
  let state;
  do {
    await new Promise((r) => setTimeout(r, 100));
    state = await (await mf.dispatchFetch('http://localhost/sessions/demo')).json();
  } while ((state.running || state.messages?.at(-1)?.role !== 'assistant') && Date.now() < deadline);
  assert.deepEqual(state.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'assistant']);
  assert.equal(state.messages[3].content[0].text, '391');
  assert.match(state.messages.at(-1).content.map((b) => b.text ?? '').join(''), /391/);
  // CORS for the page's origin: the preflight, and the header on answers.
  const pre = await mf.dispatchFetch('http://localhost/sessions/demo/steer', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-headers': 'content-type' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(pre.headers.get('access-control-allow-methods'), /POST/);
  const got = await mf.dispatchFetch('http://localhost/sessions/demo', { headers: { origin: 'https://app.example' } });
  assert.equal(got.headers.get('access-control-allow-origin'), 'https://app.example');
});
