// Agent sessions on Durable Objects (`pi-agent-wasm/cloudflare`), in real workerd the way a
// Workers user ships them: the packed tarball installed into a fresh project, a Worker that
// subclasses AgentSession with its own tools, bundled by wrangler, run by Miniflare with
// persistent Durable Object storage. The model is a real HTTP server on 127.0.0.1 that the
// Worker reaches with the built-in provider and a key from the Worker's bindings; the tools
// call a gate server the test holds, so a restart can cut a run mid-stream or mid-tool.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { packAndInstall, repoRoot } from './helpers.mjs';
import { Agent, streamProxy } from 'pi-agent-wasm';
import * as ours from 'pi-agent-wasm';
import { replay, readCassette } from 'pi-agent-wasm/cassette';

const COMPAT_DATE = '2026-04-26';
const KEY = 'sk-session-secret-0123456789';
const TOKEN = 'session-token-42';
const PROXY_TOKEN = 'proxy-token-for-the-page';
let installed;
let persist;
let mf;
let llm;
let gate;

/** The model: a tool call for "weather" prompts (then text), a stream that stalls for
 * "stall" prompts until released, text otherwise. Records each request. */
async function startModel() {
  const requests = [];
  const stalled = [];
  const stalledTexts = new Set();
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', async () => {
      const body = JSON.parse(raw || '{}');
      requests.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const msgs = body.messages;
      const lastUser = [...msgs].reverse().find((m) => m.role === 'user');
      const text = typeof lastUser?.content === 'string' ? lastUser.content : (lastUser?.content ?? []).map((p) => p.text ?? '').join('');
      const toolDone = msgs.at(-1)?.role === 'tool';
      // Each "stall" prompt stalls its first request only; asked again, it answers.
      if (text.includes('stall') && !toolDone && !stalledTexts.has(text)) {
        stalledTexts.add(text);
        res.write(chunk({ role: 'assistant', content: 'Thinking ' }));
        res.write(chunk({ content: 'about it' }));
        stalled.push(res);
        return;
      }
      if (/weather|pay|transfer|title|confirm|vault/.test(text) && !toolDone) {
        const calls = text.includes('confirm')
          ? [['call_x', 'confirm', { order: 7 }]]
          : text.includes('vault')
            ? [['call_v', 'vault', {}]]
          : text.includes('pay')
          ? [['call_p', 'pay', { amount: 5 }], ['call_w', 'weather', { city: 'Oslo' }]]
          : text.includes('transfer')
            ? [['call_t', 'transfer', { to: '42', eur: 25 }], ['call_w', 'weather', { city: 'Oslo' }]]
            : text.includes('title')
              ? [['call_c', 'title', {}]]
              : [['call_w', 'weather', { city: 'Oslo' }]];
        res.write(chunk({ role: 'assistant', tool_calls: calls.map(([id, name, args], index) => ({ index, id, type: 'function', function: { name, arguments: JSON.stringify(args) } })) }));
        res.end(chunk({}, 'tool_calls') + 'data: [DONE]\n\n');
        return;
      }
      const answer = toolDone ? `Done: ${msgs.filter((m) => m.role === 'tool').map((m) => m.content).join('; ')}` : `Echo: ${text}`;
      res.write(chunk({ role: 'assistant', content: answer.slice(0, 6) }));
      res.end(chunk({ content: answer.slice(6) }) + chunk({}, 'stop') + 'data: [DONE]\n\n');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    stalled,
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  };
}

/** The tools' gate: each call is recorded; held ones wait until released. */
async function startGate() {
  const calls = [];
  const held = [];
  let hold = false;
  const server = createServer((req, res) => {
    const id = new URL(req.url, 'http://x').searchParams.get('id');
    calls.push(id);
    if (hold) held.push(res);
    else res.end('ok');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    calls,
    hold: (on) => { hold = on; },
    release: () => { for (const r of held.splice(0)) r.end('ok'); },
    close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }),
  };
}

const WORKER = `import { AgentSession, routeSessions, handleStreamProxy } from 'pi-agent-wasm/cloudflare';

const modelOf = (env) => ({ id: 'm', name: 'm', api: 'openai-completions', provider: 'openai', baseUrl: env.LLM_BASE_URL, headers: { 'x-gateway-token': 'gw-secret-1' }, reasoning: false,
  input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 });

const tool = (env, name, replay, text) => ({
  name, label: name, description: name, ...(replay ? { replay: 'safe' } : {}),
  parameters: { type: 'object', properties: {}, additionalProperties: true },
  async execute(id, args, _signal, onUpdate) {
    onUpdate?.({ content: [{ type: 'text', text: 'starting' }], details: {} });
    await (await fetch(env.GATE_URL + '/?id=' + id)).text();
    onUpdate?.({ content: [{ type: 'text', text: 'almost' }], details: {} });
    return { content: [{ type: 'text', text: text(args) }], details: {} };
  },
});

export class Session extends AgentSession {
  constructor(ctx, env) {
    super(ctx, env);
    this.watchdogMs = 400;
  }
  // Sessions whose id starts with "rec-" record a cassette (record: true), decided at their
  // first request and kept in storage, so an alarm after a restart records on too.
  async fetch(request) {
    const id = new URL(request.url).pathname.split('/')[2] ?? '';
    if (id.startsWith('rec-') && !this.recording) {
      this.recording = true;
      await this.storage.put('test-records', true);
    }
    return super.fetch(request);
  }
  async load() {
    this.recording ??= (await this.storage.get('test-records')) === true;
    return super.load();
  }
  agentOptions(env) {
    const model = modelOf(env);
    return {
      record: this.recording === true,
      initialState: { model, systemPrompt: 'Be brief.', tools: [
        tool(env, 'weather', true, (a) => a.city + ': 18 C'),
        tool(env, 'pay', false, (a) => 'paid ' + a.amount),
        { ...tool(env, 'transfer', false, (a) => 'sent ' + a.eur + ' EUR to ' + a.to), needsApproval: (a) => (a.eur > 10 ? 'over 10 EUR' : false) },
        { name: 'title', label: 'title', description: 'the title of the page the user is on', parameters: { type: 'object' }, client: true },
        { ...tool(env, 'confirm', false, (a) => 'confirmed ' + a.order), needsApproval: true, expiresAfterMs: 1500 },
        { ...tool(env, 'vault', false, () => 'opened'), needsApproval: true, expiresAfterMs: Number.MAX_SAFE_INTEGER },
      ] },
      getApiKey: () => env.OPENAI_API_KEY,
    };
  }
}

export default {
  async fetch(request, env) {
    // Each user's sessions are named "<user>-…"; only the admin approves, rejects or answers.
    const authorize = (req, e, { sessionId, action }) => {
      const user = req.headers.get('x-user');
      if (!user) return false;
      if (action === 'create') return true;
      if (['approve', 'reject', 'result'].includes(action) && user !== e.ADMIN_USER) return false;
      return sessionId.startsWith(user + '-') || user === e.ADMIN_USER;
    };
    return (await routeSessions(request, env.SESSIONS, { token: env.SESSION_TOKEN }))
      ?? (await routeSessions(request, env.SESSIONS, { prefix: '/users', authorize, env }))
      ?? (await routeSessions(request, env.SESSIONS, { prefix: '/open' }))
      ?? (await handleStreamProxy(request, { token: env.PROXY_TOKEN, models: [modelOf(env)], getApiKey: () => env.OPENAI_API_KEY }))
      ?? new Response('not found', { status: 404 });
  },
};
`;

