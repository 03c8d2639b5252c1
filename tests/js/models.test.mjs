// `pi-agent-wasm/models` against pi-ai 1.6.0's compat catalogue, side by side: the APIs it
// keeps are the ones the built-in stream speaks (asked by a request each), every model,
// every provider, unknown ids, the named exports, the types, a tool-using run with a
// catalogue model through both stream functions, and tree-shaking with esbuild.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, symlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as pi from '@earendil-works/pi-ai/compat';
import * as ours from 'pi-agent-wasm/models';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';
import { BUILTIN_APIS, exportName } from '../../scripts/gen-models.mjs';
import { repoRoot } from './helpers.mjs';
import { startOpenAIServer, startScenarioServer, SCENARIO_SERVERS } from './shared/openai-server.mjs';
import { CALC } from './shared/agent-scenario.mjs';

const APIS = new Set(BUILTIN_APIS);
/** pi-ai's models of a provider, restricted to the four APIs. */
const piModels = (provider) => pi.getModels(provider).filter((m) => APIS.has(m.api));
const piProviders = pi.getProviders();

/**
 * One request of the built-in `streamSimple` for a model of `api`, against a local server
 * answering in the dialect of `dialect` (one of the four). Its final message, or the error
 * it refused with; and how many requests reached the server.
 */
async function askBuiltin(api, dialect) {
  const { server: kind, textChunks } = SCENARIO_SERVERS[dialect];
  const server = await startOpenAIServer(() => textChunks(`spoken: ${api}`), { api: kind });
  try {
    const model = { ...pi.getModel('openai', 'gpt-4o-mini'), api, baseUrl: server.baseUrl };
    const stream = streamSimple(model, { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] }, { apiKey: 'local-key' });
    try {
      return { final: await stream.result(), requests: server.requests.length };
    } catch (error) {
      return { refused: error.message, requests: server.requests.length };
    }
  } finally {
    await server.close();
  }
}

test('the catalogue\'s APIs are exactly the ones the built-in stream speaks (asked over 127.0.0.1)', async () => {
  // Every API pi-ai knows (its catalogue and its registered providers) and some it does not.
  const known = new Set([...piProviders.flatMap((p) => pi.getModels(p).map((m) => m.api)), ...pi.getApiProviders().map((p) => p.api)]);
  const candidates = [...new Set([...known, ...APIS, 'no-such-api', 'OPENAI-COMPLETIONS', 'openai-completions ', ''])].sort();
  assert.ok(known.size > APIS.size, 'pi-ai knows APIs the catalogue leaves out');
  const spoken = [];
  for (const api of candidates) {
    // A server in the API's own dialect where it is one of the four; any will do otherwise,
    // since a refused API sends nothing.
    const answer = await askBuiltin(api, SCENARIO_SERVERS[api] ? api : 'openai-completions');
    if (answer.refused !== undefined) {
      assert.equal(answer.refused, `No built-in provider for api: ${api} (pass a streamFn for it)`);
      assert.equal(answer.requests, 0, `${api}: refused before any request`);
      continue;
    }
    spoken.push(api);
    assert.equal(answer.requests, 1, api);
    assert.equal(answer.final.stopReason, 'stop', `${api}: ${answer.final.errorMessage}`);
    assert.deepEqual(answer.final.content.map((b) => [b.type, b.text]), [['text', `spoken: ${api}`]], api);
    assert.equal(answer.final.api, api);
  }
  assert.deepEqual(spoken, [...APIS].sort());
});

test('getModel deep-equals pi-ai getModel for every model of the four APIs, and has no other', () => {
  let same = 0;
  let left = 0;
  for (const provider of piProviders) {
    for (const model of pi.getModels(provider)) {
      const mine = ours.getModel(provider, model.id);
      if (APIS.has(model.api)) {
        assert.deepEqual(mine, pi.getModel(provider, model.id), `${provider}/${model.id}`);
        same += 1;
      } else {
        assert.equal(mine, undefined, `${provider}/${model.id} (${model.api}) is not ours`);
        left += 1;
      }
    }
  }
  assert.ok(same > 1000, `${same} models compared`);
  assert.ok(left > 0, 'some pi-ai models use other APIs');
});

