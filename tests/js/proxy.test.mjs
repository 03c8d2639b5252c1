// streamProxy (spec L-161..L-163) against pi-agent-core 1.6.0's, behind a realistic proxy
// that runs pi-ai's streamSimple against a scripted LLM: text, thinking, several streamed
// tool calls, a length stop, an upstream error, a 401 and aborts. The requests and every
// event, partial included, must equal pi's. Then the agent loop and the Agent class over
// streamProxy, in Node and in Chromium. Hostile servers: proxy-hostile.test.mjs; hostile
// fetches and arguments: proxy-fetch.test.mjs; the seeded fuzz: proxy-fuzz.test.mjs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStaticServer, launchChromium } from './helpers.mjs';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, LLM_KEY, startLlmServer, startProxyServer, startRawServer } from './shared/proxy-server.mjs';
import { normalize, runProxy, assertSameRun, waitFor } from './shared/proxy-run.mjs';
import { model, context, calc } from './shared/proxy-fixtures.mjs';

const llm = await startLlmServer();
const proxy = await startProxyServer({ llmBaseUrl: llm.baseUrl });
const wholeProxy = await startProxyServer({ llmBaseUrl: llm.baseUrl, whole: true });
const servers = [llm, proxy, wholeProxy];
after(() => Promise.all(servers.map((s) => s.close())));

// Every option pi serialises, and some it must not send (the key, the signal, the token).
const options = (proxyUrl, extra = {}) => ({
  proxyUrl, authToken: PROXY_TOKEN, apiKey: 'client-key-never-sent', temperature: 0.2, samplingParams: { top_p: 0.9 },
  maxTokens: 300, reasoning: 'low', cacheRetention: 'short', sessionId: 'session-1', disableContinuation: true,
  headers: { 'x-team': 'blue' }, metadata: { user_id: 'u1' }, transport: 'sse', thinkingBudgets: { low: 512 },
  maxRetryDelayMs: 1000, signal: new AbortController().signal, somethingElse: 'ignored', ...extra,
});

/** The same call through both implementations against `server`; returns both runs and the
 * requests each sent. */
async function both(server, scenario, extra, runOptions) {
  const results = {};
  for (const [name, impl] of [['ours', ours.streamProxy], ['pi', pi.streamProxy]]) {
    const before = server.requests.length;
    const run = await runProxy(impl, model, context(scenario), options(server.url, extra?.()), runOptions?.());
    results[name] = { ...run, requests: server.requests.slice(before) };
  }
  return results;
}

for (const scenario of ['text', 'thinking', 'calls', 'length']) {
  test(`realistic proxy, ${scenario}: requests, events and partials equal pi's (L-161, L-162)`, async () => {
    const { ours: o, pi: p } = await both(proxy, scenario);
    assertSameRun(o, p);
    assert.equal(o.requests.length, 1);
    const request = o.requests[0];
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/api/stream');
    assert.equal(request.headers.authorization, `Bearer ${PROXY_TOKEN}`);
    assert.equal(request.headers['content-type'], 'application/json');
    const body = JSON.parse(request.body);
    assert.deepEqual(Object.keys(body), ['model', 'context', 'options']);
    assert.deepEqual(Object.keys(body.options), ['temperature', 'samplingParams', 'maxTokens', 'reasoning', 'cacheRetention', 'sessionId',
      'disableContinuation', 'headers', 'metadata', 'transport', 'thinkingBudgets', 'maxRetryDelayMs']);
    assert.ok(!request.body.includes('client-key-never-sent') && !request.body.includes(PROXY_TOKEN));
    // The run is real: pi-ai called the LLM with the server's key (never the client's) and
    // decoded its answer behind the proxy.
    assert.equal(llm.requests.at(-1).headers.authorization, `Bearer ${LLM_KEY}`);
    assert.equal(llm.requests.at(-1).body.temperature, 0.2);
    assert.equal(o.result.stopReason, { calls: 'toolUse', length: 'length' }[scenario] ?? 'stop');
    assert.ok(o.pushed.filter((e) => e.type.endsWith('_delta')).length > 3);
    if (scenario === 'calls') {
      const calls = o.result.content.filter((b) => b.type === 'toolCall');
      assert.deepEqual(calls.map((c) => c.id), ['call_a', 'call_bb', 'call_ccc']);
      assert.deepEqual(calls[1].arguments, { city: '東京', nested: { deep: [1, { x: 'y"z\\' }] } });
      // Arguments grew delta by delta in the partials, as pi shows them.
      const seen = new Set(o.pushed.filter((e) => e.type === 'toolcall_delta').map((e) => JSON.stringify(e.partial.content[e.contentIndex].arguments)));
      assert.ok(seen.size > 10);
      assert.equal(o.result.content[0].type, 'thinking');
      assert.equal(o.result.content[0].thinkingSignature, 'reasoning_content');
    }
    assert.equal(o.result.usage.input, 21);
  });
}