function start() {
  return new Miniflare({
    scriptPath: join(installed.dir, 'dist/worker.js'),
    modules: true,
    modulesRoot: join(installed.dir, 'dist'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: COMPAT_DATE,
    durableObjects: { SESSIONS: 'Session' },
    durableObjectsPersist: persist,
    bindings: { LLM_BASE_URL: llm.baseUrl, OPENAI_API_KEY: KEY, GATE_URL: gate.url, SESSION_TOKEN: TOKEN, PROXY_TOKEN, ADMIN_USER: 'root' },
  });
}

before(async () => {
  installed = await packAndInstall();
  persist = await mkdtemp(join(tmpdir(), 'pi-sessions-'));
  await writeFile(join(installed.dir, 'worker.mjs'), WORKER);
  await writeFile(
    join(installed.dir, 'wrangler.toml'),
    `name = "sessions"\nmain = "worker.mjs"\ncompatibility_date = "${COMPAT_DATE}"\n\n[[durable_objects.bindings]]\nname = "SESSIONS"\nclass_name = "Session"\n\n[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["Session"]\n`,
  );
  execFileSync(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], {
    cwd: installed.dir,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  llm = await startModel();
  gate = await startGate();
  mf = start();
});

after(async () => {
  await mf?.dispose();
  await llm?.close();
  await gate?.close();
  await installed?.cleanup();
  await rm(persist, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${TOKEN}` };
const call = (path, init = {}) => mf.dispatchFetch(`http://localhost${path}`, { ...init, headers: { ...auth, ...(init.headers ?? {}) } });
const post = (path, body) => call(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const state = async (id) => (await call(`/sessions/${id}`)).json();

/** Reads the session's SSE until `agent_end` (or `until`), after `lastEventId`: [{ id, type, data }]. */
async function events(id, { lastEventId, until = (e) => e.type === 'agent_end', timeoutMs = 15000 } = {}) {
  const res = await call(`/sessions/${id}/events`, { headers: lastEventId ? { 'last-event-id': lastEventId } : {} });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const out = [];
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${until} within ${timeoutMs} ms; got ${out.map((e) => e.type)}`);
      const { done, value } = await Promise.race([reader.read(), new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out; got ${out.map((e) => e.type)}`)), left))]);
      if (done) return out;
      buffer += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        if (frame.startsWith(':')) continue;
        const field = (name) => frame.split('\n').find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
        const e = { id: field('id'), type: field('event'), data: JSON.parse(field('data')) };
        out.push(e);
        if (until(e)) return out;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

async function waitFor(check, what, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a tool-using session over HTTP: prompt, live events with ids, state; the key stays in the Worker', async () => {
  const res = await post('/sessions/alpha/prompt', { text: 'What is the weather in Oslo?' });
  assert.equal(res.status, 202);
  const seen = await events('alpha');
  const types = seen.map((e) => e.type);
  assert.equal(types[0], 'agent_start');
  assert.ok(types.includes('tool_execution_end'));
  assert.equal(types.at(-1), 'agent_end');
  const stored = seen.filter((e) => !e.id.includes('.')).map((e) => Number(e.id));
  assert.deepEqual(stored, stored.map((_, i) => i + 1), 'stored events are numbered 1, 2, 3, ...');
  const s = await state('alpha');
  assert.equal(s.running, false);
  assert.deepEqual(s.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'assistant']);
  assert.equal(s.messages.at(-1).content[0].text, 'Done: Oslo: 18 C');
  assert.equal(llm.requests.at(-1).headers.authorization, `Bearer ${KEY}`);
  const everything = JSON.stringify(seen) + JSON.stringify(s);
  assert.ok(!everything.includes(KEY), 'the key is in no event and no state');
});

test('reconnecting with Last-Event-ID delivers every later event exactly once', async () => {
  await post('/sessions/beta/prompt', { text: 'weather please' });
  const all = await events('beta');
  const stored = all.filter((e) => !e.id.includes('.'));
  for (const cut of [1, 3, Math.floor(stored.length / 2), stored.length - 1]) {
    const from = stored[cut - 1].id;
    const again = await events('beta', { lastEventId: from });
    const expected = all.slice(all.findIndex((e) => e.id === from) + 1);
    assert.deepEqual(again.map((e) => e.id), expected.map((e) => e.id), `after ${from}`);
    assert.deepEqual(again.map((e) => e.data), expected.map((e) => e.data));
  }
});

test('steering over HTTP reaches the next request; abort over HTTP ends the run', async () => {
  gate.hold(true);
  await post('/sessions/gamma/prompt', { text: 'weather in Oslo' });
  await waitFor(() => gate.calls.includes('call_w') && gate.calls.length > 0, 'the tool to start');
  const steer = await post('/sessions/gamma/steer', { text: 'Also say hello.' });
  assert.equal(steer.status, 202);
  const busy = await post('/sessions/gamma/prompt', { text: 'another' });
  assert.equal(busy.status, 409);
  assert.equal((await busy.json()).error, 'session busy');
  gate.release();
  gate.hold(false);
  await events('gamma');
  const requests = llm.requests.filter((r) => JSON.stringify(r.body.messages).includes('weather in Oslo'));
  const last = requests.at(-1).body.messages;
  assert.equal(last.at(-2).role, 'tool');
  assert.equal(last.at(-1).role, 'user');
  assert.match(JSON.stringify(last.at(-1).content), /Also say hello\./);

  // Abort while the stream is stalled.
  await post('/sessions/gamma/prompt', { text: 'please stall' });
  await waitFor(() => llm.stalled.length > 0, 'the stream to stall');
  const aborted = await post('/sessions/gamma/abort', {});
  assert.equal(aborted.status, 200);
  const s = await aborted.json();
  assert.equal(s.running, false);
  assert.equal(s.messages.at(-1).stopReason, 'aborted');
  for (const r of llm.stalled.splice(0)) r.destroy();
});

