// streamProxy against hostile proxy servers, next to pi-agent-core 1.6.0's streamProxy on
// the same server: where pi is sane the runs must be equal; where pi hangs, loses data,
// corrupts the message or leaks the token, ours is checked on its own and pi's outcome is
// asserted or described in a comment. Nothing here waits for time or compares one: a test
// waits for what it needs to have happened (an event consumed, a read begun, a socket
// closed), and "not yet" is shown by ordering against `drained()` or by counting work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, startRawServer, sse } from './shared/proxy-server.mjs';
import { normalize, runProxy, withFetch, bodyFetch, assertSameRun, assertSameButMessage } from './shared/proxy-run.mjs';
import { model, context, ev, HELLO, bothRaw, streamed, answer } from './shared/proxy-fixtures.mjs';
import { USAGE } from './shared/proxy-fuzz.mjs';
import { drained, deferred } from './helpers.mjs';

const realFetch = globalThis.fetch;


/**
 * The global fetch, with the response's body read through a pass-through stream that pulls
 * only when its reader asks: `onRead(n)` is called as read n (from 0) begins. Cancelling it
 * calls `onCancel()` and cancels the real body.
 */
const watchedFetch = (onRead, onCancel = () => {}) => async (url, init) => {
  const response = await realFetch(url, init);
  const reader = response.body.getReader();
  let n = 0;
  const body = new ReadableStream({
    async pull(controller) {
      onRead(n++);
      try {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        return controller.enqueue(value);
      } catch (error) {
        return controller.error(error);
      }
    },
    cancel: (reason) => {
      onCancel();
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/**
 * Runs `fn` and counts the characters the string built-ins called meanwhile touch: the
 * receiver of a method that may scan it, the result of one that copies, the bytes a
 * TextDecoder decodes, a regex's input from where it starts. A deterministic measure of
 * work: a reader that rescans what it holds on every read counts about the square of the
 * input over the read size.
 */
async function stringWork(fn) {
  let work = 0;
  const saved = [];
  const patch = (proto, name, cost) => {
    const original = proto[name];
    saved.push([proto, name, original]);
    proto[name] = function counted(...args) {
      const before = cost.before?.(this, args) ?? 0;
      const result = original.apply(this, args);
      work += cost(this, args, result) - before;
      return result;
    };
  };
  const receiver = (self) => (typeof self === 'string' ? self.length : 0);
  const copied = (_self, _args, result) => (typeof result === 'string' ? result.length : 0);
  const one = () => 1;
  for (const name of ['split', 'indexOf', 'lastIndexOf', 'includes', 'search', 'match', 'matchAll', 'replace', 'replaceAll', 'trim', 'trimStart', 'trimEnd', 'normalize', 'toLowerCase', 'toUpperCase', 'localeCompare']) {
    patch(String.prototype, name, receiver);
  }
  for (const name of ['slice', 'substring', 'substr', 'concat', 'padStart', 'padEnd', 'repeat']) patch(String.prototype, name, copied);
  for (const name of ['charAt', 'charCodeAt', 'codePointAt', 'at', 'startsWith', 'endsWith']) patch(String.prototype, name, one);
  const scanned = (_self, args) => String(args[0]).length;
  scanned.before = (self) => (self.global || self.sticky ? self.lastIndex : 0);
  patch(RegExp.prototype, 'exec', scanned);
  patch(RegExp.prototype, 'test', scanned);
  patch(Array.prototype, 'join', copied);
  patch(TextDecoder.prototype, 'decode', (_self, args) => args[0]?.byteLength ?? 0);
  try {
    const value = await fn();
    return { value, work };
  } finally {
    for (const [proto, name, original] of saved.reverse()) proto[name] = original;
  }
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
  // The reset comes once the client has consumed the three events sent before it.
  let consumed;
  const server = await startRawServer(async (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(HELLO.slice(0, 3)));
    await consumed.promise;
    res.socket.destroy();
  });
  const run = (impl) => {
    consumed = deferred();
    const onEvent = (_event, i) => { if (i === 2) consumed.resolve(); };
    return runProxy(impl, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN }, { onEvent });
  };
  let o;
  let p;
  try {
    o = await run(ours.streamProxy);
    p = await run(pi.streamProxy);
  } finally {
    await server.close();
  }
  assert.equal(o.consumed.length, 4, 'the three events, then the error');
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
      // Aborted as the reader asks for more than the body's first piece, which is all the
      // server sends: the error body is being read, and stalled.
      const fetchFn = watchedFetch((n) => { if (n === 1) controller.abort(); });
      const result = await withFetch(fetchFn, () => impl(model, context('text'), { proxyUrl: stalled.url, authToken: PROXY_TOKEN, signal: controller.signal }).result());
      assert.ok(controller.signal.aborted, 'aborted while reading');
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
  // The server never ends a response: a connection that closes was released by the client.
  let open = 0;
  let closed;
  const server = await startRawServer(async (req, res) => {
    open += 1;
    const done = closed;
    res.on('close', () => { open -= 1; done.resolve(); });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse(HELLO) + 'data: not json, after done\n\n');
  });
  const released = [];
  const fetchFn = (name) => watchedFetch(() => {}, () => released.push(name));
  try {
    closed = deferred();
    const o = await withFetch(fetchFn('ours'), () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN }));
    assert.equal(o.result.stopReason, 'stop');
    // Released by the time what the run queued has run (so this fails rather than waits)...
    await drained();
    assert.deepEqual(released, ['ours']);
    // ...and the server sees the connection go.
    await closed.promise;
    assert.equal(open, 0);
    // pi: the stream is done but its reader keeps the response open, and the late garbage
    // rewrites the final message it already returned. pi's run is over when it lets go of
    // the signal's listener (its `finally`); by then, and once all that was queued has run,
    // the connection is still open.
    closed = deferred();
    const controller = new AbortController();
    const finished = deferred();
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.removeEventListener = (...args) => { remove(...args); finished.resolve(); };
    const p = await withFetch(fetchFn('pi'), () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN, signal: controller.signal }));
    assert.equal(p.pushed.find((e) => e.type === 'done').message.stopReason, 'stop');
    await finished.promise;
    await drained();
    assert.deepEqual(released, ['ours'], 'pi never lets go of the body');
    assert.equal(open, 1);
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
    // Once everything queued by the end of the run has run (pi's reader waits on the body).
    await drained();
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