test('realistic proxy, upstream unreachable: the error event it forwards is pi\'s', async () => {
  const dead = await startProxyServer({ upstream: 'http://127.0.0.1:9/v1' });
  servers.push(dead);
  const { ours: o, pi: p } = await both(dead, 'text');
  assertSameRun(o, p);
  assert.equal(o.result.stopReason, 'error');
  assert.match(o.result.errorMessage, /connect|Connection/i);
});

test('realistic proxy, 401 for a wrong token: pi\'s "Proxy error: <body.error>" (L-163)', async () => {
  const { ours: o, pi: p } = await both(proxy, 'text', () => ({ authToken: 'wrong-token' }));
  assertSameRun(o, p);
  assert.equal(o.result.errorMessage, 'Proxy error: Unauthorized');
  assert.equal(o.result.stopReason, 'error');
});

test('abort before the request: no request is sent; pi\'s aborted message', async () => {
  const aborted = () => {
    const c = new AbortController();
    c.abort();
    return { signal: c.signal };
  };
  const { ours: o, pi: p } = await both(proxy, 'text', aborted);
  assertSameRun(o, p);
  assert.equal(o.requests.length, 0);
  assert.equal(o.result.stopReason, 'aborted');
  assert.equal(o.result.errorMessage, 'This operation was aborted');
});

test('abort while the server streams: both end "aborted" with the same content, and the server sees the client go', async () => {
  const stalling = await startProxyServer({ llmBaseUrl: llm.baseUrl, stallAfter: 4 });
  servers.push(stalling);
  let controller;
  const { ours: o, pi: p } = await both(
    stalling,
    'text',
    () => {
      controller = new AbortController();
      return { signal: controller.signal };
    },
    // The 4th event is the last before the server stalls: abort on it.
    () => ({ onEvent: (e) => { if (e.type === 'text_delta' && e.partial.content[0].text.length > 5) controller.abort(); } }),
  );
  assertSameRun(o, p);
  assert.equal(o.result.stopReason, 'aborted');
  assert.equal(o.result.errorMessage, 'Request aborted by user');
  assert.ok(o.result.content[0].text.length > 5);
  await waitFor(() => stalling.closed.length === 2);
});

test('abort with a reason while waiting for the response: the reason is the message, as with pi', async () => {
  const slow = await startRawServer(async () => {}); // never answers
  servers.push(slow);
  for (const impl of [ours.streamProxy, pi.streamProxy]) {
    const controller = new AbortController();
    const stream = impl(model, context('text'), { proxyUrl: slow.url, authToken: PROXY_TOKEN, signal: controller.signal });
    await waitFor(() => slow.requests.length > 0);
    controller.abort(new Error('user pressed stop'));
    const result = await stream.result();
    assert.equal(result.stopReason, 'aborted');
    assert.equal(result.errorMessage, 'user pressed stop');
    slow.requests.length = 0;
  }
});

// ---------------------------------------------------------------------------------------
// The loop and the Agent over streamProxy.

async function loopRun(lib, server) {
  const events = [];
  const before = server.requests.length;
  const streamFn = (m, c, o) => lib.streamProxy(m, c, { ...o, proxyUrl: server.url, authToken: PROXY_TOKEN });
  const messages = await lib.runAgentLoop(
    [{ role: 'user', content: 'scenario:tools what are 17*23 and 6*7?', timestamp: 1 }],
    { systemPrompt: 'Be terse.', messages: [], tools: [calc] },
    { model, convertToLlm: (m) => m, reasoning: 'low' },
    (e) => { events.push(normalize(e)); },
    undefined,
    streamFn,
  );
  return { events, messages: normalize(messages), requests: server.requests.slice(before).map(sameClock) };
}

/** A request of a loop run, with the clock values in its transcript normalised (and so its
 * length). */
function sameClock({ headers, body, ...rest }) {
  const { 'content-length': _length, ...others } = headers;
  return { ...rest, headers: others, body: normalize(JSON.parse(body)) };
}