test('bad requests get a 4xx with a JSON error; the token is required', async () => {
  const unknown = await call('/sessions/nobody');
  assert.equal(unknown.status, 404);
  assert.deepEqual(await unknown.json(), { error: 'unknown session' });
  const malformed = await call('/sessions/delta/prompt', { method: 'POST', body: '{"text": ' });
  assert.equal(malformed.status, 400);
  assert.equal((await malformed.json()).error, 'malformed body');
  const shape = await post('/sessions/delta/prompt', { text: 42 });
  assert.equal(shape.status, 400);
  const big = await post('/sessions/delta/prompt', { text: 'x'.repeat(300 * 1024) });
  assert.equal(big.status, 413);
  for (const headers of [{}, { authorization: 'Bearer wrong' }]) {
    const res = await mf.dispatchFetch('http://localhost/sessions/alpha', { headers });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    assert.equal((await res.json()).error, 'unauthorized');
  }
  for (const [method, path] of [['GET', '/sessions/alpha/bogus'], ['DELETE', '/sessions/alpha/nothing'], ['POST', '/sessions/alpha/bogus']]) {
    const res = await call(path, { method });
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal((await res.json()).error, 'no such route');
  }
  assert.equal((await call('/sessions/alpha/events', { method: 'DELETE' })).status, 405);
  // Only user messages: a client cannot write the model's turns or tool results.
  for (const message of [{ role: 'assistant', content: 'I said so' }, { role: 'toolResult', content: [] }, { role: 'user', content: 123 }, { role: 'user', content: [{ evil: 1 }] }]) {
    const res = await post('/sessions/alpha/steer', { message });
    assert.equal(res.status, 400, JSON.stringify(message));
  }
  assert.equal((await post('/sessions/alpha/steer', { message: { role: 'user', content: [{ type: 'text', text: 'fine' }] } })).status, 202);
  const steerUnknown = await post('/sessions/nobody/steer', { text: 'x' });
  assert.equal(steerUnknown.status, 404);
  const lastBefore = Number((await state('alpha')).lastEventId);
  const del = await call('/sessions/alpha', { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.equal((await call('/sessions/alpha')).status, 404);
  // A new session under the same id: ids go on, so an old client's Last-Event-ID skips nothing.
  await post('/sessions/alpha/prompt', { text: 'again' });
  const fresh = await events('alpha', { lastEventId: String(lastBefore) });
  assert.equal(fresh[0].type, 'agent_start');
  assert.ok(Number(fresh[0].id) > lastBefore);
});

test('a restart mid-tool: the run resumes by itself (alarm); no tool result lost or duplicated', async () => {
  gate.hold(true);
  const before = gate.calls.length;
  await post('/sessions/epsilon/prompt', { text: 'pay and weather' });
  await waitFor(() => gate.calls.length >= before + 2, 'both tools to run');
  await mf.dispose(); // the Durable Object dies with its tools mid-call
  gate.release();
  gate.hold(false);
  const asked = llm.requests.length;
  mf = start();
  // No request to the session: its alarm resumes the run, which asks the model for the answer.
  await waitFor(() => llm.requests.length > asked, 'the alarm to resume the run');
  const s = await waitFor(async () => {
    const st = await state('epsilon');
    return !st.running && st.messages.at(-1)?.role === 'assistant' && st.messages.at(-1).stopReason === 'stop' ? st : undefined;
  }, 'the resumed run to finish');
  const results = s.messages.filter((m) => m.role === 'toolResult');
  assert.deepEqual(results.map((m) => m.toolCallId).sort(), ['call_p', 'call_w'], 'one result per call');
  const pay = results.find((m) => m.toolCallId === 'call_p');
  assert.equal(pay.isError, true, 'the payment, not safe to replay, is not run again');
  assert.match(pay.content[0].text, /interrupted before completion/);
  const weather = results.find((m) => m.toolCallId === 'call_w');
  assert.equal(weather.content[0].text, 'Oslo: 18 C', 'the safe tool ran again');
  assert.equal(gate.calls.slice(before).filter((c) => c === 'call_p').length, 1, 'the payment ran once');
  assert.equal(gate.calls.slice(before).filter((c) => c === 'call_w').length, 2, 'the weather ran again');
  const all = await events('epsilon');
  const ids = all.map((e) => e.id);
  assert.equal(new Set(ids).size, ids.length, 'no id twice');
  assert.equal(all.filter((e) => e.type === 'agent_start').length, 1);
  assert.equal(all.filter((e) => e.type === 'agent_end').length, 1);
});

test('a restart mid-stream: the response is requested again and the run completes', async () => {
  const before = llm.requests.length;
  await post('/sessions/zeta/prompt', { text: 'stall now' });
  await waitFor(() => llm.stalled.length > 0, 'the stream to stall');
  await mf.dispose();
  for (const r of llm.stalled.splice(0)) r.destroy();
  mf = start();
  const s = await waitFor(async () => {
    const st = await state('zeta');
    return !st.running && st.messages.at(-1)?.role === 'assistant' ? st : undefined;
  }, 'the resumed run to finish');
  assert.deepEqual(s.messages.map((m) => m.role), ['system', 'user', 'assistant']);
  assert.equal(s.messages.at(-1).content[0].text, 'Echo: stall now');
  assert.equal(llm.requests.length - before, 2, 'asked once, cut, asked again');
  const all = await events('zeta');
  assert.equal(all.filter((e) => e.type === 'message_end' && e.data.message.role === 'assistant').length, 1);
});

test('50 concurrent sessions in one Miniflare all complete', async () => {
  const ids = Array.from({ length: 50 }, (_, i) => `many-${i}`);
  const accepted = await Promise.all(ids.map((id) => post(`/sessions/${id}/prompt`, { text: `hello ${id}` })));
  assert.ok(accepted.every((r) => r.status === 202));
  const done = await Promise.all(ids.map((id) => events(id, { timeoutMs: 60000 })));
  for (const [i, seen] of done.entries()) {
    assert.equal(seen.at(-1).type, 'agent_end');
    const s = await state(ids[i]);
    assert.equal(s.messages.at(-1).content[0].text, `Echo: hello ${ids[i]}`);
  }
});

test('the key-safe proxy: a page-side Agent streams through the Worker with streamProxy; the key stays there', async () => {
  const proxyUrl = String(await mf.ready).replace(/\/$/, '');
  const model = { id: 'm', name: 'm', api: 'openai-completions', provider: 'openai', baseUrl: 'https://attacker.invalid/v1', reasoning: false,
    input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
  const asked = llm.requests.length;
  const agent = new Agent({
    initialState: { model },
    streamFn: (m, context, options) => streamProxy(m, context, { ...options, proxyUrl, authToken: PROXY_TOKEN, headers: { authorization: 'Bearer stolen?' } }),
  });
  const events = [];
  agent.subscribe((e) => events.push(e));
  await agent.prompt('hello proxy');
  const last = agent.state.messages.at(-1);
  assert.equal(last.stopReason, 'stop', last.errorMessage);
  assert.equal(last.content[0].text, 'Echo: hello proxy');
  assert.ok(events.some((e) => e.type === 'message_update'), 'streamed');
  assert.equal(llm.requests.length, asked + 1, 'the model of the server (its baseUrl) was used');
  assert.equal(llm.requests.at(-1).headers.authorization, `Bearer ${KEY}`, 'the headers of the client are not forwarded');
  assert.ok(!JSON.stringify(events).includes(KEY));

  // A missing or wrong token, or a model the server does not allow, is refused.
  const ask = (authToken, m = model) => new Promise((resolve) => {
    const s = streamProxy(m, { messages: [{ role: 'user', content: 'x', timestamp: 1 }] }, { proxyUrl, authToken });
    s.result().then(resolve);
  });
  for (const bad of [undefined, '', 'wrong-token']) {
    const r = await ask(bad);
    assert.equal(r.stopReason, 'error');
    assert.match(r.errorMessage, /unauthorized/);
  }
  const other = await ask(PROXY_TOKEN, { ...model, id: 'expensive-model' });
  assert.equal(other.stopReason, 'error');
  assert.match(other.errorMessage, /model not allowed/);
  assert.equal(llm.requests.length, asked + 1, 'no refused request reached the model');
});

test('restarted twice while a safe tool runs, and aborted just before a restart: each finishes once; update ids stay unique', async () => {
  // Twice mid-tool: the safe tool runs three times, and its call gets one result.
  gate.hold(true);
  const before = gate.calls.length;
  await post('/sessions/eta/prompt', { text: 'weather twice' });
  const first = await events('eta', { until: (e) => e.type === 'tool_execution_update' });
  const seen = first.map((e) => e.id);
  await waitFor(() => gate.calls.length > before, 'the tool to run');
  await mf.dispose();
  mf = start();
  await waitFor(() => gate.calls.length > before + 1, 'the resumed tool to run');
  await mf.dispose();
  mf = start();
  await waitFor(() => gate.calls.length > before + 2, 'the tool to run a third time');
  gate.release();
  gate.hold(false);
  const s = await waitFor(async () => {
    const st = await state('eta');
    return !st.running && st.messages.at(-1)?.stopReason === 'stop' ? st : undefined;
  }, 'the run to finish');
  assert.deepEqual(s.messages.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId), ['call_w']);
  const rest = await events('eta', { lastEventId: seen.at(-1) });
  const updates = rest.filter((e) => e.type === 'tool_execution_update').map((e) => e.id);
  assert.ok(updates.length >= 1, 'the resumed updates reach a client that reconnects');
  assert.ok(updates.every((id) => !seen.includes(id)), `no update id given twice: ${seen} then ${updates}`);

  // An abort, then a restart before the run ended: it resumes into the abort.
  gate.hold(true);
  await post('/sessions/theta/prompt', { text: 'weather now' });
  await waitFor(() => gate.calls.length > before + 3, 'the tool to run');
  // The abort answers once the run ended; the Worker dies before that (the tool is held).
  const aborting = post('/sessions/theta/abort', {}).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));
  await mf.dispose();
  await aborting;
  gate.release();
  gate.hold(false);
  mf = start();
  const t = await waitFor(async () => {
    const st = await state('theta');
    return !st.running && st.messages.at(-1)?.role === 'assistant' && st.messages.length > 3 ? st : undefined;
  }, 'the resumed run to end');
  const result = t.messages.find((m) => m.role === 'toolResult');
  assert.ok(result, 'the call still has its one result');
  assert.equal(t.messages.filter((m) => m.role === 'toolResult').length, 1);
  assert.equal(result.content[0].text, 'Operation aborted');
  assert.equal(t.messages.at(-1).stopReason, 'aborted', 'the resumed run ended in the abort');
});

