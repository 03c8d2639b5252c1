// docs/errors.md: the errors the package raises itself carry a stable `code`, with pi's message
// where pi 1.6.0 raises the same error (checked side by side).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'x', provider: 'x' };
const config = { model, convertToLlm: (m) => m };

/** A stream function whose answer waits for `gate` (so a run stays in progress until then). */
function slowAnswer(makeStream, gate) {
  return () => {
    const s = makeStream();
    const message = { role: 'assistant', api: 'x', provider: 'x', model: 'm', usage, timestamp: 1, stopReason: 'stop', content: [{ type: 'text', text: 'ok' }] };
    gate.then(() => {
      s.push({ type: 'start', partial: message });
      s.push({ type: 'done', reason: 'stop', message });
    });
    return s;
  };
}

/** What `fn` threw or rejected with: `{ message, code }`. */
async function failure(fn) {
  try {
    await fn();
  } catch (error) {
    return { message: error.message, code: error.code };
  }
  assert.fail('did not fail');
}

const IMPLS = { ours: { core: ours, stream: ours.createAssistantMessageEventStream }, pi: { core: pi, stream: piStream } };

test('continue with nothing to continue from: no_messages and continue_from_assistant, with pi\'s messages', async () => {
  const assistant = { role: 'assistant', api: 'x', provider: 'x', model: 'm', usage, timestamp: 1, stopReason: 'stop', content: [] };
  for (const [what, run] of [
    ['runAgentLoopContinue, empty', (c) => c.runAgentLoopContinue({ messages: [] }, config, () => {})],
    ['agentLoopContinue, empty', (c) => c.agentLoopContinue({ messages: [] }, config)],
    ['runAgentLoopContinue, after an answer', (c) => c.runAgentLoopContinue({ messages: [assistant] }, config, () => {})],
    ['Agent.continue, empty', (c) => new c.Agent({ initialState: { model }, streamFn: () => {} }).continue()],
    ['Agent.continue, after an answer', (c) => new c.Agent({ initialState: { model, messages: [assistant] }, streamFn: () => {} }).continue()],
  ]) {
    const got = await failure(() => run(ours));
    const ref = await failure(() => run(pi));
    assert.equal(got.message, ref.message, what);
    assert.equal(got.code, /empty/.test(what) ? 'no_messages' : 'continue_from_assistant', what);
  }
});

test('no default stream function: no_default_stream_fn from the loop and from new Agent(), with pi\'s message', async () => {
  const defaults = { ours: ours.getDefaultStreamFn(), pi: undefined };
  try {
    ours.setDefaultStreamFn(undefined);
    const loop = await failure(() => ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [] }, config, () => {}));
    assert.equal(loop.code, 'no_default_stream_fn');
    const agent = await failure(() => new ours.Agent({ initialState: { model } }));
    assert.equal(agent.code, 'no_default_stream_fn');
    assert.equal(agent.message, loop.message);
    // pi has no default until one is set: its loop rejects with the same words.
    const ref = await failure(() => pi.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [] }, config, () => {}));
    assert.equal(agent.message, ref.message);
  } finally {
    ours.setDefaultStreamFn(defaults.ours);
  }
});

test('an Agent asked to start during a run: agent_busy, with pi\'s messages', async () => {
  for (const [name, impl] of Object.entries(IMPLS)) {
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const agent = new impl.core.Agent({ initialState: { model }, streamFn: slowAnswer(impl.stream, gate) });
    const run = agent.prompt('go');
    const messages = [];
    for (const call of [() => agent.prompt('again'), () => agent.continue(), () => agent.reset()]) {
      const got = await failure(call);
      messages.push(got.message);
      if (name === 'ours') assert.equal(got.code, 'agent_busy', got.message);
    }
    open();
    await run;
    IMPLS[name].busy = messages;
  }
  assert.deepEqual(IMPLS.ours.busy, IMPLS.pi.busy);
});

test('a restored Agent asked to start a run before resume(): resume_pending', async () => {
  // A snapshot taken in the middle of a real run (after the prompt, before the answer).
  let open;
  const gate = new Promise((resolve) => { open = resolve; });
  const live = new ours.Agent({ initialState: { model }, streamFn: slowAnswer(ours.createAssistantMessageEventStream, gate) });
  let taken;
  live.subscribe((event) => { if (event.type === 'message_end' && event.message.role === 'user') taken = live.snapshot(); });
  const run = live.prompt('go');
  while (!taken) await new Promise((resolve) => setImmediate(resolve));
  open();
  await run;
  const restored = new ours.Agent({ initialState: { model }, streamFn: slowAnswer(ours.createAssistantMessageEventStream, Promise.resolve()), restore: taken });
  for (const call of [() => restored.prompt('again'), () => restored.continue()]) {
    const got = await failure(call);
    assert.equal(got.code, 'resume_pending', got.message);
  }
  await restored.resume();
  assert.equal(restored.state.messages.at(-1).role, 'assistant');
});

test('continue with a context.messages that is no array: invalid_input naming it (outside tester, round 2)', async () => {
  for (const messages of ['abc', 5, { length: 1 }]) {
    const got = await failure(() => ours.runAgentLoopContinue({ messages }, config, () => {}));
    assert.equal(got.code, 'invalid_input');
    assert.match(got.message, /^context\.messages: expected an array of messages, got an? (string|number|object)$/);
  }
});
