// streamProxy with hostile fetches, timeouts and arguments: a fetch that throws, never
// settles, ignores the signal or returns something that is no Response; stalled servers
// with timeoutMs; a missing model or options; a token that is no header value. pi's outcome
// is asserted where it can be observed (a child process where it crashes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { repoRoot } from './helpers.mjs';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, startRawServer, sse } from './shared/proxy-server.mjs';
import { normalize, runProxy, withFetch, bodyFetch, assertSameButMessage } from './shared/proxy-run.mjs';
import { model, context, ev, HELLO } from './shared/proxy-fixtures.mjs';

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