test('a client that disconnects mid-run does not stop the session', async () => {
  gate.hold(true);
  const before = gate.calls.length;
  await post('/sessions/iota/prompt', { text: 'weather while I leave' });
  const some = await events('iota', { until: (e) => e.type === 'tool_execution_start' }); // then the client goes away
  assert.equal(some.at(-1).type, 'tool_execution_start');
  await waitFor(() => gate.calls.length > before, 'the tool to run');
  gate.release();
  gate.hold(false);
  const s = await waitFor(async () => {
    const st = await state('iota');
    return !st.running && st.messages.at(-1)?.stopReason === 'stop' ? st : undefined;
  }, 'the run to finish without any client');
  assert.equal(s.messages.at(-1).content[0].text, 'Done: Oslo: 18 C');
});

test('a large transcript is stored in parts under the value limit and survives a restart byte for byte', async () => {
  const big = `big ${'x'.repeat(200 * 1024)} end`;
  await post('/sessions/kappa/prompt', { text: big });
  await events('kappa');
  const before = await state('kappa');
  assert.equal(before.messages[1].content[0].text, big);
  assert.equal(before.messages.at(-1).content[0].text, `Echo: ${big}`);
  await mf.dispose();
  mf = start();
  const after = await state('kappa');
  assert.deepEqual(after.messages, before.messages);
  const replay = await events('kappa');
  assert.equal(replay.filter((e) => e.type === 'message_end').at(-1).data.message.content[0].text, `Echo: ${big}`);
});

test('a tool call that needs approval waits across a restart: GET lists it as pending, the approval runs the tool exactly once, a second answer is a 409 (issue 33)', async () => {
  const before = gate.calls.length;
  await post('/sessions/eps/prompt', { text: 'transfer 25 EUR to 42' });
  const seen = await events('eps', { until: (e) => e.type === 'tool_execution_waiting' });
  const waiting = seen.at(-1);
  assert.deepEqual(waiting.data, { type: 'tool_execution_waiting', toolCallId: 'call_t', toolName: 'transfer', args: { to: '42', eur: 25 }, kind: 'approval', reason: 'over 10 EUR' });
  const listed = await waitFor(async () => { const s = await state('eps'); return s.pending.length === 1 && !s.pending.some((c) => c.id === 'call_w') ? s : undefined; }, 'the weather call to end');
  assert.deepEqual(listed.pending, [{ id: 'call_t', tool: 'transfer', arguments: { to: '42', eur: 25 }, kind: 'approval', reason: 'over 10 EUR' }]);
  assert.equal(listed.running, true);
  // The Worker is redeployed while the call waits.
  await mf.dispose();
  mf = start();
  const after = await state('eps');
  assert.deepEqual(after.pending.map((c) => c.id), ['call_t'], 'still pending after the restart');
  // Bad answers change nothing.
  assert.equal((await post('/sessions/eps/tool-calls/call_t/result', { content: 'x' })).status, 400);
  assert.equal((await post('/sessions/eps/tool-calls/nobody/approve', {})).status, 409);
  assert.equal((await post('/sessions/eps/tool-calls/call_t/explode', {})).status, 404);
  const [first, second] = await Promise.all([post('/sessions/eps/tool-calls/call_t/approve', {}), post('/sessions/eps/tool-calls/call_t/approve', {})]);
  assert.deepEqual([first.status, second.status].sort(), [200, 409], 'two answers racing: the first wins');
  await waitFor(async () => !(await state('eps')).running, 'the run to end');
  const end = await state('eps');
  assert.deepEqual(end.pending, []);
  const results = end.messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolCallId, m.isError, m.content[0].text]);
  assert.deepEqual(results, [['call_t', false, 'sent 25 EUR to 42'], ['call_w', false, 'Oslo: 18 C']]);
  assert.equal(gate.calls.slice(before).filter((id) => id === 'call_t').length, 1, 'the transfer ran exactly once');
  assert.match(end.messages.at(-1).content[0].text, /^Done: sent 25 EUR to 42/);
});