test('runAgentLoop with streamProxy: a tool-using run traces exactly as pi\'s loop with pi\'s streamProxy', async () => {
  const o = await loopRun(ours, wholeProxy);
  const p = await loopRun(pi, wholeProxy);
  assert.deepEqual(o.events, p.events);
  assert.deepEqual(o.messages, p.messages);
  assert.deepEqual(o.requests, p.requests);
  assert.deepEqual(o.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
  assert.equal(o.messages.at(-1).content[0].text, 'Results: 391 | 42 — fertig ✓');
  assert.equal(o.requests.length, 2);
});

test('runAgentLoop with streamProxy over irregular chunks: the same run, whatever the reads', async () => {
  const o = await loopRun(ours, proxy);
  const p = await loopRun(pi, proxy);
  // The shared partial's state at a listener call depends on how the body was read; the
  // events themselves, the messages and the requests do not.
  const shape = (events) => events.map((e) => (e.type === 'message_update' ? { ...e.assistantMessageEvent, partial: undefined } : e.type));
  assert.deepEqual(shape(o.events), shape(p.events));
  assert.deepEqual(o.messages, p.messages);
  assert.deepEqual(o.requests, p.requests);
});

test('Agent with streamProxy as its streamFn: events and state equal pi\'s Agent', async () => {
  const run = async (lib) => {
    const events = [];
    const agent = new lib.Agent({
      initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
      streamFn: (m, c, o) => lib.streamProxy(m, c, { ...o, proxyUrl: wholeProxy.url, authToken: PROXY_TOKEN }),
    });
    agent.subscribe((e) => { events.push(normalize(e)); });
    await agent.prompt('scenario:tools what are 17*23 and 6*7?');
    return { events, messages: normalize(agent.state.messages), error: agent.state.errorMessage };
  };
  const o = await run(ours);
  const p = await run(pi);
  assert.deepEqual(o, p);
  assert.equal(o.messages.at(-1).content[0].text, 'Results: 391 | 42 — fertig ✓');
});

test('in Chromium (browser entry): the Agent over streamProxy runs the tool conversation as in Node', async () => {
  const gateway = await startProxyServer({ llmBaseUrl: llm.baseUrl, basePath: '/gw' });
  // The page's own origin forwards /gw/ to the proxy (pages may not call another loopback port).
  const site = await startStaticServer(undefined, { proxy: { '/gw/': gateway.url } });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    const html = `<!doctype html>
<meta charset="utf-8">
<script type="importmap">{ "imports": { "pi-agent-wasm": "/pkg/browser.js" } }</script>
<script type="module">
  import { Agent, streamProxy } from 'pi-agent-wasm';
  const model = ${JSON.stringify(model)};
  const calc = { name: 'calc', label: 'Calculator', description: 'Multiplies a*b',
    parameters: ${JSON.stringify(calc.parameters)},
    execute: async (_id, { a, b }) => ({ content: [{ type: 'text', text: String(a * b) }], details: { a, b } }) };
  const agent = new Agent({
    initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
    streamFn: (m, c, o) => streamProxy(m, c, { ...o, proxyUrl: location.origin + '/gw', authToken: ${JSON.stringify(PROXY_TOKEN)} }),
  });
  const types = [];
  agent.subscribe((e) => { types.push(e.type === 'message_update' ? e.assistantMessageEvent.type : e.type); });
  agent.prompt('scenario:tools what are 17*23 and 6*7?').then(
    () => { window.__run = { messages: JSON.parse(JSON.stringify(agent.state.messages)), types }; },
    (e) => { window.__run = { error: String(e) }; });
</script>`;
    await page.route(`${site.url}/__proxy.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: html }));
    await page.goto(`${site.url}/__proxy.html`);
    const r = await page.waitForFunction(() => window.__run, null, { timeout: 20000 }).then((h) => h.jsonValue());
    assert.deepEqual(problems, []);
    assert.equal(r.error, undefined);
    // The same conversation in Node, through the same kind of proxy.
    const events = [];
    const agent = new ours.Agent({
      initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
      streamFn: (m, c, o) => ours.streamProxy(m, c, { ...o, proxyUrl: proxy.url, authToken: PROXY_TOKEN }),
    });
    agent.subscribe((e) => { events.push(e.type === 'message_update' ? e.assistantMessageEvent.type : e.type); });
    await agent.prompt('scenario:tools what are 17*23 and 6*7?');
    assert.deepEqual(normalize(r.messages), normalize(agent.state.messages));
    assert.deepEqual(r.types, events);
    assert.equal(r.messages.at(-1).content[0].text, 'Results: 391 | 42 — fertig ✓');
    assert.equal(gateway.requests.length, 2);
  } finally {
    await browser.close();
    await site.close();
    await gateway.close();
  }
});
