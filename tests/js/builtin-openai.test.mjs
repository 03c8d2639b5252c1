// The built-in openai-completions stream (Rust over fetch) against a real HTTP server on
// 127.0.0.1, checked event for event against pi-ai 1.6.0's streamSimple replaying the same
// wire transcripts (L-20, L-83..L-85), and under faults: HTTP errors, retries, bad bytes,
// resets, aborts, non-SSE answers. The API key must never show in an event or error.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { runAgentLoop, agentLoop, streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';

const FIXTURES = new URL('../fixtures/openai-completions/', import.meta.url);
const KEY = 'sk-local-secret-0123456789';

/** A server whose answer to request n is `answer(n, body, req, res)`. */
async function serve(answer) {
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : undefined;
      requests.push({ url: req.url, headers: req.headers, body });
      answer(requests.length - 1, body, req, res);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () => { for (const s of sockets) s.destroy(); return new Promise((r) => server.close(r)); },
  };
}

/** Writes `text` as an event stream in irregular chunks (split inside lines and characters). */
async function writeSse(res, text) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const bytes = Buffer.from(text);
  for (let i = 0, step = 5; i < bytes.length; i += step, step = (step * 7) % 29 + 2) {
    res.write(bytes.subarray(i, i + step));
    await new Promise((r) => setImmediate(r));
  }
  res.end();
}

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

const baseModel = {
  ...getModel('openai', 'gpt-4o-mini'),
  id: 'gpt-test', api: 'openai-completions', reasoning: true,
  cost: { input: 0.15, output: 0.6, cacheRead: 0.075, cacheWrite: 0 },
};
const tool = {
  name: 'read', label: 'Read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  execute: async () => ({ content: [{ type: 'text', text: 'file body' }], details: {} }),
};
const prompt = () => [{ role: 'user', content: 'go', timestamp: 1 }];
const context = () => ({ messages: [{ role: 'system', content: 'Be brief.', timestamp: 0 }], tools: [tool] });

/** Events as JSON with clock values (timestamps, durations) set aside. */
function normalize(events) {
  return JSON.parse(JSON.stringify(events, (k, v) => (k === 'timestamp' || k === 'durationMs' ? 0 : v)));
}

async function runWith(streamFn, fixture) {
  const text = readFileSync(new URL(fixture, FIXTURES), 'utf8');
  const final = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const server = await serve((n, _body, _req, res) => writeSse(res, n === 0 ? text : final));
  servers.push(server);
  const events = [];
  const model = { ...baseModel, baseUrl: server.baseUrl };
  const messages = await runAgentLoop(prompt(), context(), { model, apiKey: KEY, convertToLlm: (m) => m }, (e) => { events.push(e); }, undefined, streamFn);
  return { events: normalize(events), messages: normalize(messages), requests: server.requests };
}

// array_content and same_index_parallel are decoded better than pi-ai (tests/openai_completions.rs).
const IMPROVED = new Set(['array_content.sse', 'same_index_parallel.sse']);
const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.sse') && !IMPROVED.has(f));

for (const fixture of fixtures) {
  test(`built-in stream = pi-ai streamSimple, events and requests: ${fixture} (L-20, L-83)`, async () => {
    const ours = await runWith(streamSimple, fixture);
    const theirs = await runWith(piStreamSimple, fixture);
    // pi-ai's JSON parser words its argumentsError differently; the fact of the error matches.
    const wording = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'argumentsError' ? 'ERR' : x)));
    assert.deepEqual(wording(ours.events), wording(theirs.events));
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body));
    assert.deepEqual(ours.requests.map((r) => r.url), theirs.requests.map((r) => r.url));
    for (const r of ours.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!JSON.stringify(ours.events).includes(KEY));
  });
}

/** Runs one prompt against `answer` with the built-in stream; returns events and messages. */
async function runBuiltin(answer, extra = {}) {
  const server = await serve(answer);
  servers.push(server);
  const events = [];
  const model = { ...baseModel, baseUrl: server.baseUrl };
  const messages = await runAgentLoop(prompt(), { messages: [], tools: [] }, { model, apiKey: KEY, convertToLlm: (m) => m, ...extra }, (e) => { events.push(e); }, extra.signal, streamSimple);
  return { events, messages, server, last: messages.at(-1) };
}

