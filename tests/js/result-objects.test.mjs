// Result objects read as pi reads them (`result.content`, `beforeResult.block`, …), not as JSON
// sees them: a class instance's getters, a prototype's fields and a Proxy's `get` trap count.
// Side by side with pi-agent-core 1.6.0, through `Agent` and `runToolCall`. Found by an
// outside tester: before the fix, a `beforeToolCall` returning a class instance did not block
// (the tool ran), and a tool resolving a class instance lost its content and `isError`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import * as piAi from '@earendil-works/pi-ai';
import { scriptedStream, assistant } from './shared/scripted-loop.mjs';

const model = { id: 'm', name: 'm', api: 'a', provider: 'p', baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const call = { type: 'toolCall', id: 'c1', name: 'act', arguments: {} };

class Deny {
  get block() { return true; }
  get reason() { return 'denied by policy'; }
}
class Output {
  #text;
  #error;
  constructor(text, error) { this.#text = text; this.#error = error; }
  get content() { return [{ type: 'text', text: this.#text }]; }
  get details() { return { length: this.#text.length }; }
  get isError() { return this.#error; }
}
const proxied = (fields) => new Proxy({}, { get: (_, k) => fields[k] });

/** One prompt through `impl`'s Agent with a tool `act` whose `execute` gives `result()`. */
async function agentRun(impl, hooks, result) {
  const ran = [];
  const tool = {
    name: 'act', label: 'act', description: 'acts', parameters: { type: 'object', properties: {} },
    execute: async () => { ran.push(1); return result(); },
  };
  const agent = new impl.Agent({
    initialState: { model, tools: [tool] },
    streamFn: scriptedStream(piAi, [assistant([call], 'toolUse')]),
    ...hooks,
  });
  const ends = [];
  agent.subscribe((e) => { if (e.type === 'tool_execution_end') ends.push({ result: e.result, isError: e.isError }); });
  await agent.prompt('go');
  const message = agent.state.messages.find((m) => m.role === 'toolResult');
  const { content, details, isError } = message;
  return { ran: ran.length, message: { content, details, isError }, eventIsError: ends[0].isError, eventResult: ends[0].result };
}

async function toolCallRun(impl, hooks, result) {
  let ran = 0;
  const tool = {
    name: 'act', label: 'act', description: 'acts', parameters: { type: 'object', properties: {} },
    execute: async () => { ran++; return result(); },
  };
  const out = await impl.runToolCall(call, { tools: [tool], context: { messages: [] }, assistantMessage: assistant([call], 'toolUse'), ...hooks });
  return { ran, content: out.result.content, isError: out.isError };
}

const ok = () => ({ content: [{ type: 'text', text: 'done' }], details: {} });
const CASES = [
  ['beforeToolCall returns a class instance whose block and reason are getters (L-99)', { beforeToolCall: async () => new Deny() }, ok],
  ['beforeToolCall returns a Proxy with a get trap (L-99)', { beforeToolCall: async () => proxied({ block: true, reason: 'no' }) }, ok],
  ['beforeToolCall returns an object whose block sits on its prototype (L-99)', { beforeToolCall: async () => Object.create({ block: true, terminate: true }) }, ok],
  ['execute resolves a class instance with getters for content, details and isError (L-118)', {}, () => new Output('ENOENT', true)],
  ['execute resolves a Proxy with a get trap (L-118)', {}, () => proxied({ content: [{ type: 'text', text: 'via trap' }], isError: false })],
  ['afterToolCall returns fields from its prototype (L-108)', { afterToolCall: async () => Object.create({ content: [{ type: 'text', text: 'replaced' }], isError: true }) }, ok],
  ['afterToolCall returns a class instance with getters (L-108)', { afterToolCall: async () => new Output('after', true) }, ok],
];

for (const [name, hooks, result] of CASES) {
  test(`${name}: read as pi reads it`, async () => {
    const [mine, theirs] = [await agentRun(ours, hooks, result), await agentRun(pi, hooks, result)];
    assert.equal(mine.ran, theirs.ran, 'whether the tool ran');
    assert.deepEqual(mine.message, theirs.message, 'the toolResult message');
    assert.equal(mine.eventIsError, theirs.eventIsError, 'tool_execution_end.isError');
    const [mineCall, theirCall] = [await toolCallRun(ours, hooks, result), await toolCallRun(pi, hooks, result)];
    assert.deepEqual(mineCall, theirCall, 'runToolCall');
  });
}

test('afterToolCall merges into a class instance as pi\'s `{ ...result, content, details, usage, terminate }` does (L-108)', async () => {
  const hooks = { afterToolCall: async () => ({ content: [{ type: 'text', text: 'replaced' }] }) };
  const made = () => Object.assign(new Output('raw', true), { own: 1 });
  const [mine, theirs] = [await agentRun(ours, hooks, made), await agentRun(pi, hooks, made)];
  // The spread copies own properties only: the getters' isError is read for the outcome, not copied.
  assert.deepEqual(Object.keys(mine.eventResult), Object.keys(theirs.eventResult).filter((k) => theirs.eventResult[k] !== undefined));
  assert.equal(JSON.stringify(mine.eventResult), JSON.stringify(theirs.eventResult));
  assert.deepEqual(mine.message, theirs.message);
  assert.equal(mine.eventIsError, theirs.eventIsError);
});

test('a result object stays the very object in tool_execution_end (L-117), its getters read once more for the transcript', async () => {
  const made = [];
  const mine = await agentRun(ours, {}, () => { const o = new Output('x', false); made.push(o); return o; });
  assert.equal(mine.eventResult, made[0]);
  assert.ok(mine.eventResult instanceof Output);
  assert.deepEqual(mine.message.content, [{ type: 'text', text: 'x' }]);
});

test('a getter that throws in a result gives the call an error result naming what it threw, as in pi (L-101)', async () => {
  const hooks = { beforeToolCall: async () => ({ get block() { throw new Error('policy store offline'); } }) };
  const [mine, theirs] = [await agentRun(ours, hooks, ok), await agentRun(pi, hooks, ok)];
  assert.equal(mine.ran, 0);
  assert.deepEqual(mine.message, theirs.message);
  assert.deepEqual(mine.message.content, [{ type: 'text', text: 'policy store offline' }]);
});

test('afterToolCall\'s isError that is no boolean counts by its truthiness, as pi\'s stored value reads (L-108)', async () => {
  for (const [isError, tool] of [['yes', ok], [1, ok], [0, () => new Output('failed', true)], ['', () => new Output('failed', true)]]) {
    const hooks = { afterToolCall: async () => ({ isError }) };
    const [mine, theirs] = [await agentRun(ours, hooks, tool), await agentRun(pi, hooks, tool)];
    assert.equal(theirs.message.isError, isError, 'pi stores the value itself');
    assert.equal(mine.message.isError, Boolean(isError));
    assert.equal(mine.eventIsError, Boolean(theirs.eventIsError));
    assert.deepEqual(mine.message.content, theirs.message.content);
  }
});
