// API keys from the environment (pkg/env-keys.js, called by the built-in stream when no key
// was given) against pi-ai 1.6.0's compat streamSimple, which falls back to getEnvApiKey:
// the variable table probed side by side for every provider, then real requests from child
// processes with a controlled environment to a local server, through both stacks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import * as pi from '@earendil-works/pi-ai/compat';
import { getProviders, getModels } from 'pi-agent-wasm/models';
import { envApiKey } from '../../pkg/env-keys.js';
import { startOpenAIServer, textChunks, responsesTextChunks, anthropicTextChunks, geminiTextChunks } from './shared/openai-server.mjs';

// ---- the table, probed ----

/** The variables `lookup(provider, env)` reads, in order: an env whose every variable is
 * set (to a value naming it) tells which one wins; unset it and ask again. */
function variables(lookup, provider) {
  const unset = new Set();
  const order = [];
  for (;;) {
    const env = new Proxy({}, { get: (_, name) => (typeof name === 'string' && !unset.has(name) ? `value-of-${name}` : undefined) });
    const value = lookup(provider, env);
    if (typeof value !== 'string' || !value.startsWith('value-of-')) return order;
    const name = value.slice('value-of-'.length);
    order.push(name);
    unset.add(name);
  }
}
// pi-ai's "<authenticated>" marker (ambient cloud credentials, which its compat stream
// does not send) does not name a variable, so it ends a probe.
const piLookup = (provider, env) => pi.getEnvApiKey(provider, env);
const ourLookup = (provider, env) => envApiKey(provider, env).apiKey;

/** Where the built-in stream deliberately reads less than pi-ai, and why. */
const NOT_READ = {
  // pi-ai prefers it to ANTHROPIC_API_KEY and sends it as a Claude Code OAuth bearer; the
  // built-in stream has no OAuth, so the token is never sent (README: not supported).
  ANTHROPIC_OAUTH_TOKEN: 'anthropic',
  // pi-ai pairs it with the account (and gateway) id to fill URL placeholders and sends it
  // in cf-aig-authorization for AI Gateway; the built-in stream does neither.
  CLOUDFLARE_API_KEY: 'cloudflare-',
};

test('the provider → variable table is pi-ai\'s, for every provider, less the variables it does not read', () => {
  const providers = new Set([...pi.getProviders(), ...getProviders(), 'no-such-provider']);
  let compared = 0;
  for (const provider of providers) {
    const theirs = variables(piLookup, provider);
    const expected = theirs.filter((name) => !(NOT_READ[name] && provider.startsWith(NOT_READ[name])));
    assert.deepEqual(variables(ourLookup, provider), expected, provider);
    if (expected.length > 0) compared += 1;
  }
  // Every provider of the catalogue has a variable, Cloudflare's aside.
  for (const provider of getProviders().filter((p) => !p.startsWith('cloudflare-'))) {
    assert.notDeepEqual(variables(ourLookup, provider), [], provider);
  }
  assert.ok(compared >= 35, `${compared} providers with variables`);
  assert.deepEqual(variables(piLookup, 'anthropic'), ['ANTHROPIC_OAUTH_TOKEN', 'ANTHROPIC_API_KEY']);
  assert.deepEqual(variables(ourLookup, 'anthropic'), ['ANTHROPIC_API_KEY']);
});

test('a variable set to "" is unset, the call\'s env comes before process.env, bindings are not keys', () => {
  for (const env of [{ OPENAI_API_KEY: '' }, { OPENAI_API_KEY: 'scoped' }, { OPENAI_API_KEY: { binding: true } }, undefined, null]) {
    const theirs = pi.getEnvApiKey('openai', env ?? undefined);
    const ours = envApiKey('openai', env).apiKey;
    if (typeof env?.OPENAI_API_KEY === 'object') {
      // pi-ai would send the object as the key; a Worker's env holds bindings, never keys.
      assert.equal(typeof theirs, 'object');
      assert.equal(ours, process.env.OPENAI_API_KEY || undefined);
    } else {
      assert.equal(ours, theirs, JSON.stringify(env));
    }
  }
  assert.deepEqual(envApiKey('constructor', {}), {});
  assert.deepEqual(envApiKey(undefined, {}), {});
});

// ---- requests from child processes with a controlled environment ----

const CHILD = fileURLToPath(new URL('./shared/env-child.mjs', import.meta.url));
const DIALECT = {
  'openai-completions': ['openai', textChunks],
  'openai-responses': ['responses', responsesTextChunks],
  'anthropic-messages': ['anthropic', anthropicTextChunks],
  'google-generative-ai': ['google', geminiTextChunks],
};
const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** A local server of `api`'s dialect answering "hello", or with `status` and a JSON error
 * body that echoes the request's key headers (as some providers' 401s quote the key). */