function assertEndsCleanly(events, messages) {
  const types = events.map((e) => e.type);
  assert.equal(types.at(-1), 'agent_end');
  assert.equal(types.at(-2), 'turn_end');
  assert.deepEqual(events.at(-1).messages, messages);
  assert.ok(!JSON.stringify(events).includes(KEY), 'the API key leaked into an event');
}

test('HTTP 401 with an error body: error message names status and body, key redacted', async () => {
  const { events, messages, last } = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } }));
  });
  assert.equal(last.stopReason, 'error');
  assert.match(last.errorMessage, /^401: \{"message":"Incorrect API key provided: \[redacted\]"/);
  assertEndsCleanly(events, messages);
});

test('HTTP 500 then success with maxRetries: 1 retries once (retry-after-ms honoured)', async () => {
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const { events, messages, last, server } = await runBuiltin((n, _b, _req, res) => {
    if (n === 0) {
      res.writeHead(500, { 'retry-after-ms': '10' });
      res.end('overloaded');
      return;
    }
    writeSse(res, text);
  }, { maxRetries: 1 });
  assert.equal(server.requests.length, 2);
  assert.equal(last.stopReason, 'stop');
  assertEndsCleanly(events, messages);
});

test('HTTP 500 without retries: "500 overloaded"', async () => {
  const { last } = await runBuiltin((_n, _b, _req, res) => { res.writeHead(500); res.end('overloaded'); });
  assert.equal(last.stopReason, 'error');
  assert.equal(last.errorMessage, '500 overloaded');
});

test('malformed JSON in a data line ends the response with an error naming it', async () => {
  const { events, messages, last } = await runBuiltin((_n, _b, _req, res) => writeSse(res,
    'data: {"id":"x","choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\ndata: {"choices": [tru\n\n'));
  assert.equal(last.stopReason, 'error');
  assert.match(last.errorMessage, /Malformed JSON in stream event/);
  assert.equal(last.content[0].text, 'Hel');
  assertEndsCleanly(events, messages);
});

test('around a data line\'s JSON only JSON\'s whitespace is skipped: U+00A0, U+2028 or a form feed makes it malformed, as JSON.parse has it in pi', async () => {
  const chunk = '{"id":"x","choices":[{"index":0,"delta":{"content":"b"}}]}';
  for (const [before, after, ok] of [[' \t', '\t ', true], ['\u00a0', '', false], ['', '\u2028', false], ['\f', '', false]]) {
    const body = `data: {"id":"x","choices":[{"index":0,"delta":{"content":"a"}}]}\n\ndata: ${before}${chunk}${after}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`;
    const { events, messages, last } = await runBuiltin((_n, _b, _req, res) => writeSse(res, body));
    assert.equal(last.stopReason, ok ? 'stop' : 'error', JSON.stringify(before + after));
    assert.equal(last.content[0].text, ok ? 'ab' : 'a');
    if (!ok) assert.match(last.errorMessage, /Malformed JSON in stream event: expected value|trailing characters/);
    assertEndsCleanly(events, messages);
    const server = await serve((_n, _b, _req, res) => writeSse(res, body));
    servers.push(server);
    const pi = await piStreamSimple({ ...baseModel, baseUrl: server.baseUrl }, { messages: prompt() }, { apiKey: KEY }).result();
    assert.equal(pi.stopReason, last.stopReason, `pi: ${JSON.stringify(before + after)}`);
  }
});

test('a 200 answer that is JSON, not an event stream, is named as such', async () => {
  const { last } = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"object":"chat.completion","choices":[]}');
  });
  assert.equal(last.stopReason, 'error');
  assert.match(last.errorMessage, /^Expected an event stream, got application\/json: \{"object"/);
});