test('a rejection and a client tool\'s result through the session endpoints (issue 33)', async () => {
  await post('/sessions/rho/prompt', { text: 'transfer 25 EUR to 42' });
  await waitFor(async () => (await state('rho')).pending.length === 1, 'the transfer to wait');
  assert.equal((await post('/sessions/rho/tool-calls/call_t/reject', { reason: 5 })).status, 400);
  assert.equal((await post('/sessions/rho/tool-calls/call_t/reject', { reason: 'not today' })).status, 200);
  await waitFor(async () => !(await state('rho')).running, 'the run to end');
  const rejected = (await state('rho')).messages.find((m) => m.toolCallId === 'call_t');
  assert.deepEqual([rejected.isError, rejected.content[0].text], [true, 'The user rejected tool call transfer: not today It did not run.']);

  await post('/sessions/sigma/prompt', { text: 'what is the title' });
  const pending = await waitFor(async () => (await state('sigma')).pending[0], 'the client call to wait');
  assert.deepEqual(pending, { id: 'call_c', tool: 'title', arguments: {}, kind: 'client' });
  assert.equal((await post('/sessions/sigma/tool-calls/call_c/approve', {})).status, 409, 'a client call is not approved');
  assert.equal((await post('/sessions/sigma/tool-calls/call_c/result', { content: [{ type: 'text', text: 'Checkout' }] })).status, 200);
  await waitFor(async () => !(await state('sigma')).running, 'the run to end');
  const s = await state('sigma');
  assert.deepEqual(s.messages.find((m) => m.toolCallId === 'call_c').content, [{ type: 'text', text: 'Checkout' }]);
  assert.match(s.messages.at(-1).content[0].text, /^Done: Checkout/);
});

test('who may touch a session: no token and no authorize answers localhost only; authorize ties sessions to users and actions; POST mints an unguessable id; each refusal changes nothing (issue 33)', async () => {
  // Secure default: the open prefix refuses a public host, and says how to configure it.
  const publicHost = await mf.dispatchFetch('https://agents.example.com/open/x1/prompt', { method: 'POST', body: JSON.stringify({ text: 'hello' }) });
  assert.equal(publicHost.status, 401);
  assert.match((await publicHost.json()).detail, /answers only requests to localhost: pass routeSessions\(request, namespace, \{ token \}\) or \{ authorize \}/);
  assert.equal((await mf.dispatchFetch('http://localhost/open/x1')).status, 404, 'nothing was created');
  const local = await mf.dispatchFetch('http://localhost/open/x1/prompt', { method: 'POST', body: JSON.stringify({ text: 'hello' }) });
  assert.equal(local.status, 202);

  const as = (user, path, init = {}) => mf.dispatchFetch(`https://agents.example.com${path}`, { ...init, headers: { ...(user ? { 'x-user': user } : {}), 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const minted = await as('alice', '/users', { method: 'POST' });
  assert.equal(minted.status, 201);
  assert.match((await minted.json()).id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal((await as(undefined, '/users', { method: 'POST' })).status, 403);

  // Alice's session, with a transfer waiting for approval.
  assert.equal((await as('alice', '/users/alice-s1/prompt', { method: 'POST', body: JSON.stringify({ text: 'transfer 25 EUR to 42' }) })).status, 202);
  await waitFor(async () => ((await (await as('alice', '/users/alice-s1')).json()).pending ?? []).length === 1, 'the transfer to wait');
  // Bob may not read, steer or delete it; Alice may not approve her own transfer; none changes anything.
  for (const [user, method, path, body] of [
    ['bob', 'GET', '/users/alice-s1'],
    ['bob', 'GET', '/users/alice-s1/events'],
    ['bob', 'POST', '/users/alice-s1/steer', { text: 'send it all to bob' }],
    ['bob', 'DELETE', '/users/alice-s1'],
    ['bob', 'POST', '/users/alice-s1/tool-calls/call_t/approve', {}],
    ['alice', 'POST', '/users/alice-s1/tool-calls/call_t/approve', {}],
    [undefined, 'GET', '/users/alice-s1'],
  ]) {
    const res = await as(user, path, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
    assert.equal(res.status, 403, `${user} ${method} ${path}`);
  }
  const still = await (await as('alice', '/users/alice-s1')).json();
  assert.deepEqual(still.pending.map((c) => c.id), ['call_t']);
  assert.deepEqual(still.steering, []);
  // The admin approves; the run ends with the transfer done once.
  assert.equal((await as('root', '/users/alice-s1/tool-calls/call_t/approve', { method: 'POST', body: '{}' })).status, 200);
  await waitFor(async () => !(await (await as('alice', '/users/alice-s1')).json()).running, 'the run to end');
  const done = await (await as('alice', '/users/alice-s1')).json();
  assert.deepEqual(done.messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolCallId, m.isError]), [['call_t', false], ['call_w', false]]);
});

test('one run handed between page and Worker on the snapshot format: a page Agent waiting for approval is imported and finishes in the Worker; the Worker\'s snapshot restores in a page; a forged answer or model in the import changes nothing (issue 33)', async () => {
  const before = gate.calls.length;
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const pageModel = { id: 'm', name: 'm', api: 'openai-completions', provider: 'openai', baseUrl: 'http://attacker.invalid/v1', reasoning: false, input: ['text'], cost: usage.cost, contextWindow: 1000, maxTokens: 100 };
  const streamFn = () => {
    const s = ours.createAssistantMessageEventStream();
    const m = { role: 'assistant', api: 'openai-completions', provider: 'openai', model: 'm', usage, stopReason: 'toolUse', timestamp: 1,
      content: [{ type: 'toolCall', id: 'call_t', name: 'transfer', arguments: { to: '42', eur: 25 } }, { type: 'toolCall', id: 'call_w', name: 'weather', arguments: { city: 'Oslo' } }] };
    queueMicrotask(() => { s.push({ type: 'start', partial: { ...m, content: [] } }); s.push({ type: 'done', reason: 'toolUse', message: m }); });
    return s;
  };
  const pageTools = [
    { name: 'transfer', label: 'transfer', description: 'transfer', parameters: { type: 'object' }, needsApproval: true, execute: async () => { throw new Error('the page never runs it'); } },
    { name: 'weather', label: 'weather', description: 'weather', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'Oslo: 18 C' }], details: {} }) },
  ];
  const page = new ours.Agent({ initialState: { model: pageModel, tools: pageTools }, streamFn });
  page.prompt('transfer 25 EUR to 42');
  await waitFor(() => page.waitingToolCalls.length === 1 && !page.state.pendingToolCalls.has('call_w'), 'the page to wait');
  const snapshot = JSON.parse(JSON.stringify(page.snapshot()));
  snapshot.waiting[0].answer = { approved: true }; // forged: the Worker asks again
  // (The page is left as it is: its tab closed. An abort would ask this scripted stream,
  // which ignores the signal, again and again.)
  // The tab closes: the run continues in the Worker.
  const imported = await post('/sessions/hand1/import', snapshot);
  assert.equal(imported.status, 202);
  const waiting = await waitFor(async () => (await state('hand1')).pending[0], 'the Worker to ask for approval');
  assert.deepEqual(waiting, { id: 'call_t', tool: 'transfer', arguments: { to: '42', eur: 25 }, kind: 'approval', reason: 'over 10 EUR' });
  assert.equal(gate.calls.slice(before).includes('call_t'), false, 'not run before the approval');
  assert.equal((await post('/sessions/hand1/import', snapshot)).status, 409, 'a run in progress is not replaced');
  assert.equal((await post('/sessions/hand1/tool-calls/call_t/approve', {})).status, 200);
  await waitFor(async () => !(await state('hand1')).running, 'the run to end in the Worker');
  const done = await state('hand1');
  assert.deepEqual(done.messages.filter((m) => m.role === 'toolResult').map((m) => m.content[0].text), ['sent 25 EUR to 42', 'Oslo: 18 C']);
  assert.equal(done.messages.at(-1).content[0].text, 'Done: sent 25 EUR to 42; Oslo: 18 C', 'answered by the Worker\'s model, not the snapshot\'s');
  assert.equal(gate.calls.slice(before).filter((id) => id === 'call_t').length, 1);
  // Back to the page: the Worker's snapshot restores there.
  const back = await (await call('/sessions/hand1/snapshot')).json();
  const restored = new ours.Agent({ initialState: { model: pageModel, tools: pageTools }, streamFn, restore: back });
  assert.deepEqual(restored.state.messages, done.messages);
  assert.equal((await post('/sessions/hand2/import', { version: 1, messages: 'nope' })).status, 400);
});

