// streamProxy (spec L-161..L-163) against pi-agent-core 1.6.0's, side by side:
// - a realistic proxy server (pi-ai's streamSimple behind it, against a scripted LLM) with
//   text, thinking, several streamed tool calls, a length stop, an upstream error and aborts:
//   the requests and every event, partial included, must equal pi's;
// - the agent loop and the Agent class over streamProxy: traces equal to pi's;
// - hostile servers and fetches: pi's outcome where pi is sane, else ours is checked on its
//   own and the comment says what pi does;
// - a seeded fuzz of damaged bodies with invariants, which pi is shown to break.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { spawnSync } from 'node:child_process';
import { repoRoot, startStaticServer, launchChromium } from './helpers.mjs';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, LLM_KEY, startLlmServer, startProxyServer, startRawServer, writeInChunks, sse } from './shared/proxy-server.mjs';
import { normalize, runProxy, withFetch, bodyFetch, faultyFetch } from './shared/proxy-run.mjs';
import { fuzzCase, invariants, argumentText, USAGE } from './shared/proxy-fuzz.mjs';

const llm = await startLlmServer();
const proxy = await startProxyServer({ llmBaseUrl: llm.baseUrl });
const wholeProxy = await startProxyServer({ llmBaseUrl: llm.baseUrl, whole: true });
const servers = [llm, proxy, wholeProxy];
after(() => Promise.all(servers.map((s) => s.close())));

const model = {
  id: 'local-model', name: 'Local', api: 'openai-completions', provider: 'local', baseUrl: 'http://llm.invalid/v1',
  reasoning: true, input: ['text'], cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 4096,
};
const lookup = {
  name: 'lookup', label: 'Lookup', description: 'Looks a city up',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const context = (scenario) => ({
  systemPrompt: 'Be terse.',
  messages: [{ role: 'user', content: `scenario:${scenario} go`, timestamp: 1 }],
  tools: [lookup],
});
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

function assertSameRun(o, p) {
  assert.deepEqual(normalize(o.pushed), normalize(p.pushed), 'events as pushed');
  assert.deepEqual(o.consumed, p.consumed, 'events as consumed');
  assert.deepEqual(normalize(o.result), normalize(p.result), 'final message');
  assert.deepEqual(o.requests, p.requests, 'requests (method, URL, headers, body)');
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
    // The run is real: pi-ai decoded the LLM's answer behind the proxy.
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

async function waitFor(predicate, ms = 3000) {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

// ---------------------------------------------------------------------------------------
// The loop and the Agent over streamProxy.

const calc = {
  name: 'calc', label: 'Calculator', description: 'Multiplies a*b',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => ({ content: [{ type: 'text', text: String(a * b) }], details: { a, b } }),
};

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

// ---------------------------------------------------------------------------------------
// Hostile servers. Each runs both implementations against a scripted raw server.

const ev = {
  start: { type: 'start' },
  textStart: { type: 'text_start', contentIndex: 0 },
  delta: (delta, contentIndex = 0) => ({ type: 'text_delta', contentIndex, delta }),
  textEnd: { type: 'text_end', contentIndex: 0 },
  done: { type: 'done', reason: 'stop', usage: USAGE },
};
const HELLO = [ev.start, ev.textStart, ev.delta('Hello'), ev.delta(', wörld 😀'), ev.textEnd, ev.done];

/** Both implementations against a raw server scripted by `handler`; `extra` adds options. */
async function bothRaw(handler, extra = {}) {
  const server = await startRawServer(handler);
  try {
    const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN, ...extra });
    const p = await runProxy(pi.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN, ...extra });
    return { o, p, server };
  } finally {
    await server.close();
  }
}

const streamed = (text, { sizes = [7], type = 'text/event-stream', end = true } = {}) => async (req, res) => {
  res.writeHead(200, { 'content-type': type });
  await writeInChunks(res, Buffer.from(text), sizes);
  if (end) res.end();
};
const answer = (status, type, body) => (req, res) => {
  res.writeHead(status, { 'content-type': type }).end(body);
};

/** The runs with the final errorMessage set aside: where only the wording differs. */
function assertSameButMessage(o, p) {
  const strip = (run) => {
    const pushed = normalize(run.pushed);
    if (pushed.at(-1)?.type === 'error') delete pushed.at(-1).error.errorMessage;
    const result = normalize(run.result);
    delete result.errorMessage;
    return { pushed, result, consumed: run.consumed };
  };
  assert.deepEqual(strip(o), strip(p));
}