async function serve(api, { status = 200 } = {}) {
  if (status === 200) {
    const [dialect, chunks] = DIALECT[api];
    const server = await startOpenAIServer(() => chunks('hello'), { api: dialect });
    servers.push(server);
    return server;
  }
  const requests = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests.push({ headers: req.headers });
      const seen = [req.headers.authorization, req.headers['x-api-key'], req.headers['x-goog-api-key']].filter(Boolean).join(' ');
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${seen}`, type: 'invalid_request_error' }, message: `Incorrect API key provided: ${seen}` }));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const path = { 'google-generative-ai': '/v1beta', 'anthropic-messages': '/anthropic' }[api] ?? '/v1';
  const handle = { baseUrl: `http://127.0.0.1:${server.address().port}${path}`, requests, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
  servers.push(handle);
  return handle;
}

/** Runs `spec` in a child with exactly `env` (plus PATH); resolves with its output. */
function child(spec, env) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, JSON.stringify(spec)], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`child failed: ${stderr || error.message}`));
      resolve({ ...JSON.parse(stdout), stderr });
    });
  });
}

/** The request's key headers: what carries a key in each of the four APIs. */
const keyHeaders = (request) => request && {
  authorization: request.headers.authorization,
  'x-api-key': request.headers['x-api-key'],
  'x-goog-api-key': request.headers['x-goog-api-key'],
};

/** The same request through ours and pi's stack, each against its own server. */
async function both({ provider, modelId, mode = 'stream', options = {}, hookKey, status }, env) {
  const model = getModels(provider).find((m) => m.id === modelId);
  assert.ok(model, `${provider}/${modelId} is in the catalogue`);
  const run = async (impl) => {
    const server = await serve(model.api, { status });
    const out = await child({ impl, mode, provider, modelId, baseUrl: server.baseUrl, options, hookKey }, env);
    return { ...out, requests: server.requests.length, headers: keyHeaders(server.requests[0]) };
  };
  const [ours, theirs] = await Promise.all([run('ours'), run('pi')]);
  return { ours, theirs };
}

/** Ours and pi's agree on what reached the server and on the outcome. */
function assertSame({ ours, theirs }, what) {
  assert.equal(ours.requests, theirs.requests, `${what}: requests`);
  assert.deepEqual(ours.headers, theirs.headers, `${what}: key headers`);
  assert.equal(ours.stopReason, theirs.stopReason, `${what}: stopReason (${ours.errorMessage} / ${theirs.errorMessage})`);
  assert.equal(ours.errorMessage, theirs.errorMessage, `${what}: errorMessage`);
  assert.equal(ours.text, theirs.text, `${what}: text`);
}

/** The secret appears nowhere this package's side shows: events, messages, stdout, stderr. */
function assertHidden(out, secret) {
  for (const [where, text] of [['events', out.events], ['errorMessage', out.errorMessage ?? ''], ['text', out.text ?? ''], ['stderr', out.stderr]]) {
    assert.ok(!text.includes(secret), `the key appears in ${where}`);
  }
}

// Typical providers of each API, each with the variable read first (pi-ai's, but for
// Anthropic, whose first is the OAuth token; see below).
const TYPICAL = [
  ['openai', 'gpt-4o-mini'],
  ['openrouter', 'openai/gpt-4o-mini'],
  ['groq', 'llama-3.3-70b-versatile'],
  ['deepseek', 'deepseek-flash'],
  ['xai', getModels('xai')[0].id],
  ['anthropic', 'claude-haiku-4-5'],
  ['vercel-ai-gateway', getModels('vercel-ai-gateway').find((m) => m.api === 'anthropic-messages').id],
  ['google', 'gemini-2.5-flash'],
  ['opencode', getModels('opencode').find((m) => m.api === 'google-generative-ai').id],
  ['qwen-token-plan', getModels('qwen-token-plan')[0].id],
  ['huggingface', getModels('huggingface')[0].id],
];

for (const [provider, modelId] of TYPICAL) {
  const [variable] = variables(ourLookup, provider);
  const api = getModels(provider).find((m) => m.id === modelId)?.api;
  test(`${provider} (${api}): ${variable} from the environment reaches the server as pi-ai sends it`, async () => {
    const secret = `sk-env-${provider}-0123456789`;
    const result = await both({ provider, modelId }, { [variable]: secret });
    assertSame(result, provider);
    assert.equal(result.ours.requests, 1);
    assert.equal(result.ours.text, 'hello');
    assert.ok(Object.values(result.ours.headers).some((v) => v?.includes(secret)), 'the key was sent');
    assertHidden(result.ours, secret);
  });
}