test('the connection reset mid-stream ends the run with an error, text so far kept', async () => {
  const { events, messages, last } = await runBuiltin((_n, _b, req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"x","choices":[{"index":0,"delta":{"content":"partial answer"}}]}\n\n');
    setTimeout(() => req.socket.destroy(), 20);
  });
  assert.equal(last.stopReason, 'error');
  assert.ok(last.errorMessage.length > 0);
  assert.equal(last.content[0].text, 'partial answer');
  assertEndsCleanly(events, messages);
});

test('a refused connection is an error message, not a rejection', async () => {
  const server = await serve(() => {});
  const baseUrl = server.baseUrl;
  await server.close();
  const events = [];
  const messages = await runAgentLoop(prompt(), { messages: [] }, { model: { ...baseModel, baseUrl }, apiKey: KEY, convertToLlm: (m) => m }, (e) => { events.push(e); }, undefined, streamSimple);
  assert.equal(messages.at(-1).stopReason, 'error');
  // The cause is named: pi-ai says only "Connection error."
  assert.match(messages.at(-1).errorMessage, /^Connection error: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  assertEndsCleanly(events, messages);
});

test('abort while the server stalls: stopReason aborted, nothing hangs (L-20)', async () => {
  const controller = new AbortController();
  const { events, messages, last } = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"x","choices":[{"index":0,"delta":{"content":"wait"}}]}\n\n');
    setTimeout(() => controller.abort(), 30);
  }, { signal: controller.signal });
  assert.equal(last.stopReason, 'aborted');
  assert.equal(last.errorMessage, 'Request was aborted');
  assertEndsCleanly(events, messages);
});

test('no API key: error message as pi-ai words it, no request sent', async () => {
  const server = await serve(() => assert.fail('no request expected'));
  servers.push(server);
  const messages = await runAgentLoop(prompt(), { messages: [] }, { model: { ...baseModel, baseUrl: server.baseUrl }, convertToLlm: (m) => m }, () => {}, undefined, streamSimple);
  assert.equal(messages.at(-1).errorMessage, 'No API key for provider: openai');
  assert.equal(server.requests.length, 0);
});

test('headers: model and config headers are sent; onPayload replaces the body; onResponse sees status', async () => {
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const seen = [];
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const model = { ...baseModel, baseUrl: server.baseUrl, headers: { 'x-model': 'm' } };
  await runAgentLoop(prompt(), { messages: [] }, {
    model, apiKey: KEY, convertToLlm: (m) => m, headers: { 'x-config': 'c' },
    onPayload: (params) => ({ ...params, user: 'u-1' }),
    onResponse: (info) => { seen.push(info.status, info.headers['content-type']); },
  }, () => {}, undefined, streamSimple);
  const r = server.requests[0];
  assert.equal(r.headers['x-model'], 'm');
  assert.equal(r.headers['x-config'], 'c');
  assert.equal(r.body.user, 'u-1');
  assert.deepEqual(seen, [200, 'text/event-stream']);
});

test('streamSimple called directly gives pi-ai\'s event stream and result', async () => {
  const text = readFileSync(new URL('tool_single.sse', FIXTURES), 'utf8');
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const model = { ...baseModel, baseUrl: server.baseUrl };
  const ctx = { messages: [{ role: 'user', content: 'go', timestamp: 1 }] };
  const ours = streamSimple(model, ctx, { apiKey: KEY });
  const types = [];
  let startPartial;
  for await (const e of ours) {
    types.push(e.type);
    if (e.type === 'start') startPartial = e.partial;
    else if (e.partial) assert.equal(e.partial, startPartial, 'one live partial object');
  }
  const result = await ours.result();
  const theirs = piStreamSimple({ ...model }, ctx, { apiKey: KEY });
  const theirTypes = [];
  for await (const e of theirs) theirTypes.push(e.type);
  assert.deepEqual(types, theirTypes);
  assert.deepEqual(normalize(result), normalize(await theirs.result()));
});

