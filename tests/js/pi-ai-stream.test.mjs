// pi-ai's own streamSimple as the stream function of this package's loop, against a local
// OpenAI-compatible server: a full tool-using run with no key and no network.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { runAgentLoop, agentLoop } from 'pi-agent-wasm';
import { streamSimple, getModel } from '@earendil-works/pi-ai/compat';
import { startOpenAIServer, textChunks, toolCallChunks } from './shared/openai-server.mjs';

const server = await startOpenAIServer((body) => {
  const last = body.messages.at(-1);
  if (last.role === 'tool') return textChunks(`The answer is ${last.content} — fertig ✓`);
  return toolCallChunks('call_1', 'calc', { expression: '17*23' });
});
after(() => server.close());

const model = { ...getModel('deepseek', 'deepseek-flash'), baseUrl: server.baseUrl };
const calc = {
  name: 'calc',
  label: 'Calculator',
  description: 'Evaluates a product a*b',
  parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  execute: async (_id, { expression }) => {
    const [a, b] = expression.split('*').map(Number);
    return { content: [{ type: 'text', text: String(a * b) }], details: { a, b } };
  },
};
const config = { model, apiKey: 'local-test-key', convertToLlm: (m) => m };

test('streamSimple drives a tool-using run through this package (L-20, L-21)', async () => {
  const events = [];
  const messages = await runAgentLoop(
    [{ role: 'user', content: 'what is 17*23?', timestamp: Date.now() }],
    { messages: [{ role: 'system', content: 'You are terse.', timestamp: 0 }], tools: [calc] },
    config,
    (e) => { events.push(e); },
    undefined,
    streamSimple,
  );
  const roles = messages.map((m) => m.role);
  assert.deepEqual(roles, ['system', 'user', 'assistant', 'toolResult', 'assistant']);
  assert.equal(messages[2].stopReason, 'toolUse');
  assert.deepEqual(messages[2].content.find((b) => b.type === 'toolCall').arguments, { expression: '17*23' });
  assert.equal(messages[3].content[0].text, '391');
  assert.equal(messages[4].content[0].text, 'The answer is 391 — fertig ✓');
  assert.equal(messages[4].usage.input, 11);
  // Streamed updates arrived as message_update events, argument deltas included.
  const deltas = events.filter((e) => e.type === 'message_update').map((e) => e.assistantMessageEvent.type);
  assert.ok(deltas.includes('toolcall_delta'));
  assert.ok(deltas.includes('text_delta'));
  assert.equal(events.at(-1).type, 'agent_end');
  // The server saw the tool declaration, the key in the header, and the tool result.
  assert.equal(server.requests.length, 2);
  assert.equal(server.requests[0].headers.authorization, 'Bearer local-test-key');
  assert.equal(server.requests[0].body.tools[0].function.name, 'calc');
  assert.equal(server.requests[1].body.messages.at(-1).role, 'tool');
});

test('agentLoop with streamSimple streams the same run observationally', async () => {
  const stream = agentLoop([{ role: 'user', content: 'again: 17*23', timestamp: Date.now() }], { messages: [], tools: [calc] }, config, undefined, streamSimple);
  let updates = 0;
  for await (const e of stream) if (e.type === 'message_update') updates += 1;
  const messages = await stream.result();
  assert.ok(updates > 5);
  assert.equal(messages.at(-1).content[0].text, 'The answer is 391 — fertig ✓');
});
