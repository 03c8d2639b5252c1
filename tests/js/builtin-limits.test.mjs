// Memory and time bounds of the built-in stream (issue 12, defects 3, 4 and 9): an SSE line
// or event past `maxEventBytes` (default 64 MiB) and an error body past 1 MiB end the
// response with an error naming the bound, wasm memory after a big stream is reused rather
// than grown again, `timeoutMs` beyond what `setTimeout` holds is clamped instead of firing
// at once, and the global `fetch` is read on each request. Real servers on 127.0.0.1; the
// fault matrix (fault-matrix.test.mjs) runs the stalls and the endless line on all four APIs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { memorySize } from '../../pkg/wasm.js';
import { ready, streamSimple } from 'pi-agent-wasm';
import { faultServer, modelAt, runLoop, sseAnswer } from './shared/four-apis.mjs';

const KEY = 'sk-limits-secret-0123456789';
const MiB = 1024 * 1024;
const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function serve(handler) {
  const server = await faultServer(handler);
  servers.push(server);
  return server;
}

/** The wasm instance's linear memory in bytes (it never shrinks: its size is the high-water mark). */
async function wasmMemory() {
  await ready();
  return memorySize;
}

/** Writes `piece` until the client goes away; resolves `closed` when it has. */
function pumpForever(res, piece) {
  const pump = () => { while (!res.destroyed && res.write(piece)); };
  res.on('drain', pump);
  pump();
}

const chunk = (content) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const stop = JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });

// First in this file: the memory figures start from a fresh instance.
test('an SSE line that never ends stops at the default bound (64 MiB) with a clear error; memory stays bounded and is reused', { timeout: 120_000 }, async (t) => {
  const memory = await wasmMemory();
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"choices":[{"delta":{"content":"');
    pumpForever(res, Buffer.alloc(MiB, 'x'));
  });
  const before = memory();
  const first = await runLoop(modelAt('openai-completions', server.origin), KEY);
  const highWater = memory();
  assert.equal(first.last.stopReason, 'error');
  assert.equal(first.last.errorMessage, 'Stopped reading the event stream: a line is longer than 67108864 bytes (maxEventBytes)');
  assert.deepEqual(first.events.slice(-2).map((e) => e.type), ['turn_end', 'agent_end']);
  // Before the bound, memory grew without limit (1 GB in 5 s, then a trap).
  assert.ok(highWater <= 3 * 64 * MiB, `wasm memory reached ${highWater} bytes for a 64 MiB bound`);
  const second = await runLoop(modelAt('openai-completions', server.origin), KEY);
  assert.equal(second.last.errorMessage, first.last.errorMessage);
  assert.ok(memory() - highWater <= MiB, `a second endless line grew wasm memory from ${highWater} to ${memory()} bytes`);
  t.diagnostic(`wasm memory: ${(before / MiB).toFixed(1)} MiB before, ${(highWater / MiB).toFixed(1)} MiB after an endless line at the 64 MiB bound, ${(memory() / MiB).toFixed(1)} MiB after a second one`);
});

test('a 16 MB text delta in one event decodes whole, and a second such stream reuses the memory of the first', { timeout: 60_000 }, async (t) => {
  const memory = await wasmMemory();
  const text = 'y'.repeat(16 * MiB);
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${chunk(text)}\n\ndata: ${stop}\n\ndata: [DONE]\n\n`);
  });
  const start = memory();
  const first = await runLoop(modelAt('openai-completions', server.origin), KEY);
  assert.equal(first.last.stopReason, 'stop');
  assert.equal(first.last.content[0].text.length, text.length);
  const afterFirst = memory();
  const second = await runLoop(modelAt('openai-completions', server.origin), KEY);
  assert.equal(second.last.content[0].text.length, text.length);
  assert.ok(memory() - afterFirst <= MiB, `the second stream grew wasm memory from ${afterFirst} to ${memory()} bytes`);
  t.diagnostic(`wasm memory: ${(start / MiB).toFixed(1)} MiB before, ${(afterFirst / MiB).toFixed(1)} MiB after one 16 MiB event, ${(memory() / MiB).toFixed(1)} MiB after a second`);
});

test('maxEventBytes sets the bound: an event of many short data lines past it ends the response, what came before is kept', async () => {
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    // One whole event, then an event that never dispatches: 200 short data lines.
    res.end(`data: ${chunk('kept')}\n\n${'data: 0123456789\n'.repeat(200)}\n`);
  });
  const { last, events } = await runLoop(modelAt('openai-completions', server.origin), KEY, { maxEventBytes: 1000 });
  assert.equal(last.errorMessage, "Stopped reading the event stream: an event's data is longer than 1000 bytes (maxEventBytes)");
  assert.equal(last.content[0].text, 'kept');
  assert.equal(events.at(-1).type, 'agent_end');
  // The same call without the option reads it all (the default bound is far above).
  const whole = await runLoop(modelAt('openai-completions', server.origin), KEY);
  assert.match(whole.last.errorMessage, /^Malformed JSON in stream event/);
});

test('an error body that never ends is read to 1 MiB only: the error quotes its start and says so, the body is cancelled', { timeout: 60_000 }, async () => {
  let closed;
  const gone = new Promise((resolve) => { closed = resolve; });
  const server = await serve((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.on('close', closed);
    pumpForever(res, Buffer.alloc(64 * 1024, 'e'));
  });
  const { last, events } = await runLoop(modelAt('openai-completions', server.origin), KEY, { timeoutMs: 5000 });
  assert.equal(last.stopReason, 'error');
  assert.equal(last.errorMessage, `500 ${'e'.repeat(4000)}... [truncated ${MiB - 4000} chars] [the body is longer than ${MiB} bytes; the rest was not read]`);
  assert.equal(events.at(-1).type, 'agent_end');
  await gone; // the server saw the client go away
});

test('a timeoutMs beyond 2^31-1 ms is clamped: the run waits for a slow answer instead of timing out at once', async () => {
  const server = await serve((_req, res) => {
    setTimeout(() => { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(sseAnswer('openai-completions', 'late but fine')); }, 50);
  });
  for (const timeoutMs of [2 ** 31, 1e15]) {
    const { last } = await runLoop(modelAt('openai-completions', server.origin), KEY, { timeoutMs });
    assert.equal(last.stopReason, 'stop', `timeoutMs ${timeoutMs}: ${last.errorMessage}`);
    assert.equal(last.content[0].text, 'late but fine');
  }
});

test('a retry delay beyond 2^31-1 ms (maxRetryDelayMs: 0) asks setTimeout for no more than it holds', async () => {
  // setTimeout fires at once for a longer delay, which would turn "wait 300 years" into
  // "retry now". The timers the run asks for are recorded (and shortened, so it ends).
  const asked = [];
  const realSetTimeout = globalThis.setTimeout;
  const server = await serve((_req, res, n) => {
    if (n === 0) { res.writeHead(429, { 'retry-after': '1e10' }); res.end('busy'); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sseAnswer('openai-completions', 'after the wait'));
  });
  globalThis.setTimeout = (fn, ms, ...rest) => {
    asked.push(ms);
    return realSetTimeout(fn, ms > 2 ** 30 ? 0 : ms, ...rest);
  };
  try {
    const { last } = await runLoop(modelAt('openai-completions', server.origin), KEY, { maxRetries: 1, maxRetryDelayMs: 0 });
    assert.equal(last.content[0].text, 'after the wait');
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.ok(asked.includes(2 ** 31 - 1), `the retry wait was asked as ${asked.join(', ')}`);
  assert.ok(asked.every((ms) => !(ms > 2 ** 31 - 1)), `a delay setTimeout cannot hold: ${asked.join(', ')}`);
});

test('the global fetch is read on each request: one installed after the first request is used (issue 12, defect 9)', async () => {
  const server = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(sseAnswer('openai-completions', 'hello'));
  });
  const model = modelAt('openai-completions', server.origin);
  const ctx = { messages: [{ role: 'user', content: 'go', timestamp: 1 }] };
  assert.equal((await streamSimple(model, ctx, { apiKey: KEY }).result()).stopReason, 'stop');
  const realFetch = globalThis.fetch;
  const seen = [];
  globalThis.fetch = (url, init) => { seen.push(url); return realFetch(url, init); };
  try {
    assert.equal((await streamSimple(model, ctx, { apiKey: KEY }).result()).stopReason, 'stop');
    assert.deepEqual(seen, [`${model.baseUrl}/chat/completions`]);
    // One injected in the options still wins over the global one.
    const injected = [];
    const fetch = (url, init) => { injected.push(url); return realFetch(url, init); };
    assert.equal((await streamSimple(model, ctx, { apiKey: KEY, fetch }).result()).stopReason, 'stop');
    assert.equal(injected.length, 1);
    assert.equal(seen.length, 1);
    // A global fetch removed later is reported, not a stale one used.
    globalThis.fetch = undefined;
    const none = await streamSimple(model, ctx, { apiKey: KEY }).result();
    assert.equal(none.errorMessage, 'No fetch function in this environment');
  } finally {
    globalThis.fetch = realFetch;
  }
});
