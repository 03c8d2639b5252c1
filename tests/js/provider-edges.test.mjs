// Edges of the built-in providers an outside tester found where this package and pi-ai 1.6.0
// parted (each ran the tool with `{}`, lost streamed arguments, or rejected where pi-ai ends
// the response). Each case runs pi-ai's `streamSimple` against the same local server and
// compares. Real servers on 127.0.0.1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { streamSimple, runAgentLoop } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { runAgentLoop as piRunAgentLoop } from '@earendil-works/pi-agent-core';

let body = '';
const server = createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(body);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
after(() => new Promise((resolve) => server.close(resolve)));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const modelFor = (api) => ({ id: 'm', name: 'm', api, provider: 'x', baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e5, maxTokens: 100 });
const context = { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] };

const chat = (delta, finish = null) => `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const anthropic = (type, fields) => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
const toolUse = (deltas, stop = true) => [
  anthropic('message_start', { message: { id: 'msg', usage: { input_tokens: 1, output_tokens: 1 } } }),
  anthropic('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} } }),
  ...deltas.map((partial_json) => anthropic('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json } })),
  ...(stop ? [anthropic('content_block_stop', { index: 0 })] : []),
  anthropic('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 1 } }),
  anthropic('message_stop', {}),
].join('');

/** The final message of both implementations for `api` over `text`. */
async function both(api, text, options = {}) {
  body = text;
  const ours = await streamSimple(modelFor(api), context, { apiKey: 'k', ...options }).result();
  const pi = await piStreamSimple(modelFor(api), context, { apiKey: 'k', ...options }).result();
  return { ours, pi };
}

test('tool-call arguments that are no string are taken as pi-ai takes them (their JS text): an error, never a silent {}', async () => {
  const cases = {
    'an object (Chat Completions)': ['openai-completions', chat({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: { x: 1 } } }] }) + chat({}, 'tool_calls') + 'data: [DONE]\n\n'],
    'a number (Chat Completions)': ['openai-completions', chat({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: 42 } }] }) + chat({}, 'tool_calls') + 'data: [DONE]\n\n'],
    'an object (Anthropic partial_json)': ['anthropic-messages', toolUse([{ x: 1 }])],
  };
  for (const [what, [api, text]] of Object.entries(cases)) {
    const { ours, pi } = await both(api, text);
    const [a, b] = [ours.content[0], pi.content[0]];
    assert.deepEqual(a.arguments, b.arguments, what);
    assert.equal(typeof b.argumentsError, 'string', `${what}: pi`);
    assert.equal(typeof a.argumentsError, 'string', `${what}: ${JSON.stringify(a)}`);
    assert.equal(ours.stopReason, pi.stopReason, what);
  }
});

test('an Anthropic partial_json that is absent or null adds nothing (pi-ai fails the response on its TypeError)', async () => {
  for (const missing of [undefined, null]) {
    const { ours, pi } = await both('anthropic-messages', toolUse(['{"x":', missing, '1}']));
    assert.equal(pi.stopReason, 'error');
    assert.equal(ours.stopReason, 'toolUse');
    assert.deepEqual(ours.content[0].arguments, { x: 1 });
  }
});

test('an Anthropic tool call whose block never stops keeps the arguments that streamed, as pi-ai\'s (it ran with {})', async () => {
  const { ours, pi } = await both('anthropic-messages', toolUse(['{"x":', '1}'], false));
  assert.deepEqual(pi.content[0].arguments, { x: 1 });
  assert.deepEqual(ours.content[0].arguments, pi.content[0].arguments);
  assert.equal(ours.stopReason, pi.stopReason);
  assert.equal(ours.content[0].argumentsError, undefined);
});

test('onPayload or onResponse that throws ends the response with its message, as pi-ai\'s; the loop resolves (it rejected)', async () => {
  const text = chat({ content: 'x' }, 'stop') + 'data: [DONE]\n\n';
  for (const hook of ['onPayload', 'onResponse']) {
    const options = { [hook]: () => { throw new Error(`${hook} boom`); } };
    const { ours, pi } = await both('openai-completions', text, options);
    assert.equal(pi.stopReason, 'error');
    assert.equal(ours.stopReason, pi.stopReason, hook);
    assert.equal(ours.errorMessage, pi.errorMessage, hook);
    const config = { model: modelFor('openai-completions'), apiKey: 'k', convertToLlm: (m) => m, ...options };
    const user = [{ role: 'user', content: 'hi', timestamp: 1 }];
    const mine = await runAgentLoop(user, { messages: [] }, config, () => {}, undefined);
    const theirs = await piRunAgentLoop(user, { messages: [] }, config, () => {}, undefined, piStreamSimple);
    assert.equal(mine.at(-1).errorMessage, theirs.at(-1).errorMessage, hook);
  }
});

test('Gemini call ids made for calls sent without one stay distinct across responses in the same millisecond, as pi-ai\'s', async () => {
  body = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' }] })}\n\n`;
  const now = Date.now;
  Date.now = () => 1800000000000;
  try {
    const messages = await Promise.all(Array.from({ length: 8 }, () => streamSimple(modelFor('google-generative-ai'), context, { apiKey: 'k' }).result()));
    const ids = messages.map((m) => m.content[0].id);
    assert.equal(new Set(ids).size, 8, ids.join(' '));
  } finally {
    Date.now = now;
  }
});

test('a Gemini error object inside the stream ends it as @google/genai words it when it has an HTTP code, and is read on without one', async () => {
  const part = (text) => `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text }] } }] })}\n\n`;
  for (const error of [{ code: 500, message: 'internal', status: 'INTERNAL' }, { code: 429, message: 'slow down' }, { message: 'no code' }, { code: 200, message: 'odd' }]) {
    const text = part('a') + `data: ${JSON.stringify({ error })}\n\n` + `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'b' }] }, finishReason: 'STOP' }] })}\n\n`;
    const { ours, pi } = await both('google-generative-ai', text);
    assert.equal(ours.stopReason, pi.stopReason, JSON.stringify(error));
    assert.equal(ours.errorMessage, pi.errorMessage, JSON.stringify(error));
    assert.deepEqual(ours.content.map((b) => b.text), pi.content.map((b) => b.text), JSON.stringify(error));
  }
});

test('with timeoutMs and maxRetries, a request that got no response in time is retried, as pi-ai\'s clients retry it (it failed at once)', async () => {
  let requests = 0;
  const silent = createServer((req) => { requests += 1; req.resume(); });
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const model = { ...modelFor('openai-completions'), baseUrl: `http://127.0.0.1:${silent.address().port}` };
    const counts = {};
    for (const [name, stream] of [['ours', streamSimple], ['pi', piStreamSimple]]) {
      requests = 0;
      const m = await stream(model, context, { apiKey: 'k', timeoutMs: 100, maxRetries: 2 }).result();
      assert.equal(m.stopReason, 'error', name);
      counts[name] = requests;
      if (name === 'ours') assert.equal(m.errorMessage, 'Request timed out: no response for 100 ms');
    }
    assert.deepEqual(counts, { ours: 3, pi: 3 });
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});