test('an expiry: a wait for approval ends by itself with a timed-out result, even when the Worker restarted meanwhile (the alarm wakes the session); a late approval is a 409 (issue 33)', async () => {
  const before = gate.calls.length;
  const t0 = Date.now();
  await post('/sessions/tau/prompt', { text: 'confirm the order' });
  const [waiting] = (await events('tau', { until: (e) => e.type === 'tool_execution_waiting' })).slice(-1);
  const { expiresAt } = waiting.data;
  assert.ok(expiresAt >= t0 + 1500 && expiresAt < Date.now() + 1500, 'the event says when the wait ends');
  assert.deepEqual((await state('tau')).pending, [{ id: 'call_x', tool: 'confirm', arguments: { order: 7 }, kind: 'approval', expiresAt }]);
  // Redeployed while it waits: no instance holds the wait's timer any more.
  await mf.dispose();
  mf = start();
  await waitFor(async () => !(await state('tau')).running, 'the run to end when the wait expires');
  assert.ok(Date.now() >= expiresAt);
  const end = await state('tau');
  assert.deepEqual(end.pending, []);
  const result = end.messages.find((m) => m.toolCallId === 'call_x');
  assert.deepEqual([result.isError, result.content[0].text], [true, `Tool call confirm timed out waiting for approval (it expired at ${new Date(expiresAt).toISOString()}). It did not run.`]);
  assert.match(end.messages.at(-1).content[0].text, /^Done: Tool call confirm timed out/);
  assert.equal(gate.calls.slice(before).filter((id) => id === 'call_x').length, 0, 'the tool never ran');
  assert.equal((await post('/sessions/tau/tool-calls/call_x/approve', {})).status, 409);
});

test('a page attached with connectSession runs the session\'s client tools: a call that waited while no page was attached (across a restart), a tool that throws (an error result), two pages racing (one result); close() detaches (issue 33)', async () => {
  const { connectSession } = await import('pi-agent-wasm/cloudflare');
  // The page reaches the Worker through Miniflare (a browser would use its own fetch).
  const pageFetch = (u, init) => mf.dispatchFetch(u, init);
  const page = (id, tools, extra = {}) => connectSession(`http://localhost/sessions/${id}`, { tools, token: TOKEN, fetch: pageFetch, retryMs: 50, ...extra });
  const within = (promise, what) => Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), 15000))]);
  const ran = [];
  const title = (text) => ({ name: 'title', execute: async (id, args) => { ran.push([id, text, args]); return { content: [{ type: 'text', text }], details: { from: 'page' } }; } });

  // No page is attached: the call waits, and a redeploy changes nothing.
  await post('/sessions/phi/prompt', { text: 'what is the title' });
  await waitFor(async () => (await state('phi')).pending.length === 1, 'the client call to wait');
  await mf.dispose();
  mf = start();
  const seen = [];
  const one = page('phi', [title('Checkout')], { onEvent: (e) => seen.push(e.type) });
  await within(one.ready, 'the page to attach');
  await waitFor(async () => !(await state('phi')).running, 'the run to end');
  let s = await state('phi');
  assert.deepEqual(s.messages.find((m) => m.toolCallId === 'call_c').content, [{ type: 'text', text: 'Checkout' }]);
  assert.match(s.messages.at(-1).content[0].text, /^Done: Checkout/);
  assert.deepEqual(ran, [['call_c', 'Checkout', {}]], 'run once, from the pending list');
  await waitFor(() => seen.includes('agent_end'), 'the page to see the run end');
  one.close();

  // Attached before the call (to a session that exists): a tool that throws gives the call an
  // error result.
  for (const id of ['chi', 'psi']) await post(`/sessions/${id}/prompt`, { text: 'hello' });
  for (const id of ['chi', 'psi']) await waitFor(async () => !(await state(id)).running, 'the first run to end');
  const failing = page('chi', [{ name: 'title', execute: () => { throw new Error('no document in this page'); } }]);
  await within(failing.ready, 'the page to attach');
  await post('/sessions/chi/prompt', { text: 'what is the title' });
  await waitFor(async () => !(await state('chi')).running, 'the run to end');
  s = await state('chi');
  const failed = s.messages.find((m) => m.toolCallId === 'call_c');
  assert.deepEqual([failed.isError, failed.content[0].text], [true, 'no document in this page']);
  failing.close();

  // Two pages: each may run the tool, and the session keeps the first answer only.
  ran.length = 0;
  const [a, b] = [page('psi', [title('from A')]), page('psi', [title('from B')])];
  await within(Promise.all([a.ready, b.ready]), 'the pages to attach');
  await post('/sessions/psi/prompt', { text: 'what is the title' });
  await waitFor(async () => !(await state('psi')).running, 'the run to end');
  s = await state('psi');
  const results = s.messages.filter((m) => m.role === 'toolResult');
  assert.equal(results.length, 1);
  assert.ok(['from A', 'from B'].includes(results[0].content[0].text));
  assert.ok(ran.length >= 1 && ran.length <= 2);
  a.close();
  b.close();
  assert.throws(() => connectSession('http://localhost/sessions/x', { tools: [{ name: 'title' }] }), /each with a name and an execute function/);
});

