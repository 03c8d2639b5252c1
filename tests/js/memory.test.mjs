// Runs must not leak wasm memory: linear memory never shrinks, so after warm-up its size
// must stay flat over many runs. A tool's onUpdate callback handed to JS once kept each
// run's whole identity table alive (about 380 KB per run of this shape).
import { test } from 'node:test';
import assert from 'node:assert/strict';
// The package's own loader (the module 'pi-agent-wasm' resolves to): the live instance's size.
import { memorySize } from '../../pkg/wasm.js';
import { runAgentLoop, createAssistantMessageEventStream, ready } from 'pi-agent-wasm';

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'test', provider: 'test' };

function response(turn) {
  const s = createAssistantMessageEventStream();
  const calls = turn < 5 ? [0, 1, 2, 3].map((i) => ({ type: 'toolCall', id: `t${turn}-${i}`, name: 'work', arguments: { i } })) : [];
  const message = { role: 'assistant', api: 'test', provider: 'test', model: 'm', usage, content: [{ type: 'text', text: 'x'.repeat(2000) }, ...calls], stopReason: calls.length ? 'toolUse' : 'stop', timestamp: 1 };
  s.push({ type: 'start', partial: { ...message, content: [] } });
  s.push({ type: 'done', reason: message.stopReason, message });
  return s;
}
const work = {
  name: 'work', label: 'work', description: 'reports progress', parameters: { type: 'object' },
  execute: async (_id, _args, _signal, onUpdate) => {
    onUpdate({ content: [{ type: 'text', text: 'half' }], details: {} });
    return { content: [{ type: 'text', text: 'y'.repeat(1000) }], details: {} };
  },
};

async function oneRun() {
  let turn = 0;
  await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [work] }, { model, convertToLlm: (m) => m }, () => {}, undefined, () => response(turn++));
}

test('100 tool-using runs leave wasm memory flat after warm-up (no per-run leak)', async () => {
  await ready();
  for (let i = 0; i < 20; i++) await oneRun();
  const before = memorySize();
  for (let i = 0; i < 100; i++) await oneRun();
  const grown = memorySize() - before;
  assert.ok(grown <= 256 * 1024, `wasm memory grew by ${grown} bytes over 100 runs`);
});

test('200 built-in-stream turns through one Agent leave wasm memory flat after warm-up', async () => {
  const { Agent } = await import('pi-agent-wasm');
  const { startScenarioServer } = await import('./shared/openai-server.mjs');
  const server = await startScenarioServer('openai-completions');
  try {
    const calc = {
      name: 'calc', label: 'calc', description: 'multiplies', parameters: { type: 'object', properties: { expression: { type: 'string' } } },
      execute: async (_id, { expression }) => ({ content: [{ type: 'text', text: String(expression.split('*').reduce((a, b) => a * b, 1)) }], details: {} }),
    };
    const agent = new Agent({
      initialState: { model: { id: 'local', api: 'openai-completions', provider: 'local', baseUrl: server.baseUrl, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 100 }, tools: [calc] },
      getApiKey: () => 'k',
    });
    await ready();
    const run = async () => {
      await agent.prompt('what is 17*23?');
      agent.reset();
    };
    for (let i = 0; i < 20; i++) await run();
    const before = memorySize();
    for (let i = 0; i < 100; i++) await run();
    const grown = memorySize() - before;
    assert.deepEqual(agent.state.messages.map((m) => m.role), ['system'], 'reset keeps the replayed system message');
    assert.ok(grown <= 256 * 1024, `wasm memory grew by ${grown} bytes over 100 Agent runs (200 turns)`);
  } finally {
    await server.close();
  }
});