test('getProviders and getModels are pi-ai\'s, filtered to the four APIs, in pi-ai\'s order', () => {
  assert.deepEqual(ours.getProviders(), piProviders.filter((p) => piModels(p).length > 0));
  assert.ok(ours.getProviders().length < piProviders.length, 'providers of other APIs only are left out');
  for (const provider of piProviders) {
    assert.deepEqual(ours.getModels(provider), piModels(provider), provider);
  }
  // Fresh arrays, shared model objects, as in pi-ai.
  assert.notEqual(ours.getModels('openai'), ours.getModels('openai'));
  assert.notEqual(pi.getModels('openai'), pi.getModels('openai'));
  assert.equal(ours.getModels('openai')[0], ours.getModel('openai', ours.getModels('openai')[0].id));
  assert.equal(ours.getModel('openai', 'gpt-4o-mini'), ours.getModel('openai', 'gpt-4o-mini'));
  assert.equal(pi.getModel('openai', 'gpt-4o-mini'), pi.getModel('openai', 'gpt-4o-mini'));
});

test('unknown providers and ids: the same answer as pi-ai', () => {
  const probes = [
    ['openai', 'no-such-model'], ['no-such-provider', 'gpt-4o-mini'], ['OPENAI', 'gpt-4o-mini'],
    ['openai', 'GPT-4O-MINI'], ['openai', ' gpt-4o-mini'], ['', ''], [undefined, undefined],
    [null, 'gpt-4o-mini'], ['openai', undefined], [42, 42], ['anthropic', 'gpt-4o-mini'],
  ];
  for (const [provider, id] of probes) {
    assert.equal(ours.getModel(provider, id), pi.getModel(provider, id), `getModel(${provider}, ${id})`);
    assert.equal(ours.getModel(provider, id), undefined);
  }
  for (const provider of ['no-such-provider', '', undefined, null, 'constructor', '__proto__', 'amazon-bedrock']) {
    assert.deepEqual(ours.getModels(provider), pi.getModels(provider).filter((m) => APIS.has(m.api)), String(provider));
    assert.deepEqual(ours.getModels(provider), []);
  }
});

test('deliberate difference: inherited names are unknown ids (pi-ai answers with Object.prototype members)', () => {
  for (const [provider, id] of [['openai', 'constructor'], ['openai', 'toString'], ['openai', '__proto__'], ['constructor', 'name'], ['toString', 'length']]) {
    const theirs = pi.getModel(provider, id);
    assert.notEqual(theirs, undefined, `pi-ai answers getModel(${provider}, ${id})`);
    assert.equal(theirs?.id, undefined, 'and the answer is not a model');
    assert.equal(ours.getModel(provider, id), undefined, `getModel(${provider}, ${id})`);
  }
});

test('each provider is a named export holding exactly its models', () => {
  const names = ours.getProviders().map(exportName);
  assert.deepEqual(Object.keys(ours).sort(), [...names, 'getModel', 'getModels', 'getProviders'].sort());
  assert.equal(exportName('minimax-cn'), 'MINIMAX_CN_MODELS');
  for (const provider of ours.getProviders()) {
    const models = ours[exportName(provider)];
    assert.deepEqual(Object.keys(models), piModels(provider).map((m) => m.id), provider);
    for (const [id, model] of Object.entries(models)) assert.equal(model, ours.getModel(provider, id));
  }
});

test('types: literal ids per provider, a wrong id is a compile error (tsc)', () => {
  const tsc = join(repoRoot, 'node_modules/.bin/tsc');
  const args = ['--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--lib', 'ES2022,DOM', 'tests/types/models.ts'];
  // Unused @ts-expect-error lines fail the compile too, so each wrong call is checked.
  execFileSync(tsc, args, { cwd: repoRoot, encoding: 'utf8' });
});

// ---- a catalogue model in a tool-using run, built-in stream and pi-ai's side by side ----

const calc = CALC;

/** Timestamps, durations and Gemini's generated tool-call ids (`name_<ms>_<n>`) zeroed. */
const GENERATED = /^[a-z_]*_\d{13}_\d+$/;
function normalize(v) {
  return JSON.parse(JSON.stringify(v, (k, x) => {
    if (k === 'timestamp' || k === 'durationMs') return 0;
    return typeof x === 'string' && GENERATED.test(x) ? 'GENERATED-ID' : x;
  }));
}

/** One run of `model` (from a catalogue) against a fresh scenario server with `streamFn`
 * (undefined: the built-in default). */
async function runCatalogueModel(model, streamFn) {
  const server = await startScenarioServer(model.api);
  try {
    const messages = await runAgentLoop(
      [{ role: 'user', content: 'what is 17*23?', timestamp: 1 }],
      { messages: [{ role: 'system', content: 'Be terse.', timestamp: 0 }], tools: [calc] },
      { model: { ...model, baseUrl: server.baseUrl }, apiKey: 'local-key', convertToLlm: (m) => m },
      () => {}, undefined, streamFn,
    );
    return { messages: normalize(messages), bodies: normalize(server.requests.map((r) => r.body)) };
  } finally {
    await server.close();
  }
}