test('well-formed stream in 1-byte writes (UTF-8 split everywhere): equal to pi', async () => {
  const { o, p } = await bothRaw(streamed(sse(HELLO), { sizes: [1] }));
  assertSameRun({ ...o, requests: [] }, { ...p, requests: [] });
  assert.equal(o.result.content[0].text, 'Hello, wörld 😀');
});

test('CRLF line ends: equal to pi; CR-only line ends: read (pi reads nothing but fails)', async () => {
  const crlf = await bothRaw(streamed(sse(HELLO, '\r\n'), { sizes: [3, 1, 5] }));
  assertSameRun({ ...crlf.o, requests: [] }, { ...crlf.p, requests: [] });
  const lf = await bothRaw(streamed(sse(HELLO)));
  const cr = await bothRaw(streamed(sse(HELLO, '\r'), { sizes: [3, 1, 5] }));
  assert.deepEqual(normalize(cr.o.pushed), normalize(lf.o.pushed));
  // pi splits on LF only: the whole body is one line whose JSON does not parse.
  assert.equal(cr.p.result.stopReason, 'error');
  assert.match(cr.p.result.errorMessage, /JSON/);
});

test('"data:" without the space (valid SSE): read; pi skips every line and fails', async () => {
  const text = sse(HELLO).replaceAll('data: ', 'data:');
  const { o, p } = await bothRaw(streamed(text));
  const lf = await bothRaw(streamed(sse(HELLO)));
  assert.deepEqual(normalize(o.pushed), normalize(lf.o.pushed));
  assert.equal(p.result.errorMessage, 'Connection closed by proxy server before the response completed');
});

test('a stream that ends without done/error: pi\'s error (L-163)', async () => {
  const { o, p } = await bothRaw(streamed(sse(HELLO.slice(0, 4))));
  assertSameRun({ ...o, requests: [] }, { ...p, requests: [] });
  assert.equal(o.result.errorMessage, 'Connection closed by proxy server before the response completed');
  assert.equal(o.result.content[0].text, 'Hello, wörld 😀');
});

test('body cut mid-event: the cut is named (pi reports a JSON syntax error); same events', async () => {
  const text = sse(HELLO.slice(0, 3)) + 'data: {"type":"text_delta","contentIndex":0,"del';
  const { o, p } = await bothRaw(streamed(text));
  assertSameButMessage(o, p);
  assert.equal(o.result.errorMessage, 'Connection closed by proxy server before the response completed: the last event was cut off');
  assert.match(p.result.errorMessage, /JSON/);
  assert.equal(o.result.content[0].text, 'Hello');
});

test('connection reset mid-body: the message says reading failed and why (pi: "terminated")', async () => {
  const { o, p } = await bothRaw(async (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(HELLO.slice(0, 3)));
    await new Promise((r) => setTimeout(r, 20));
    res.socket.destroy();
  });
  assertSameButMessage(o, p);
  assert.equal(p.result.errorMessage, 'terminated');
  assert.match(o.result.errorMessage, /^Reading the proxy response failed: terminated \(.+\)$/);
});

test('garbled JSON mid-stream: ends with an error naming the invalid event; same events as pi', async () => {
  const text = sse([ev.start, ev.textStart, ev.delta('Hi')]) + 'data: {"type":"text_delta",contentIndex:0}\n\n' + sse([ev.delta('never'), ev.done]);
  const { o, p } = await bothRaw(streamed(text));
  assertSameButMessage(o, p);
  assert.match(o.result.errorMessage, /^Invalid JSON in proxy event: .*JSON/);
  assert.equal(o.result.content[0].text, 'Hi');
});