test('a variable later in pi-ai\'s order is used when the first is unset (qwen-token-plan)', async () => {
  const [first, second] = variables(piLookup, 'qwen-token-plan');
  assert.ok(second, 'qwen-token-plan has a fallback variable');
  const modelId = getModels('qwen-token-plan')[0].id;
  assertSame(await both({ provider: 'qwen-token-plan', modelId }, { [second]: 'sk-second-0123456789' }), 'second only');
  const both2 = await both({ provider: 'qwen-token-plan', modelId }, { [first]: 'sk-first-0123456789', [second]: 'sk-second-0123456789' });
  assertSame(both2, 'both set');
  assert.equal(both2.ours.headers.authorization, 'Bearer sk-first-0123456789');
});

test('an explicit apiKey wins over the environment; a blank one does not', async () => {
  const env = { OPENAI_API_KEY: 'sk-env-0123456789' };
  const explicit = await both({ provider: 'openai', modelId: 'gpt-4o-mini', options: { apiKey: 'sk-explicit-0123456789' } }, env);
  assertSame(explicit, 'explicit');
  assert.equal(explicit.ours.headers.authorization, 'Bearer sk-explicit-0123456789');
  for (const apiKey of ['', '   ', '\u3000']) {
    const blank = await both({ provider: 'groq', modelId: 'llama-3.3-70b-versatile', options: { apiKey } }, { GROQ_API_KEY: 'sk-env-0123456789' });
    assertSame(blank, `blank ${JSON.stringify(apiKey)}`);
    assert.equal(blank.ours.headers.authorization, 'Bearer sk-env-0123456789');
  }
});

test('no variable: the same outcome as pi-ai, for each API (and a blank key is sent as pi-ai sends it)', async () => {
  for (const [provider, modelId] of [['openai', 'gpt-4o-mini'], ['groq', 'llama-3.3-70b-versatile'], ['anthropic', 'claude-haiku-4-5'], ['google', 'gemini-2.5-flash']]) {
    const result = await both({ provider, modelId }, {});
    assertSame(result, `${provider}, no variable`);
    assert.equal(result.ours.requests, 0);
    assert.equal(result.ours.stopReason, 'error');
    assert.equal(result.ours.errorMessage, `No API key for provider: ${provider}`);
  }
  assertSame(await both({ provider: 'groq', modelId: 'llama-3.3-70b-versatile', options: { apiKey: ' ' } }, {}), 'blank key, no variable');
});

test('the call\'s env option comes before process.env, as pi-ai\'s does (stream and loop)', async () => {
  const env = { OPENAI_API_KEY: 'sk-process-0123456789' };
  for (const mode of ['stream', 'loop']) {
    const scoped = await both({ provider: 'openai', modelId: 'gpt-4o-mini', mode, options: { env: { OPENAI_API_KEY: 'sk-scoped-0123456789' } } }, env);
    assertSame(scoped, `${mode}: scoped env`);
    assert.equal(scoped.ours.headers.authorization, 'Bearer sk-scoped-0123456789');
  }
});

test('in the loop: getApiKey wins, then config.apiKey, then the environment (pi-agent-core + pi-ai side by side)', async () => {
  const env = { GEMINI_API_KEY: 'sk-env-0123456789' };
  const base = { provider: 'google', modelId: 'gemini-2.5-flash', mode: 'loop' };
  const hook = await both({ ...base, hookKey: 'sk-hook-0123456789', options: { apiKey: 'sk-config-0123456789' } }, env);
  assertSame(hook, 'getApiKey');
  assert.equal(hook.ours.headers['x-goog-api-key'], 'sk-hook-0123456789');
  const config = await both({ ...base, options: { apiKey: 'sk-config-0123456789' } }, env);
  assertSame(config, 'config.apiKey');
  assert.equal(config.ours.headers['x-goog-api-key'], 'sk-config-0123456789');
  const fromEnv = await both({ ...base, hookKey: '' }, env);
  assertSame(fromEnv, 'environment');
  assert.equal(fromEnv.ours.headers['x-goog-api-key'], 'sk-env-0123456789');
  assertHidden(fromEnv.ours, 'sk-env-0123456789');
});