test('agentLoop with the built-in stream: observed events carry the live text', async () => {
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const stream = agentLoop(prompt(), { messages: [] }, { model: { ...baseModel, baseUrl: server.baseUrl }, apiKey: KEY, convertToLlm: (m) => m }, undefined, streamSimple);
  let lastText = '';
  for await (const e of stream) {
    if (e.type === 'message_update' && e.assistantMessageEvent.type === 'text_delta') {
      const now = e.message.content[e.assistantMessageEvent.contentIndex].text;
      assert.ok(now.endsWith(e.assistantMessageEvent.delta));
      assert.ok(now.startsWith(lastText));
      lastText = now;
    }
  }
  const messages = await stream.result();
  assert.equal(messages.at(-1).content[0].text, lastText);
});

test('abort during the wait between retries: aborted at once, no second request', async () => {
  const controller = new AbortController();
  const started = Date.now();
  const { events, messages, last, server } = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(503, { 'retry-after': '30' });
    res.end('busy');
    setTimeout(() => controller.abort(), 30);
  }, { maxRetries: 3, signal: controller.signal });
  assert.equal(last.stopReason, 'aborted');
  assert.equal(last.errorMessage, 'Request was aborted');
  assert.equal(server.requests.length, 1);
  assert.ok(Date.now() - started < 20_000, 'the 30 s retry wait was cut short');
  assertEndsCleanly(events, messages);
});

test('a retry delay above maxRetryDelayMs fails at once, naming both delays', async () => {
  const { last, server } = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(429, { 'retry-after': '120', 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Rate limited' } }));
  }, { maxRetries: 2, maxRetryDelayMs: 5000 });
  assert.equal(server.requests.length, 1);
  assert.equal(last.errorMessage, 'Server requested 120s retry delay (max: 5s). 429: {"message":"Rate limited"}');
});

test('a fetch injected in the options is used instead of the global one', async () => {
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const urls = [];
  const fetch = (url, init) => { urls.push(url); return globalThis.fetch(url, init); };
  const messages = await runAgentLoop(prompt(), { messages: [] }, { model: { ...baseModel, baseUrl: server.baseUrl }, apiKey: KEY, convertToLlm: (m) => m, fetch }, () => {}, undefined, streamSimple);
  assert.deepEqual(urls, [`${server.baseUrl}/chat/completions`]);
  assert.equal(messages.at(-1).stopReason, 'stop');
});

test('with no streamFn and no default set, the built-in stream is used (issue 5; L-36 otherwise)', async () => {
  const { getDefaultStreamFn } = await import('pi-agent-wasm');
  assert.equal(getDefaultStreamFn(), streamSimple);
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const messages = await runAgentLoop(prompt(), { messages: [] }, { model: { ...baseModel, baseUrl: server.baseUrl }, apiKey: KEY, convertToLlm: (m) => m }, () => {});
  assert.equal(messages.at(-1).content[0].text, 'Hello, wörld 😀!');
});

test('a tool-using run end to end (the scenario Chromium and workerd run too)', async () => {
  const { startOpenAIServer, textChunks, toolCallChunks } = await import('./shared/openai-server.mjs');
  const { scenarioAnswer, runToolScenario, EXPECTED_SCENARIO } = await import('./shared/agent-scenario.mjs');
  const pkg = await import('pi-agent-wasm');
  const server = await startOpenAIServer((body) => scenarioAnswer(body, { textChunks, toolCallChunks }));
  servers.push(server);
  const r = await runToolScenario(pkg, server.baseUrl);
  const { usage, ...rest } = r;
  assert.deepEqual(rest, EXPECTED_SCENARIO);
  assert.equal(usage.input, 11);
  assert.ok(usage.cost.total > 0);
  assert.equal(server.requests[1].body.messages.at(-1).role, 'tool');
});

test('timeoutMs: a server that never answers, or stalls mid-body, ends the run with an error', async () => {
  const silent = await runBuiltin(() => { /* never answers */ }, { timeoutMs: 150 });
  assert.equal(silent.last.stopReason, 'error');
  assert.equal(silent.last.errorMessage, 'Request timed out: no response for 150 ms');
  assertEndsCleanly(silent.events, silent.messages);

  const stalled = await runBuiltin((_n, _b, _req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"id":"x","choices":[{"index":0,"delta":{"content":"so far"}}]}\n\n');
  }, { timeoutMs: 150 });
  assert.equal(stalled.last.stopReason, 'error');
  assert.equal(stalled.last.errorMessage, 'Request timed out: no data for 150 ms');
  assert.equal(stalled.last.content[0].text, 'so far');
  assertEndsCleanly(stalled.events, stalled.messages);
});