for (const [provider, id] of [['openai', 'gpt-4o-mini'], ['groq', 'llama-3.3-70b-versatile'], ['anthropic', 'claude-haiku-4-5'], ['google', 'gemini-2.5-flash']]) {
  test(`${provider}/${id} from this catalogue runs a tool-using loop as pi-ai's does`, async () => {
    const model = ours.getModel(provider, id);
    assert.ok(model, `${provider}/${id} is in the catalogue`);
    const mine = await runCatalogueModel(model, undefined);
    const theirs = await runCatalogueModel(pi.getModel(provider, id), pi.streamSimple);
    assert.deepEqual(mine.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'assistant']);
    assert.equal(mine.messages[3].content[0].text, '391');
    assert.equal(mine.messages.at(-1).content[0].text, 'The answer is 391 — fertig ✓');
    assert.deepEqual(mine.messages, theirs.messages);
    assert.deepEqual(mine.bodies, theirs.bodies);
  });
}

// ---- tree-shaking ----

const work = mkdtempSync(join(tmpdir(), 'pi-agent-wasm-models-'));
after(() => rmSync(work, { recursive: true, force: true }));
// A consumer project with the package installed by link, as a bundler would find it.
mkdirSync(join(work, 'node_modules'));
symlinkSync(repoRoot, join(work, 'node_modules', 'pi-agent-wasm'), 'dir');

async function bundle(name, source, { minify = false } = {}) {
  const { build } = await import('esbuild');
  writeFileSync(join(work, `${name}.mjs`), source);
  const out = await build({
    entryPoints: [join(work, `${name}.mjs`)],
    bundle: true, format: 'esm', platform: 'browser', write: false, minify, logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

/** Model-data strings of `provider` found in `code`: its model ids unique to it (not used by
 * `except`) and its base URLs, each as a quoted string. */
function dataOf(provider, code, except = []) {
  const kept = new Set(except.flatMap((p) => ours.getModels(p).flatMap((m) => [m.id, m.baseUrl])));
  const strings = new Set(ours.getModels(provider).flatMap((m) => [m.id, m.baseUrl]));
  return [...strings].filter((s) => s !== '' && !kept.has(s) && code.includes(JSON.stringify(s)));
}

test('tree-shaking: a bundle importing one provider keeps no other provider\'s models', async (t) => {
  const code = await bundle('openai-only', "import { OPENAI_MODELS } from 'pi-agent-wasm/models';\nconsole.log(OPENAI_MODELS['gpt-4o-mini'].id);\n");
  assert.ok(code.includes('"gpt-4o-mini"') && code.includes('"https://api.openai.com/v1"'), 'the imported provider is there');
  for (const provider of ours.getProviders().filter((p) => p !== 'openai')) {
    assert.deepEqual(dataOf(provider, code, ['openai']), [], `${provider}'s data in the openai-only bundle`);
  }
  // The control: a bundle of getModel keeps every provider, so the check above can fail.
  const everything = await bundle('get-model', "import { getModel } from 'pi-agent-wasm/models';\nconsole.log(getModel('openai', 'gpt-4o-mini'));\n");
  for (const provider of ours.getProviders().filter((p) => p !== 'openai')) {
    assert.notDeepEqual(dataOf(provider, everything, ['openai']), [], `${provider}'s data in the getModel bundle`);
  }
  const min = await bundle('openai-only-min', "import { OPENAI_MODELS } from 'pi-agent-wasm/models';\nconsole.log(OPENAI_MODELS['gpt-4o-mini'].id);\n", { minify: true });
  const kb = (s) => `${(Buffer.byteLength(s) / 1024).toFixed(1)} KB raw, ${(gzipSync(s, { level: 9 }).length / 1024).toFixed(1)} KB gzip`;
  t.diagnostic(`openai-only bundle: ${kb(code)}; minified ${kb(min)}; getModel bundle: ${kb(everything)}`);
});

test('tree-shaking: a bundle of the main entry has no model data', async () => {
  const code = await bundle('main-only', "import { runAgentLoop, streamSimple } from 'pi-agent-wasm';\nconsole.log(runAgentLoop, streamSimple);\n");
  assert.ok(code.includes('runAgentLoop'), 'the main entry is bundled');
  for (const provider of ours.getProviders()) {
    assert.deepEqual(dataOf(provider, code), [], `${provider}'s data in the main-entry bundle`);
  }
});
