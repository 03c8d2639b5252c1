// One owner per value (issue 32): a tool result's `content` and `details` stay the tool's own
// objects. The loop reads neither, so the tool-result message carries the very objects the
// tool returned, and fields JSON cannot hold (a BigInt, a cycle, a class instance) pass
// through untouched, as in pi 1.6.0 (L-120).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';

const IMPLS = {
  ours: { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream },
  pi: { run: pi.runAgentLoop, stream: piStream },
};
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'a', provider: 'p' };

function answer(make, content, stopReason) {
  const s = make();
  const message = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content, stopReason, timestamp: 1 };
  s.push({ type: 'start', partial: message });
  s.push({ type: 'done', reason: stopReason, message });
  return s;
}

class Stat {
  constructor(size) { this.size = size; }
}

async function run(impl) {
  const cycle = { name: 'cycle' };
  cycle.self = cycle;
  const returned = {
    content: [{ type: 'text', text: 'file body' }],
    details: { size: 10n, cycle, stat: new Stat(3) },
  };
  let calls = 0;
  const streamFn = () => (calls++ === 0
    ? answer(impl.stream, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' } }], 'toolUse')
    : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
  const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => returned };
  const ends = [];
  const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
    { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'tool_execution_end' || e.type === 'message_end') ends.push(e); }, undefined, streamFn);
  return { returned, messages, ends };
}

test('a tool result\'s content and details are the tool\'s own objects in the message and the events, as pi', async () => {
  for (const name of ['pi', 'ours']) {
    const { returned, messages, ends } = await run(IMPLS[name]);
    const message = messages.find((m) => m.role === 'toolResult');
    assert.equal(message.isError, false, name);
    assert.equal(message.content, returned.content, `${name}: content is the tool's array`);
    assert.equal(message.details, returned.details, `${name}: details is the tool's object`);
    assert.equal(message.details.size, 10n);
    assert.ok(message.details.stat instanceof Stat);
    const end = ends.find((e) => e.type === 'tool_execution_end');
    assert.equal(end.result, returned, `${name}: tool_execution_end carries the result object`);
    const messageEnd = ends.find((e) => e.type === 'message_end' && e.message.role === 'toolResult');
    assert.equal(messageEnd.message, message, `${name}: message_end and agent_end share the message`);
  }
});

test('a checkpointed run keeps every checkpoint JSON: a tool result JSON cannot hold is the call\'s error result, naming why', async () => {
  const impl = IMPLS.ours;
  for (const details of [{ size: 10n }, (() => { const c = {}; c.self = c; return { c }; })()]) {
    let calls = 0;
    const streamFn = () => (calls++ === 0
      ? answer(impl.stream, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: {} }], 'toolUse')
      : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
    const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'x' }], details }) };
    const saved = [];
    const onCheckpoint = (checkpoint) => { saved.push(JSON.stringify(checkpoint)); };
    const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
      { model, convertToLlm: (m) => m, onCheckpoint }, () => {}, undefined, streamFn);
    const result = messages.find((m) => m.role === 'toolResult');
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^a tool result cannot be converted to JSON: /);
    assert.ok(saved.length > 4, `${saved.length} checkpoints, each JSON`);
    assert.equal(messages.at(-1).content[0].text, 'done');
  }
  // The same tool in a run without checkpoints: the result passes through, as in pi.
  const { messages } = await run(impl);
  assert.equal(messages.find((m) => m.role === 'toolResult').isError, false);
});
