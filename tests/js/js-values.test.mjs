// JS's own value rules where the core holds JSON in Rust (src/json), side by side with pi:
// object keys in JS's property order in the bytes sent to a provider (array-index keys
// first, ascending), `pattern` on strings with lone surrogates and patterns the `u` flag
// rejects (pi-schema compiles those without it), and `"-0"` coerced to the number -0.
// Found by an outside tester; each case failed before its fix.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import * as piAi from '@earendil-works/pi-ai';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';
import { scriptedStream, assistant } from './shared/scripted-loop.mjs';

const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const ARGS = '{"b":1,"1":2,"a":{"0":1,"z":0,"10":2,"9":3},"01":4}';
const ANSWERS = [
  chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: ARGS } }] }) +
    chunk({}, 'tool_calls') + 'data: [DONE]\n\n',
  chunk({ role: 'assistant', content: 'done' }) + chunk({}, 'stop') + 'data: [DONE]\n\n',
];

/** A Chat Completions server that keeps each request body's bytes. */
async function serve() {
  const raw = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      raw.push(body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(ANSWERS[Math.min(raw.length - 1, ANSWERS.length - 1)]);
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1`, raw };
}

const readTool = {
  name: 'read', label: 'Read', description: 'Reads',
  parameters: { type: 'object', properties: {} },
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }),
};

test('a provider gets tool-call arguments back with their keys in JS order, byte for byte as pi-ai sends them', async () => {
  const run = async (streamFn) => {
    const server = await serve();
    const model = { ...getModel('openai', 'gpt-4o-mini'), api: 'openai-completions', baseUrl: server.baseUrl };
    await ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [readTool] },
      { model, apiKey: 'sk-test-0123456789', convertToLlm: (m) => m }, () => {}, undefined, streamFn);
    return server.raw;
  };
  const [mine, theirs] = [await run(ours.streamSimple), await run(piStreamSimple)];
  assert.equal(mine.length, 2);
  assert.equal(mine[1], theirs[1]);
  assert.ok(mine[1].includes(JSON.stringify(JSON.stringify(JSON.parse(ARGS)))), mine[1]);
});

/** The results of one tool call with `args` against `parameters`, in ours and in pi. */
async function results(parameters, args) {
  const out = [];
  for (const [impl, ai] of [[ours, ours], [pi, piAi]]) {
    const seen = [];
    const tool = {
      name: 't', label: 't', description: 'd', parameters,
      execute: async (_id, a) => { seen.push(a); return { content: [{ type: 'text', text: 'ran' }], details: {} }; },
    };
    const call = assistant([{ type: 'toolCall', id: 'c1', name: 't', arguments: args }], 'toolUse');
    const messages = await impl.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
      { model: { id: 'm', api: 'a', provider: 'p' }, convertToLlm: (m) => m }, () => {}, undefined, scriptedStream(ai, [call]));
    const result = messages.find((m) => m.role === 'toolResult');
    out.push({ text: result.content[0].text, isError: result.isError, seen });
  }
  return out;
}

test('pattern: a lone surrogate is one character, as in JS, and a pattern the u flag rejects compiles without it', async () => {
  for (const [pattern, value] of [['^.$', '\ud800'], ['^x.y$', 'x\udc00y'], ['^[^a]$', '\ud800'], ['^\\-$', '-'], ['^\\-$', 'x'], ['^.$', '\ud83d\ude00']]) {
    const [mine, theirs] = await results({ type: 'object', properties: { x: { type: 'string', pattern } } }, { x: value });
    assert.deepEqual(mine, theirs, `${pattern} on ${JSON.stringify(value)}`);
  }
});

test('coercion: the string "-0" becomes the number -0, as Number("-0") is', async () => {
  const [mine, theirs] = await results({ type: 'object', properties: { x: { type: 'number' } } }, { x: '-0' });
  assert.ok(Object.is(theirs.seen[0].x, -0));
  assert.ok(Object.is(mine.seen[0].x, -0));
});