test('non-2xx with an HTML page: pi\'s "Proxy error: <status> <statusText>"', async () => {
  const { o, p } = await bothRaw(answer(502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>'));
  assertSameRun({ ...o, requests: [] }, { ...p, requests: [] });
  assert.equal(o.result.errorMessage, 'Proxy error: 502 Bad Gateway');
});

test('non-2xx with a JSON error object: its message (pi: "[object Object]")', async () => {
  const { o, p } = await bothRaw(answer(429, 'application/json', JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit' } })));
  assert.equal(o.result.errorMessage, 'Proxy error: Rate limit reached');
  assert.equal(p.result.errorMessage, 'Proxy error: [object Object]');
  assertSameButMessage(o, p);
});

test('non-2xx with a plain-text body: the text is quoted after the status (pi drops it)', async () => {
  const { o, p } = await bothRaw(answer(503, 'text/plain', 'upstream connect error or disconnect/reset before headers\n'));
  assert.equal(o.result.errorMessage, 'Proxy error: 503 Service Unavailable: upstream connect error or disconnect/reset before headers');
  assert.equal(p.result.errorMessage, 'Proxy error: 503 Service Unavailable');
});

test('abort while reading an error body: the abort is the message (pi: the status, with stopReason "aborted")', async () => {
  const stalled = await startRawServer((req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.write('partial error te');
  });
  try {
    for (const [impl, message] of [[ours.streamProxy, 'This operation was aborted'], [pi.streamProxy, 'Proxy error: 500 Internal Server Error']]) {
      const controller = new AbortController();
      const stream = impl(model, context('text'), { proxyUrl: stalled.url, authToken: PROXY_TOKEN, signal: controller.signal });
      setTimeout(() => controller.abort(), 100);
      const result = await stream.result();
      assert.equal(result.stopReason, 'aborted');
      assert.equal(result.errorMessage, message);
    }
  } finally {
    await stalled.close();
  }
});

test('an error body that echoes the token: redacted (pi puts the token in the message)', async () => {
  const { o, p } = await bothRaw((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `Token ${req.headers.authorization.slice(7)} is expired` }));
  });
  assert.equal(o.result.errorMessage, 'Proxy error: Token [redacted] is expired');
  assert.ok(!JSON.stringify(o.pushed).includes(PROXY_TOKEN));
  assert.ok(p.result.errorMessage.includes(PROXY_TOKEN));
});

test('a server error event that names the token or has no message: redacted / a message (pi: as sent / undefined)', async () => {
  const leak = await bothRaw(streamed(sse([ev.start, { type: 'error', reason: 'error', errorMessage: `bad key ${PROXY_TOKEN}`, usage: USAGE }])));
  assert.equal(leak.o.result.errorMessage, 'bad key [redacted]');
  assert.ok(leak.p.result.errorMessage.includes(PROXY_TOKEN));
  const bare = await bothRaw(streamed(sse([ev.start, { type: 'error', reason: 'error', usage: USAGE }])));
  assert.equal(bare.o.result.errorMessage, 'The proxy server reported an error without a message');
  assert.equal(bare.p.result.errorMessage, undefined);
  assertSameButMessage(bare.o, bare.p);
});

test('a 200 that is not an event stream: said so, with what it was (pi: "Connection closed ...")', async () => {
  const html = await bothRaw(answer(200, 'text/html', '<!doctype html><title>Sign in</title>'));
  assert.equal(html.o.result.errorMessage, 'The proxy response is not an event stream (content-type text/html): <!doctype html><title>Sign in</title>');
  assert.equal(html.p.result.errorMessage, 'Connection closed by proxy server before the response completed');
  const json = await bothRaw(answer(200, 'application/json', JSON.stringify({ error: 'model not allowed for this account' })));
  assert.equal(json.o.result.errorMessage, 'Proxy error: model not allowed for this account');
  const empty = await bothRaw((req, res) => { res.writeHead(200).end(); });
  assert.match(empty.o.result.errorMessage, /^The proxy response is empty \(status 200/);
  // An event stream with only comments is pi's case: it closed before completing.
  const comments = await bothRaw(streamed(': ping\n\n: ping\n\n'));
  assertSameRun({ ...comments.o, requests: [] }, { ...comments.p, requests: [] });
  for (const run of [html.o, json.o, empty.o, comments.o]) assert.equal(run.result.stopReason, 'error');
});

test('done without usage: the usage stays zeros (pi sets it to undefined) and the loop runs on', async () => {
  const text = sse([ev.start, ev.textStart, ev.delta('ok'), ev.textEnd, { type: 'done', reason: 'stop' }]);
  const { o, p } = await bothRaw(streamed(text));
  assert.equal(p.result.usage, undefined);
  assert.deepEqual(o.result.usage, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
  const server = await startRawServer(streamed(text));
  try {
    const messages = await ours.runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [] },
      { model, convertToLlm: (m) => m }, () => {}, undefined, (m, c, opts) => ours.streamProxy(m, c, { ...opts, proxyUrl: server.url, authToken: PROXY_TOKEN }));
    assert.equal(messages.at(-1).stopReason, 'stop');
    assert.equal(messages.at(-1).usage.input, 0);
  } finally {
    await server.close();
  }
});

test('a delta for a block that never started: pi\'s error, same events', async () => {
  const { o, p } = await bothRaw(streamed(sse([ev.start, ev.delta('orphan', 0), ev.done])));
  assertSameRun({ ...o, requests: [] }, { ...p, requests: [] });
  assert.equal(o.result.errorMessage, 'Received text_delta for non-text content');
});

test('toolcall_end for a call that never started: an error (pi silently drops the call)', async () => {
  const call = { type: 'toolCall', id: 'c1', name: 'lookup', arguments: { city: 'Oslo' } };
  const { o, p } = await bothRaw(streamed(sse([ev.start, { type: 'toolcall_end', contentIndex: 0, toolCall: call }, { type: 'done', reason: 'toolUse', usage: USAGE }])));
  assert.equal(o.result.stopReason, 'error');
  assert.equal(o.result.errorMessage, 'Received toolcall_end for non-toolCall content');
  // pi ends "toolUse" with no tool call in the message.
  assert.equal(p.result.stopReason, 'toolUse');
  assert.equal(p.result.content.length, 0);
});

test('a start past the end of content: an error (pi leaves holes in content)', async () => {
  const { o, p } = await bothRaw(streamed(sse([ev.start, { type: 'text_start', contentIndex: 2 }, ev.delta('x', 2), { type: 'text_end', contentIndex: 2 }, ev.done])));
  assert.equal(o.result.errorMessage, 'Received text_start for content index 2, but the message has 0 blocks');
  assert.equal(o.result.content.length, 0);
  assert.equal(p.result.stopReason, 'stop');
  assert.equal(p.live.content[0], undefined);
  assert.equal(p.live.content.length, 3);
});

test('events after done, connection held open: the response is released at once (pi holds it until the server closes)', async () => {
  let openSockets = 0;
  const server = await startRawServer(async (req, res) => {
    openSockets += 1;
    res.on('close', () => { openSockets -= 1; });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(HELLO) + 'data: not json, after done\n\n');
  });
  try {
    const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN });
    assert.equal(o.result.stopReason, 'stop');
    await waitFor(() => openSockets === 0);
    // pi: the stream is done but its reader keeps the response open, and the late garbage
    // rewrites the final message it already returned.
    const p = await runProxy(pi.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN });
    assert.equal(p.pushed.find((e) => e.type === 'done').message.stopReason, 'stop');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(openSockets, 1);
    assert.equal(p.live.stopReason, 'error');
    assert.equal(o.live.stopReason, 'stop');
  } finally {
    await server.close();
  }
});

