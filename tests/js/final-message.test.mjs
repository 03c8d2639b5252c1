// A final message from a JS stream function whose content pi's tool-call scan
// (`message.content.filter((c) => c.type === "toolCall")`, L-49) throws on fails the run there,
// as in pi, with V8's words: content that is no array, or a `null` block. Side by side with
// pi-agent-core 1.6.0. Found by an outside tester: before the fix, such a message was taken
// as it was (a string content ended the turn with "stop"; the tool after a null block ran).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import * as piAi from '@earendil-works/pi-ai';
import { scriptedStream, assistant } from './shared/scripted-loop.mjs';

const model = { id: 'm', name: 'm', api: 'a', provider: 'p', baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const tool = {
  name: 't', label: 't', description: 't', parameters: { type: 'object', properties: {} },
  execute: async () => ({ content: [{ type: 'text', text: 'ran' }], details: {} }),
};
const CASES = [
  ['string content', { ...assistant([], 'stop'), content: 'hello' }],
  ['null content', { ...assistant([], 'stop'), content: null }],
  ['no content', (({ content, ...rest }) => rest)(assistant([], 'stop'))],
  ['a null block before a tool call', assistant([null, { type: 'toolCall', id: 'c1', name: 't', arguments: {} }], 'toolUse')],
];

async function agentRun(impl, final) {
  const agent = new impl.Agent({ initialState: { model, tools: [tool] }, streamFn: scriptedStream(piAi, [final]) });
  const events = [];
  agent.subscribe((e) => events.push(e.type === 'turn_end' ? `turn_end ${e.message.stopReason} ${e.message.errorMessage ?? ''}` : e.type));
  await agent.prompt('go');
  return { events, last: agent.state.messages.at(-1).errorMessage };
}

async function loopRun(impl, final) {
  try {
    await impl.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, { model, convertToLlm: (m) => m }, () => {}, undefined, scriptedStream(piAi, [final]));
    return 'resolved';
  } catch (e) {
    return `rejected: ${e.message}`;
  }
}

for (const [name, final] of CASES) {
  test(`a final message with ${name} fails the run as in pi (L-49)`, async () => {
    const [mine, theirs] = [await agentRun(ours, final), await agentRun(pi, final)];
    assert.deepEqual(mine, theirs);
    assert.ok(!mine.events.includes('tool_execution_start'), 'no tool runs');
    assert.equal(await loopRun(ours, final), await loopRun(pi, final));
  });
}