test('outside tester on sessions: a slow upload acts on the session as it is when the body has arrived (an import after a prompt began is a 409; a prompt after a DELETE never sends the erased transcript); an answer racing a DELETE, a malformed call id and unknown routes get JSON 404/405; the snapshot a page gets has no headers (issue 33)', async () => {
  /** A POST whose body arrives in two parts, the second when `release` is called. */
  const slowPost = (path, body) => {
    const text = JSON.stringify(body);
    let release;
    const gateOpen = new Promise((r) => { release = r; });
    const stream = new ReadableStream({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, 5)));
        await gateOpen;
        controller.enqueue(new TextEncoder().encode(text.slice(5)));
        controller.close();
      },
    });
    const response = call(path, { method: 'POST', body: stream, duplex: 'half', headers: { 'content-type': 'application/json' } });
    return { response, release };
  };
  // An import whose body is still arriving when a prompt starts a run: refused.
  await post('/sessions/omega/prompt', { text: 'hello' });
  await waitFor(async () => !(await state('omega')).running, 'the first run to end');
  const snapshot = await (await call('/sessions/omega/snapshot')).json();
  assert.equal('headers' in snapshot.model, false, 'the snapshot a page gets has no headers (a gateway\'s token)');
  const importing = slowPost('/sessions/omega/import', snapshot);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await post('/sessions/omega/prompt', { text: 'stall omega' })).status, 202);
  importing.release();
  assert.equal((await importing.response).status, 409, 'a run began while the import was uploading');
  await post('/sessions/omega/abort', {});
  await waitFor(async () => !(await state('omega')).running, 'the run to end');

  // A prompt whose body arrives after the session was deleted: the model never sees the old transcript.
  await post('/sessions/secret/prompt', { text: 'my pin is 9876' });
  await waitFor(async () => !(await state('secret')).running, 'the first run to end');
  const prompting = slowPost('/sessions/secret/prompt', { text: 'what is my pin' });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await call('/sessions/secret', { method: 'DELETE' })).status, 200);
  const seenBefore = llm.requests.length;
  prompting.release();
  assert.equal((await prompting.response).status, 202);
  await waitFor(async () => !(await state('secret')).running, 'the run to end');
  const sent = llm.requests.slice(seenBefore).map((r) => JSON.stringify(r.body.messages));
  assert.ok(sent.length > 0 && sent.every((m) => !m.includes('9876')), 'the erased transcript never reached the model');

  // An answer racing a DELETE: JSON, not a stack trace.
  await post('/sessions/zeta/prompt', { text: 'what is the title' });
  await waitFor(async () => (await state('zeta')).pending.length === 1, 'the client call to wait');
  const answering = slowPost('/sessions/zeta/tool-calls/call_c/result', { content: [{ type: 'text', text: 'late' }] });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await call('/sessions/zeta', { method: 'DELETE' })).status, 200);
  answering.release();
  const late = await importingJson(answering.response);
  assert.equal(late.status, 404);
  assert.equal(late.body.error, 'unknown session');
  // Malformed escapes and routes that do not exist.
  await post('/sessions/zeta/prompt', { text: 'hello' });
  for (const [path, method, status] of [
    ['/sessions/zeta/tool-calls/%E0%A4%A/approve', 'POST', 404],
    ['/sessions/zeta/foo', 'POST', 404],
    ['/sessions/zeta/tool-calls/call_c/approve', 'GET', 405],
    ['/sessions/zeta/events', 'POST', 405],
  ]) {
    const r = await call(path, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    assert.equal(r.status, status, `${method} ${path}`);
    assert.equal(typeof (await r.json()).error, 'string');
  }
});

async function importingJson(response) {
  const r = await response;
  return { status: r.status, body: await r.json() };
}

test('a run handed from the Worker to a page in the middle: POST export gives the snapshot and the session lets go of its run (nothing more recorded, answers 409); the page approves and finishes the run, the tool running once, in the page (issue 33)', async () => {
  const before = gate.calls.length;
  await post('/sessions/back1/prompt', { text: 'transfer 25 EUR to 42' });
  await events('back1', { until: (e) => e.type === 'tool_execution_end' && e.data.toolCallId === 'call_w' });
  await waitFor(async () => (await state('back1')).pending.length === 1, 'the Worker to wait');
  const exported = await post('/sessions/back1/export', {});
  assert.equal(exported.status, 200);
  const snapshot = await exported.json();
  assert.equal(snapshot.position.at, 'tools', 'taken in the middle of the run');
  assert.deepEqual(snapshot.waiting.map((c) => [c.toolCallId, c.kind]), [['call_t', 'approval']]);
  assert.equal(snapshot.model.baseUrl, llm.baseUrl);
  assert.equal('headers' in snapshot.model, false, 'no gateway token leaves the Worker');
  assert.equal('headers' in snapshot.position.model, false);
  // The session let go: no run, nothing waiting, and an answer there is too late.
  const after = await state('back1');
  assert.deepEqual([after.running, after.pending], [false, []]);
  assert.equal((await post('/sessions/back1/tool-calls/call_t/approve', {})).status, 409);
  const stored = after.messages.length;
  // The page continues it, with its own tools and key (the model's address came along).
  const ran = [];
  const pageTools = [
    { name: 'transfer', label: 'transfer', description: 'transfer', parameters: { type: 'object' }, needsApproval: true, execute: async (_id, a) => { ran.push('transfer'); return { content: [{ type: 'text', text: `sent ${a.eur} EUR to ${a.to}` }], details: {} }; } },
    { name: 'weather', label: 'weather', description: 'weather', parameters: { type: 'object' }, execute: async () => { ran.push('weather'); return { content: [{ type: 'text', text: 'Oslo: 18 C' }], details: {} }; } },
  ];
  const page = new ours.Agent({ initialState: { tools: pageTools }, restore: snapshot, getApiKey: () => 'page-key' });
  assert.deepEqual(page.waitingToolCalls.map((c) => c.toolCallId), ['call_t']);
  page.approve('call_t');
  await page.resume();
  assert.deepEqual(ran, ['transfer'], 'the transfer ran once, in the page; the weather was not run again');
  assert.equal(page.state.messages.at(-1).content[0].text, 'Done: sent 25 EUR to 42; Oslo: 18 C');
  assert.equal(gate.calls.slice(before).includes('call_t'), false, 'the Worker never ran the transfer');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await state('back1')).messages.length, stored, 'the session recorded nothing after it let go');
  assert.equal((await post('/sessions/back1/export', {})).status, 200, 'an idle session exports its transcript');
});