test('after the terminal event the abort listener is gone (pi keeps it while the body stays open)', async () => {
  const chunks = [new TextEncoder().encode(sse(HELLO))];
  for (const [impl, listeners] of [[ours.streamProxy, 0], [pi.streamProxy, 1]]) {
    const controller = new AbortController();
    // A fetch that adds no listener of its own, and a body that never ends.
    const run = await withFetch(bodyFetch(chunks, undefined, { hold: true }), () => runProxy(impl, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN, signal: controller.signal }));
    assert.equal(run.result.stopReason, 'stop');
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(getEventListeners(controller.signal, 'abort').length, listeners);
  }
});

test('huge deltas over HTTP: a 3 MB text delta and 1 MB of tool arguments, equal to pi', async () => {
  const big = 'ä'.repeat(1.5 * 1024 * 1024);
  const args = { blob: 'x'.repeat(1024 * 1024) };
  const events = [ev.start, ev.textStart, ev.delta(big), ev.textEnd,
    { type: 'toolcall_start', contentIndex: 1, id: 'c1', toolName: 'lookup' },
    { type: 'toolcall_delta', contentIndex: 1, delta: JSON.stringify(args) },
    { type: 'toolcall_end', contentIndex: 1, toolCall: { type: 'toolCall', id: 'c1', name: 'lookup', arguments: args } },
    { type: 'done', reason: 'toolUse', usage: USAGE }];
  const { o, p } = await bothRaw(streamed(sse(events), { sizes: [65536, 333, 7] }));
  assert.equal(o.result.content[0].text, big);
  assert.deepEqual(o.result.content[1].arguments, args);
  assert.deepEqual(normalize(o.result), normalize(p.result));
  assert.deepEqual(o.consumed, p.consumed);
});