test('huge delta in small reads stays linear: 8 MB in 4 KB reads, string work a small multiple of the bytes (pi: quadratic)', async (t) => {
  // Work is counted, not timed (stringWork): linear reading touches each byte a few times,
  // whatever the size; pi rescans its whole buffer on every read.
  const BOUND = 16;
  const body = (size) => {
    const bytes = new TextEncoder().encode(sse([ev.start, ev.textStart, ev.delta('x'.repeat(size)), ev.textEnd, ev.done]));
    const chunks = [];
    for (let i = 0; i < bytes.length; i += 4096) chunks.push(bytes.subarray(i, i + 4096));
    return { chunks, bytes: bytes.length };
  };
  const options = { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN };
  // No deadline on the runs: only the counted work decides.
  const noDeadline = { timeout: 2 ** 31 - 1 };
  const ratios = [];
  for (const size of [1024 * 1024, 8 * 1024 * 1024]) {
    const { chunks, bytes } = body(size);
    const { value: o, work } = await stringWork(() => runProxy(ours.streamProxy, model, context('text'), { ...options, fetch: bodyFetch(chunks) }, noDeadline));
    assert.equal(o.result.content[0].text.length, size);
    ratios.push(`ours ${size >> 20} MB: ${(work / bytes).toFixed(1)}x`);
    assert.ok(work <= BOUND * bytes, `ours, ${size} bytes: ${work} characters of string work`);
  }
  // The control: the same count on pi's reader, at 1 MB (8 MB takes pi seconds), is far over.
  const { chunks, bytes } = body(1024 * 1024);
  const { value: p, work } = await stringWork(() => withFetch(bodyFetch(chunks), () => runProxy(pi.streamProxy, model, context('text'), options, noDeadline)));
  assert.equal(p.result.content[0].text.length, 1024 * 1024);
  ratios.push(`pi 1 MB: ${(work / bytes).toFixed(1)}x`);
  assert.ok(work > BOUND * bytes, `pi's rescans count: ${work} characters for ${bytes} bytes`);
  t.diagnostic(`string work per byte: ${ratios.join(', ')}`);
});

test('a short token is redacted where a server echoes it, and leaves other words whole', async () => {
  // A refused connection: the cause's text ("fetch failed", "connect ECONNREFUSED") holds
  // the letters of these tokens, which must not be cut up.
  const closed = await startRawServer(() => {});
  await closed.close();
  for (const authToken of ['t', 'a', 'e1']) {
    const refused = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: closed.url, authToken });
    assert.equal(refused.result.stopReason, 'error');
    assert.match(refused.result.errorMessage, /^fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  }
  const server = await startRawServer((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `token ${req.headers.authorization.slice(7)} rejected, retry` }));
  });
  try {
    const echoed = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: 't' });
    assert.equal(echoed.result.errorMessage, 'Proxy error: token [redacted] rejected, retry');
  } finally {
    await server.close();
  }
});