test('outside tester, round 2: a forged position in an import is a 400 and the session goes on; a wait of MAX_SAFE_INTEGER ms waits in a session; connectSession: a result over the body limit becomes an error result, a call asked again after an export and an import is run again, a refusal rejects ready, the token replaces an Authorization header (issue 33)', async () => {
  // A forged position: refused, and the session still answers prompts.
  await post('/sessions/imp0/prompt', { text: 'transfer 25 EUR to 42' });
  await waitFor(async () => (await state('imp0')).pending.length === 1, 'the transfer to wait');
  const exported = await (await post('/sessions/imp0/export', {})).json();
  await post('/sessions/imp1/prompt', { text: 'hello' });
  await waitFor(async () => !(await state('imp1')).running, 'the first run to end');
  const forged = await post('/sessions/imp1/import', { ...exported, position: { ...exported.position, at: 'nonsense' } });
  assert.equal(forged.status, 400);
  assert.match((await forged.json()).detail, /at is not request, tools, next or done/);
  assert.equal((await post('/sessions/imp1/prompt', { text: 'hello again' })).status, 202);
  await waitFor(async () => !(await state('imp1')).running, 'the run to end');
  assert.equal((await state('imp1')).messages.at(-1).content[0].text, 'Echo: hello again');

  // A wait with no practical end: it waits (the alarm is set within what alarms take).
  await post('/sessions/vault1/prompt', { text: 'open the vault' });
  const [vault] = await waitFor(async () => { const { pending } = await state('vault1'); return pending.length === 1 ? pending : undefined; }, 'the vault to wait');
  assert.equal(vault.expiresAt, 8.64e15);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await state('vault1')).running, true);
  assert.equal((await post('/sessions/vault1/tool-calls/call_v/reject', {})).status, 200);
  await waitFor(async () => !(await state('vault1')).running, 'the run to end');

  const { connectSession } = await import('pi-agent-wasm/cloudflare');
  const statuses = [];
  const pageFetch = async (u, init) => {
    const r = await mf.dispatchFetch(u, init);
    if (init?.method === 'POST') statuses.push(r.status);
    return r;
  };
  const page = (id, tools, extra = {}) => connectSession(`http://localhost/sessions/${id}`, { tools, token: TOKEN, fetch: pageFetch, retryMs: 50, ...extra });
  // A result over the session's body limit: an error result that says so, not a call left waiting.
  await post('/sessions/big1/prompt', { text: 'hello' });
  await waitFor(async () => !(await state('big1')).running, 'the first run to end');
  const big = page('big1', [{ name: 'title', execute: () => ({ content: [{ type: 'text', text: 'x'.repeat(300 * 1024) }] }) }]);
  await big.ready;
  await post('/sessions/big1/prompt', { text: 'what is the title' });
  await waitFor(async () => !(await state('big1')).running, 'the run to end');
  const refusedResult = (await state('big1')).messages.find((m) => m.toolCallId === 'call_c');
  assert.deepEqual([refusedResult.isError, refusedResult.content[0].text], [true, 'The client\'s result was refused: it is larger than the session takes']);
  big.close();

  // A call answered too late (its run was exported meanwhile), then asked again (imported back): run again.
  await post('/sessions/re1/prompt', { text: 'hello' });
  await waitFor(async () => !(await state('re1')).running, 'the first run to end');
  let release;
  const held = new Promise((r) => { release = r; });
  let runs = 0;
  const again = page('re1', [{ name: 'title', execute: async () => { runs += 1; if (runs === 1) await held; return { content: [{ type: 'text', text: `Checkout ${runs}` }] }; } }]);
  await again.ready;
  await post('/sessions/re1/prompt', { text: 'what is the title' });
  await waitFor(() => runs === 1, 'the page to run the tool');
  const handed = await (await post('/sessions/re1/export', {})).json();
  const posted = statuses.length;
  release();
  await waitFor(() => statuses.length > posted, 'the late answer');
  assert.equal(statuses.at(-1), 409, 'too late: the session let go of the run');
  assert.equal((await post('/sessions/re1/import', handed)).status, 202);
  await waitFor(async () => !(await state('re1')).running, 'the run to end');
  assert.equal(runs, 2, 'asked again, run again');
  assert.equal((await state('re1')).messages.find((m) => m.toolCallId === 'call_c').content[0].text, 'Checkout 2');
  again.close();

  // A refused page: ready rejects. The token replaces an Authorization header given in headers.
  const refused = connectSession('http://localhost/sessions/re1', { tools: [], token: 'wrong', fetch: pageFetch, retryMs: 50 });
  await assert.rejects(refused.ready, /HTTP 401/);
  const both = page('re1', [], { headers: { Authorization: 'Bearer nope' } });
  await both.ready;
  both.close();
  assert.throws(() => connectSession('http://localhost/sessions/x', { tools: [], retryMs: 0 }), /retryMs/);
});

test('a recording session: its cassette survives a restart mid-tool, replays offline as the session delivered it, and forks into a new session (issue 34)', async () => {
  gate.hold(true);
  const before = gate.calls.length;
  assert.equal((await post('/sessions/rec-one/prompt', { text: 'pay and weather' })).status, 202);
  await waitFor(() => gate.calls.length >= before + 2, 'both tools to run');
  await mf.dispose(); // the Durable Object dies with its tools mid-call
  gate.release();
  gate.hold(false);
  mf = start();
  const done = await waitFor(async () => {
    const st = await state('rec-one');
    return !st.running && st.messages.at(-1)?.stopReason === 'stop' ? st : undefined;
  }, 'the resumed run to finish');
  const stored = (await events('rec-one')).filter((e) => !e.id.includes('.'));
  const res = await call('/sessions/rec-one/cassette');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /application\/x-ndjson/);
  const cassette = await res.text();
  assert.ok(!cassette.includes(KEY), 'the key is not in the cassette');
  assert.ok(!cassette.includes('gw-secret-1'), "the model's headers are not in the cassette");
  assert.deepEqual(readCassette(cassette).runs.map((r) => r.line.mode), ['prompt', 'resume']);
  // Offline, in this process: no model (the server would record a request), no tool (the gate).
  const asked = llm.requests.length;
  const calls = gate.calls.length;
  // The session's tools as declared (the same names, descriptions and parameters), none runnable.
  const offline = (name, replaySafe) => name === 'title'
    ? { name, label: name, description: 'the title of the page the user is on', parameters: { type: 'object' }, client: true }
    : { name, label: name, description: name, ...(replaySafe ? { replay: 'safe' } : {}), parameters: { type: 'object', properties: {}, additionalProperties: true }, execute: () => { throw new Error('ran in a replay'); } };
  const seen = [];
  const model = { id: 'm', name: 'm', api: 'openai-completions', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 8192, maxTokens: 1024 };
  const got = await replay(cassette, { initialState: { model, tools: ['weather', 'pay', 'transfer', 'title', 'confirm', 'vault'].map((n) => offline(n, n === 'weather')) }, onEvent: (e) => { if (e.type !== 'message_update' && e.type !== 'tool_execution_update') seen.push(JSON.parse(JSON.stringify(e))); } });
  assert.equal(llm.requests.length, asked);
  assert.equal(gate.calls.length, calls);
  assert.deepEqual(seen, stored.map((e) => e.data));
  assert.deepEqual(JSON.parse(JSON.stringify(got.messages)), done.messages);
  // A fork at the first tool result, with another result: a new session goes on from there.
  const at = seen.findIndex((e) => e.type === 'message_end' && e.message.role === 'toolResult');
  const index = stored.slice(0, at + 1).length;
  const target = got.events.indexOf(got.events.filter((e) => e.type !== 'message_update' && e.type !== 'tool_execution_update')[at]);
  assert.ok(index > 0 && target >= at);
  const toolCallId = seen[at].message.toolCallId;
  const forked = await post('/sessions/rec-one/fork', { at: target, change: { toolResult: { toolCallId, content: [{ type: 'text', text: 'CHANGED' }] } } });
  assert.equal(forked.status, 201, await forked.clone().text());
  const { id } = await forked.json();
  assert.match(id, /^[0-9a-f-]{36}$/);
  const after = await waitFor(async () => {
    const st = await state(id);
    return !st.running && st.messages.at(-1)?.role === 'assistant' ? st : undefined;
  }, 'the forked session to finish');
  assert.equal(after.messages.find((m) => m.toolCallId === toolCallId).content[0].text, 'CHANGED');
  assert.equal(llm.requests.length, asked + 1, 'the fork asked the model once, for the answer after the results');
  // A fork of a session that does not record, and a bad change, are refused.
  assert.equal((await post('/sessions/alpha/fork', { at: 1 })).status, 404);
  assert.equal((await post('/sessions/rec-one/fork', { at: 1, change: { nonsense: 1 } })).status, 400);
});