test('huge delta in small reads stays linear: 8 MB in 4 KB reads in well under 3 s (pi: about 8 s, quadratic)', async () => {
  const big = 'x'.repeat(8 * 1024 * 1024);
  const bytes = new TextEncoder().encode(sse([ev.start, ev.textStart, ev.delta(big), ev.textEnd, ev.done]));
  const chunks = [];
  for (let i = 0; i < bytes.length; i += 4096) chunks.push(bytes.subarray(i, i + 4096));
  const started = performance.now();
  const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, fetch: bodyFetch(chunks) }, { timeout: 20000 });
  const ms = performance.now() - started;
  assert.equal(o.result.content[0].text.length, big.length);
  assert.ok(ms < 3000, `took ${Math.round(ms)} ms`);
});

// ---------------------------------------------------------------------------------------
// Hostile fetches, timeouts and arguments.

test('stalled server with timeoutMs: ends with a timeout error instead of hanging (pi hangs until aborted)', async () => {
  const silent = await startRawServer(() => {}); // never answers
  const headersOnly = await startRawServer((req, res) => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.write(sse([ev.start])); });
  try {
    const a = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: silent.url, authToken: PROXY_TOKEN, timeoutMs: 150 });
    assert.equal(a.result.errorMessage, 'Request timed out: no response for 150 ms');
    const b = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: headersOnly.url, authToken: PROXY_TOKEN, timeoutMs: 150 });
    assert.equal(b.result.errorMessage, 'Request timed out: no data for 150 ms');
    assert.deepEqual(b.consumed.map((e) => e.type), ['start', 'error']);
    for (const run of [a, b]) assert.equal(run.result.stopReason, 'error');
  } finally {
    await Promise.all([silent.close(), headersOnly.close()]);
  }
});

test('timeoutMs bounds each wait, not the whole response; an out-of-range value means none', async () => {
  // 8 events, 40 ms apart: 280 ms in all, never 150 ms without data.
  const slow = await startRawServer(async (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of [...HELLO.slice(0, 3), ev.delta(' a'), ev.delta(' b'), ev.delta(' c'), ev.textEnd, ev.done]) {
      res.write(sse([e]));
      await new Promise((r) => setTimeout(r, 40));
    }
    res.end();
  });
  try {
    for (const timeoutMs of [150, Infinity, 1e12, -1, 'soon']) {
      const run = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: slow.url, authToken: PROXY_TOKEN, timeoutMs });
      assert.equal(run.result.stopReason, 'stop', String(timeoutMs));
      assert.equal(run.result.content[0].text, 'Hello a b c');
    }
  } finally {
    await slow.close();
  }
});

test('a fetch that ignores the signal and never settles: abort still ends the stream (pi hangs)', async () => {
  const controller = new AbortController();
  const neverFetch = () => new Promise(() => {});
  const stream = ours.streamProxy(model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, signal: controller.signal, fetch: neverFetch });
  setTimeout(() => controller.abort(), 20);
  const result = await stream.result();
  assert.equal(result.stopReason, 'aborted');
  assert.equal(result.errorMessage, 'This operation was aborted');
});

test('a body reader that ignores cancel: abort during the stream still ends it (pi hangs)', async () => {
  const controller = new AbortController();
  const stuckBody = {
    [Symbol.asyncIterator]() {
      let sent = false;
      return { next: () => (sent ? new Promise(() => {}) : ((sent = true), Promise.resolve({ done: false, value: new TextEncoder().encode(sse([ev.start, ev.textStart, ev.delta('partial')])) }))) };
    },
  };
  const fetch = async () => ({ status: 200, ok: true, headers: new Headers({ 'content-type': 'text/event-stream' }), body: stuckBody });
  const run = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, signal: controller.signal, fetch },
    { onEvent: (e) => { if (e.type === 'text_delta') controller.abort(); } });
  assert.equal(run.result.stopReason, 'aborted');
  assert.equal(run.result.errorMessage, 'Request aborted by user');
  assert.equal(run.result.content[0].text, 'partial');
});