/** A `fetch` whose response body yields the given chunk values, in order. */
function bodyOf(chunks) {
  return async () => ({
    ok: true, status: 200, statusText: 'OK',
    headers: new Headers({ 'content-type': 'text/event-stream' }),
    body: new ReadableStream({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    }),
  });
}

test('body chunks from another realm (jsdom, iframes) are read, not dropped (issue 11)', async () => {
  const { runInNewContext } = await import('node:vm');
  const text = readFileSync(new URL('tool_single.sse', FIXTURES), 'utf8');
  const bytes = Buffer.from(text);
  const cut = Math.floor(bytes.length / 3);
  // Another realm's Uint8Array, a view at an offset into a larger buffer, and a DataView.
  const foreign = runInNewContext('(b) => new Uint8Array(b)', {})([...bytes.subarray(0, cut)]);
  const padded = new Uint8Array(bytes.length - cut + 8);
  padded.set(bytes.subarray(cut, 2 * cut), 4);
  const middle = new Uint8Array(padded.buffer, 4, cut);
  const rest = bytes.subarray(2 * cut);
  const tail = new DataView(rest.buffer.slice(rest.byteOffset, rest.byteOffset + rest.length));
  assert.equal(foreign instanceof Uint8Array, false);
  const model = { ...baseModel, baseUrl: 'http://127.0.0.1:9/v1' };
  const ctx = { messages: [{ role: 'user', content: 'go', timestamp: 1 }] };
  const ours = await streamSimple(model, ctx, { apiKey: KEY, fetch: bodyOf([foreign, middle, tail]) }).result();
  const server = await serve((_n, _b, _req, res) => writeSse(res, text));
  servers.push(server);
  const theirs = await piStreamSimple({ ...model, baseUrl: server.baseUrl }, ctx, { apiKey: KEY }).result();
  assert.equal(ours.stopReason, 'toolUse');
  assert.deepEqual(normalize(ours), normalize(theirs));
});

test('a body chunk that is not bytes ends the response with an error naming it, never silently', async () => {
  const model = { ...baseModel, baseUrl: 'http://127.0.0.1:9/v1' };
  const ctx = { messages: [{ role: 'user', content: 'go', timestamp: 1 }] };
  const result = await streamSimple(model, ctx, { apiKey: KEY, fetch: bodyOf(['data: {"id":"x"}\n\n']) }).result();
  assert.equal(result.stopReason, 'error');
  assert.match(result.errorMessage, /chunk that is not bytes \(a string\)/);
});

test('an error reported inside the stream (OpenRouter and other proxies) ends the response with its text, as pi-ai', async () => {
  const base = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
  const hi = { ...base, choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] };
  const shapes = {
    'error beside a choice': [hi, { ...base, error: { message: 'Provider returned error: upstream overloaded', code: 502, metadata: { raw: 'raw upstream text' } }, choices: [{ index: 0, delta: { content: ' lost' }, finish_reason: 'error' }] }],
    'error alone': [hi, { error: { message: 'overloaded', type: 'server_error' } }],
    'a string error': [{ ...base, error: 'plain string error' }],
    'an error without a message': [{ ...base, error: { code: 500 } }],
    'a null error (none)': [{ ...hi, error: null }, { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }],
  };
  for (const [name, chunks] of Object.entries(shapes)) {
    const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
    const server = await serve((_n, _b, _req, res) => writeSse(res, text));
    servers.push(server);
    const model = { ...baseModel, baseUrl: server.baseUrl };
    const ctx = { messages: [{ role: 'user', content: 'go', timestamp: 1 }] };
    const ours = await streamSimple(model, ctx, { apiKey: KEY }).result();
    const theirs = await piStreamSimple({ ...model }, ctx, { apiKey: KEY }).result();
    assert.deepEqual(normalize(ours), normalize(theirs), name);
  }
});