test('Anthropic: ANTHROPIC_API_KEY as pi-ai; ANTHROPIC_AUTH_TOKEN skipped as pi-ai skips it', async () => {
  const base = { provider: 'anthropic', modelId: 'claude-haiku-4-5' };
  const key = await both(base, { ANTHROPIC_API_KEY: 'sk-ant-api-0123456789' });
  assertSame(key, 'ANTHROPIC_API_KEY');
  assert.equal(key.ours.headers['x-api-key'], 'sk-ant-api-0123456789');
  const token = await both(base, { ANTHROPIC_AUTH_TOKEN: 'sk-ant-auth-0123456789' });
  assertSame(token, 'ANTHROPIC_AUTH_TOKEN only');
  assert.equal(token.ours.errorMessage, 'No API key for provider: anthropic');
  assertHidden(token.ours, 'sk-ant-auth-0123456789');
  assertSame(await both(base, { ANTHROPIC_AUTH_TOKEN: 'sk-ant-auth-0123456789', ANTHROPIC_API_KEY: 'sk-ant-api-0123456789' }), 'both');
});

test('Anthropic deliberate difference: ANTHROPIC_OAUTH_TOKEN is never sent (pi-ai sends it as an OAuth bearer)', async () => {
  const base = { provider: 'anthropic', modelId: 'claude-haiku-4-5' };
  const oauth = 'sk-ant-oat01-secret-0123456789';
  const only = await both(base, { ANTHROPIC_OAUTH_TOKEN: oauth });
  assert.equal(only.theirs.headers.authorization, `Bearer ${oauth}`, 'pi-ai sends the token');
  assert.equal(only.ours.requests, 0, 'ours sends nothing');
  assert.equal(only.ours.stopReason, 'error');
  assert.equal(only.ours.errorMessage, 'No API key for provider: anthropic (ANTHROPIC_OAUTH_TOKEN is set, but Anthropic OAuth tokens are not supported: set ANTHROPIC_API_KEY or pass apiKey)');
  assertHidden(only.ours, oauth);
  // With an API key too, pi-ai still prefers the token; ours uses the key.
  const withKey = await both(base, { ANTHROPIC_OAUTH_TOKEN: oauth, ANTHROPIC_API_KEY: 'sk-ant-api-0123456789' });
  assert.equal(withKey.theirs.headers.authorization, `Bearer ${oauth}`);
  assert.deepEqual(withKey.ours.headers, { authorization: undefined, 'x-api-key': 'sk-ant-api-0123456789', 'x-goog-api-key': undefined });
  assert.equal(withKey.ours.text, 'hello');
  assertHidden(withKey.ours, oauth);
});

test('Cloudflare: CLOUDFLARE_API_KEY is not read; the error says why and sends nothing', async () => {
  for (const provider of ['cloudflare-workers-ai', 'cloudflare-ai-gateway']) {
    const secret = 'cf-secret-0123456789';
    const model = getModels(provider).find((m) => m.api === 'openai-completions');
    const server = await serve(model.api);
    const out = await child({ impl: 'ours', mode: 'stream', provider, modelId: model.id, baseUrl: server.baseUrl, options: {} }, { CLOUDFLARE_API_KEY: secret });
    assert.equal(server.requests.length, 0);
    assert.equal(out.errorMessage, `No API key for provider: ${provider} (CLOUDFLARE_API_KEY is set, but Cloudflare providers need the account id in baseUrl: pass apiKey and a model with a resolved baseUrl)`);
    assertHidden(out, secret);
  }
});

test('a key from the environment never shows in an error, even when the server echoes it', async () => {
  for (const [provider, modelId, variable] of [['openai', 'gpt-4o-mini', 'OPENAI_API_KEY'], ['groq', 'llama-3.3-70b-versatile', 'GROQ_API_KEY'], ['anthropic', 'claude-haiku-4-5', 'ANTHROPIC_API_KEY'], ['google', 'gemini-2.5-flash', 'GEMINI_API_KEY']]) {
    const secret = `sk-env-echoed-${provider}-0123456789`;
    const { ours, theirs } = await both({ provider, modelId, status: 401 }, { [variable]: secret });
    assert.equal(ours.requests, 1);
    assert.deepEqual(ours.headers, theirs.headers, `${provider}: the same key headers`);
    assert.equal(ours.stopReason, 'error');
    // Gemini's text is the JSON body alone, as pi-ai's client words it; the others name the status.
    assert.match(ours.errorMessage, provider === 'google' ? /^\{"error":\{"message":"Incorrect API key provided/ : /401/);
    assert.match(ours.errorMessage, /\[redacted\]/, `${provider}: the echoed key is cut out`);
    assertHidden(ours, secret);
  }
});