test('a fetch that throws synchronously: pi\'s error event with its message', async () => {
  const throwing = () => { throw new TypeError('fetch is disabled here'); };
  const o = await withFetch(throwing, () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }));
  const p = await withFetch(throwing, () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }));
  // pi pushes its error before streamProxy returns (so the push spy misses it); compare what
  // a consumer sees.
  assert.deepEqual(o.consumed, p.consumed);
  assert.deepEqual(normalize(o.result), normalize(p.result));
  assert.equal(o.result.errorMessage, 'fetch is disabled here');
});

test('connection refused: the cause is named (pi: just "fetch failed")', async () => {
  const closed = await startRawServer(() => {});
  const url = closed.url;
  await closed.close();
  const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: url, authToken: PROXY_TOKEN });
  const p = await runProxy(pi.streamProxy, model, context('text'), { proxyUrl: url, authToken: PROXY_TOKEN });
  assert.equal(p.result.errorMessage, 'fetch failed');
  assert.match(o.result.errorMessage, /^fetch failed \(.*ECONNREFUSED.*\)$/);
  assertSameButMessage(o, p);
});

test('a node-fetch style response (async-iterable body, no ok): read like a standard one (pi: "Proxy error: 200 undefined")', async () => {
  const bytes = Buffer.from(sse(HELLO));
  const nodeFetch = async () => ({
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' },
    body: (async function* () { for (let i = 0; i < bytes.length; i += 9) yield bytes.subarray(i, i + 9); })(),
  });
  const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, fetch: nodeFetch });
  const standard = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, fetch: bodyFetch([bytes]) });
  assert.deepEqual(normalize(o.pushed), normalize(standard.pushed));
  const p = await withFetch(nodeFetch, () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }));
  assert.equal(p.result.errorMessage, 'Proxy error: 200 undefined');
});

test('a fetch that returns no Response, or a body of non-bytes: named errors', async () => {
  const none = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN, fetch: async () => undefined });
  assert.equal(none.result.errorMessage, 'fetch returned undefined, not a Response');
  // pi: "Cannot read properties of undefined (reading 'ok')".
  const numbers = await runProxy(ours.streamProxy, model, context('text'), {
    proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN,
    fetch: async () => ({ ok: true, status: 200, body: (async function* () { yield 42; })() }),
  });
  assert.equal(numbers.result.errorMessage, 'The proxy response body produced a number chunk, not bytes');
  const bodiless = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN, fetch: async () => ({ ok: true, status: 200 }) });
  assert.equal(bodiless.result.errorMessage, 'The proxy response has no readable body');
  for (const run of [none, numbers, bodiless]) assert.equal(run.result.stopReason, 'error');
});

test('missing model or options: an error event, never a throw (pi rejects unhandled and hangs)', async () => {
  // pi reads model.api and options.signal inside its async body before any try: the
  // rejection is unhandled (Node's default policy exits) and the stream never ends.
  for (const args of ['undefined, { messages: [] }, { proxyUrl: "http://x.invalid", authToken: "t" }', '{ id: "m" }, { messages: [] }, undefined']) {
    const script = `import { streamProxy } from '@earendil-works/pi-agent-core';
      const s = streamProxy(${args});
      console.log(await Promise.race([s.result().then(() => 'settled'), new Promise((r) => setTimeout(r, 300, 'hung'))]));`;
    const strict = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
    assert.notEqual(strict.status, 0);
    assert.match(strict.stderr, /TypeError: Cannot read properties of undefined/);
    const lenient = spawnSync(process.execPath, ['--unhandled-rejections=warn', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(lenient.stdout.trim(), 'hung');
  }
  const cases = [
    [undefined, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }, 'streamProxy needs a model'],
    [model, context('text'), undefined, 'streamProxy needs options with proxyUrl and authToken'],
    [model, context('text'), { authToken: PROXY_TOKEN }, 'streamProxy needs options.proxyUrl'],
  ];
  for (const [m, c, o, message] of cases) {
    const run = await runProxy(ours.streamProxy, m, c, o, { timeout: 1000 });
    assert.equal(run.threw, undefined);
    assert.equal(run.result.stopReason, 'error');
    assert.equal(run.result.errorMessage, message);
  }
  const circular = context('text');
  circular.messages[0].self = circular;
  const p = await runProxy(ours.streamProxy, model, circular, { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN, fetch: bodyFetch([]) });
  assert.match(p.result.errorMessage, /^Cannot serialise the request: Converting circular structure/);
});

test('an authToken that is no valid header value: refused without quoting it (pi\'s message contains it)', async () => {
  const token = 'line\nbreak-secret-4711';
  const fetch = bodyFetch([]);
  const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: token, fetch });
  assert.equal(o.result.errorMessage, 'authToken is not a valid HTTP header value (line breaks, NUL or characters above U+00FF)');
  assert.equal(fetch.calls.length, 0);
  const p = await runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: token });
  assert.ok(p.result.errorMessage.includes('break-secret-4711'), p.result.errorMessage);
});

test('fetch: options.fetch is used when given, else the global fetch as it is at call time', async () => {
  const bytes = Buffer.from(sse(HELLO));
  const injected = bodyFetch([bytes]);
  const run = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid/base', authToken: PROXY_TOKEN, fetch: injected });
  assert.equal(run.result.stopReason, 'stop');
  assert.equal(injected.calls[0].url, 'http://proxy.invalid/base/api/stream');
  assert.deepEqual(injected.calls[0].options.headers, { Authorization: `Bearer ${PROXY_TOKEN}`, 'Content-Type': 'application/json' });
  const late = bodyFetch([bytes]);
  const viaGlobal = await withFetch(late, () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }));
  assert.equal(viaGlobal.result.stopReason, 'stop');
  assert.equal(late.calls.length, 1);
});

// ---------------------------------------------------------------------------------------
// Fuzz: seeded damaged bodies in random chunkings.

const FUZZ_CASES = 400;

test(`fuzz: ${FUZZ_CASES} seeded bodies keep every invariant; pi-readable ones equal pi; chunking never matters`, async () => {
  const piBroken = new Map();
  for (let seed = 1; seed <= FUZZ_CASES; seed++) {
    const c = fuzzCase(seed);
    const call = (impl, chunks) => withFetch(bodyFetch(chunks), () => runProxy(impl, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }, { timeout: 2000 }));
    const o = await call(ours.streamProxy, c.chunks);
    const p = await call(pi.streamProxy, c.chunks);
    const label = `seed ${seed} (${c.name}): ${JSON.stringify(c.text).slice(0, 300)}`;
    assert.deepEqual(invariants(o, PROXY_TOKEN), [], label);
    const again = await call(ours.streamProxy, c.otherChunks);
    assert.deepEqual(normalize(again.pushed), normalize(o.pushed), `chunking changed the events: ${label}`);
    if (c.mutation.piSane) assert.deepEqual(normalize(o.pushed), normalize(p.pushed), `differs from pi: ${label}`);
    if (c.mutation.same) {
      const plain = await call(ours.streamProxy, [new TextEncoder().encode(sse(c.events))]);
      assert.deepEqual(normalize(o.pushed), normalize(plain.pushed), `not read like the plain body: ${label}`);
    }
    // The same body with a transport fault, through both.
    const faulted = {};
    for (const [name, impl] of [['ours', ours.streamProxy], ['pi', pi.streamProxy]]) {
      const controller = new AbortController();
      const fetchFn = faultyFetch(c.chunks, c.fault, () => setTimeout(() => controller.abort(), 2));
      const onEvent = (e, index) => { if (c.fault.kind === 'abort' && index === c.fault.at) controller.abort(); };
      faulted[name] = await withFetch(fetchFn, () => runProxy(impl, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, signal: controller.signal }, { timeout: 2000, onEvent }));
    }
    const f = faulted.ours;
    assert.deepEqual(invariants(f, PROXY_TOKEN), [], `with ${c.fault.kind} at ${c.fault.at}: ${label}`);
    const cut = f.pushed.at(-1).error;
    if (c.fault.kind === 'error' && cut?.errorMessage.startsWith('Reading')) assert.equal(cut.errorMessage, 'Reading the proxy response failed: terminated', label);
    // Aborted by the signal (not by a server event saying so): the abort is the message.
    if (cut?.stopReason === 'aborted' && cut.errorMessage !== 'upstream said no') assert.equal(cut.errorMessage, 'Request aborted by user', label);
    if (c.fault.kind === 'error' && c.mutation.piSane) {
      // The events before the failure are pi's; pi words the message as the bare error.
      const strip = (run) => normalize(run.pushed).map((e) => (e.type === 'error' ? { ...e, error: { ...e.error, errorMessage: undefined } } : e));
      assert.deepEqual(strip(f), strip(faulted.pi), `with a reset: ${label}`);
    }
    for (const run of Object.values(faulted)) {
      const broken = invariants(run, PROXY_TOKEN);
      if (run === faulted.pi && broken.length > 0) piBroken.set(`${c.fault.kind} fault`, broken);
    }
    const broken = invariants(p, PROXY_TOKEN);
    if (broken.length > 0) piBroken.set(c.name, [...new Set([...(piBroken.get(c.name) ?? []), ...broken.map((b) => b.replace(/\d+|\{.*/g, '#'))])]);
  }
  // The generator finds real bugs: pi breaks invariants on these kinds of body (holes,
  // usage undefined, "undefined" deltas, and a final message rewritten by whatever comes
  // after done: late lines, or a reset connection).
  const kinds = [...piBroken.keys()];
  for (const kind of ['badIndex', 'noUsage', 'afterDone', 'badDelta', 'error fault']) assert.ok(kinds.includes(kind), `pi broke nothing on ${kind}: ${JSON.stringify([...piBroken])}`);
});

test('partial tool arguments equal pi\'s at every delta, malformed JSON and huge open arrays included', async () => {
  // Arguments stream as toolcall_delta events; pi shows pi-ai's streaming-JSON snapshots,
  // which lag behind the text for a large open container (a copy budget). Both must match.
  const texts = [
    '{"city":"Zürich","n":[1,2,{"deep":"😀 \\"q\\" \\u00e9 \\ud83d\\ude00"}],"t":true,"f":fals',
    '{"a" 1 "b": [1 2 3], "c":: "x", "d": tru, "e": -1.5e+, "f": "\\q\\u12g", "__proto__": {"x": 1}} trailing',
    `{"zeros":[${Array(1200).fill(0).join(',')}],"after":"done"}`,
    `{"grid":[${Array(120).fill('[1,[2,[3]]]').join(',')}]}`,
    '[1,2,3]',
    '"just a string"',
    '{"unterminated": "abc',
    '}{"stray":1}',
  ];
  let lagged = false;
  for (const text of texts) {
    for (const size of [1, 2, 7, 64]) {
      const events = [ev.start, { type: 'toolcall_start', contentIndex: 0, id: 'c', toolName: 'lookup' }];
      for (let i = 0; i < text.length; i += size) events.push({ type: 'toolcall_delta', contentIndex: 0, delta: text.slice(i, i + size) });
      events.push({ type: 'done', reason: 'toolUse', usage: USAGE });
      const chunks = [new TextEncoder().encode(sse(events))];
      const o = await withFetch(bodyFetch(chunks), () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
      const p = await withFetch(bodyFetch(chunks), () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
      assert.deepEqual(normalize(o.pushed), normalize(p.pushed), `${text.slice(0, 60)} in ${size}-char deltas`);
      const zeros = o.pushed.filter((e) => e.type === 'toolcall_delta').map((e) => e.partial.content[0].arguments.zeros?.length ?? 0);
      let read = 0;
      o.pushed.filter((e) => e.type === 'toolcall_delta').forEach((e, i) => { read += e.delta.length; if (text.startsWith('{"zeros"') && zeros[i] < Math.floor((read - 11) / 2) - 1) lagged = true; });
    }
  }
  assert.ok(lagged, 'the huge-array case did not exercise the lagging preview');
});

test('partial tool arguments, fuzzed: 300 seeded (sometimes damaged) JSON texts in random deltas equal pi\'s', async () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { text, deltas } = argumentText(seed);
    const events = [ev.start, { type: 'toolcall_start', contentIndex: 0, id: 'c', toolName: 'lookup' }, ...deltas.map((delta) => ({ type: 'toolcall_delta', contentIndex: 0, delta })), { type: 'done', reason: 'toolUse', usage: USAGE }];
    const chunks = [new TextEncoder().encode(sse(events))];
    const args = (run) => run.pushed.filter((e) => e.type === 'toolcall_delta').map((e) => e.partial.content[0].arguments);
    const o = await withFetch(bodyFetch(chunks), () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
    const p = await withFetch(bodyFetch(chunks), () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
    assert.deepEqual(args(o), args(p), `seed ${seed}: ${JSON.stringify(text)}`);
  }
});
