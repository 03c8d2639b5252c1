// Hooks get the live context (issue 32), as pi 1.6.0's hooks get its `currentContext`: one
// object for the run, whose `messages` array the loop appends to, and a hook's changes to it
// in place persist into later requests (L-43, L-45, L-50, L-74, L-99, L-107). Each scenario
// runs on both implementations; what each request sends, the run's messages and the
// identities the hooks see must agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { answer } from './shared/scripted-loop.mjs';

const IMPLS = {
  ours: { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream },
  pi: { run: pi.runAgentLoop, stream: piStream },
};
const model = { id: 'm', api: 'a', provider: 'p' };

const tool = (name) => ({ name, label: name, description: name, parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: `${name} ran` }], details: {} }) });

/** What a request carried: each message's role and its text, in order. */
const shape = (messages) => messages.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : (m.content ?? []).map((b) => b.text ?? b.name ?? b.type).join('+')}`);

/** A run of `turns` model turns (each but the last calls tool `read`), with `hooks` in the
 * config; returns what each request sent, the run's messages (or its rejection) and a log. */
async function run(name, hooks, { turns = 3, tools = [tool('read')] } = {}) {
  const impl = IMPLS[name];
  const requests = [];
  const log = [];
  let n = 0;
  const streamFn = (_model, context) => {
    requests.push(shape(context.messages));
    n += 1;
    return n < turns
      ? answer(impl.stream, [{ type: 'toolCall', id: `c${n}`, name: 'read', arguments: {} }], 'toolUse')
      : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop');
  };
  const { listen, ...rest } = hooks(log);
  const config = { model, convertToLlm: (m) => m.filter((x) => x.role !== 'system'), ...rest };
  try {
    const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, config, (e) => listen?.(e), undefined, streamFn);
    return { requests, messages: shape(messages), log };
  } catch (error) {
    return { requests, error: error instanceof Error ? error.constructor.name : typeof error, log };
  }
}

const note = (text) => ({ role: 'user', content: text, timestamp: 2 });

const SCENARIOS = {
  // The case: a message prepareNextTurn pushes reaches the next request.
  'prepareNextTurn pushes into context.messages': () => ({
    prepareNextTurn(turn) { turn.context.messages.push(note('reminder')); },
  }),
  'prepareRequest pushes, then replaces the context on the next turn': () => {
    let calls = 0;
    return {
      prepareRequest({ context }) {
        calls += 1;
        if (calls === 1) context.messages.push(note('added in place'));
        if (calls === 2) return { context: { ...context, messages: context.messages.slice(1) } };
        return undefined;
      },
    };
  },
  'beforeToolCall pushes; afterToolCall splices the first message out': () => ({
    beforeToolCall({ context }) { context.messages.push(note('before the result')); },
    afterToolCall({ context }) { context.messages.splice(0, 1); },
  }),
  'transformContext changes its array in place and returns it': () => ({
    transformContext(messages) { if (messages.length > 3) messages.splice(1, 2); return messages; },
  }),
  'transformContext changes its array in place and returns a copy': () => ({
    transformContext(messages) { messages.push(note('kept')); return messages.slice(0, 1); },
  }),
  'finishTurn empties the transcript in place': () => ({
    finishTurn(turn) { turn.context.messages.length = 0; },
  }),
  'finishTurn replaces context.messages with a new array': () => ({
    finishTurn(turn) { turn.context.messages = [note('fresh start')]; },
  }),
  'prepareRequest adds a tool to context.tools in place': () => ({
    prepareRequest({ context }) { if (!context.tools.some((t) => t.name === 'late')) context.tools.push(tool('late')); },
  }),
  // A listener that kept the context from a hook sees the transcript as it is (outside tester).
  'a listener pops from the context a hook kept': (log, kept = {}) => ({
    prepareRequest({ context }) { kept.context = context; },
    listen(e) { if (e.type === 'turn_end' && kept.context) kept.context.messages.pop(); },
  }),
  'a listener pushes into the context a hook kept': (log, kept = {}) => ({
    prepareRequest({ context }) { kept.context = context; },
    listen(e) { if (e.type === 'turn_end' && kept.context) kept.context.messages.push(note('from a listener')); },
  }),
  // A context a hook returns stays live (outside tester, round 2).
  'prepareRequest returns the context; a listener replaces its last message at message_end': (log, kept = {}) => ({
    prepareRequest(c) { kept.context ??= c.context; return { context: c.context }; },
    listen(e) {
      if (e.type === 'message_end' && e.message.role === 'assistant' && kept.context) {
        const m = kept.context.messages;
        m[m.length - 1] = { ...m[m.length - 1], redacted: true };
      }
    },
  }),
  'prepareNextTurn returns the context; a listener pushes at tool_execution_start': (log, kept = {}) => ({
    prepareNextTurn(t) { kept.context = t.context; return { context: t.context }; },
    listen(e) { if (e.type === 'tool_execution_start' && kept.context) kept.context.messages.push(note('pushed')); },
  }),
  'prepareRequest freezes context.messages': () => ({
    prepareRequest({ context }) { Object.freeze(context.messages); },
  }),
  'a hook sets context.messages to something that is no array': () => ({
    finishTurn(turn) { turn.context.messages = 'gone'; },
  }),
};

for (const [title, hooks] of Object.entries(SCENARIOS)) {
  test(`live context as pi: ${title}`, async () => {
    const piRun = await run('pi', hooks);
    const ourRun = await run('ours', hooks);
    assert.deepEqual(ourRun.requests, piRun.requests, 'what each request sent');
    if (piRun.error) assert.ok(ourRun.error, `pi rejects (${piRun.error}); ours must too`);
    else assert.deepEqual(ourRun.messages, piRun.messages, 'agent_end messages');
  });
}

test('live context as pi: one context object and one messages array for the run, seen by every hook', async () => {
  const seen = {};
  for (const name of ['pi', 'ours']) {
    const contexts = [];
    const arrays = [];
    const keep = ({ context }) => { contexts.push(context); arrays.push(context.messages); };
    await run(name, () => ({
      prepareRequest: keep,
      beforeToolCall: keep,
      afterToolCall: keep,
      finishTurn: (turn) => keep(turn),
      prepareNextTurn: (turn) => keep(turn),
      transformContext: (messages) => { arrays.push(messages); return messages; },
    }));
    seen[name] = {
      contexts: contexts.length,
      oneContext: contexts.every((c) => c === contexts[0]),
      oneArray: arrays.every((a) => a === arrays[0]),
      // The array a hook kept grows as the loop appends: it holds the whole run at the end.
      finalLength: arrays[0].length,
    };
  }
  assert.deepEqual(seen.ours, seen.pi);
  assert.equal(seen.pi.oneContext, true);
  assert.equal(seen.pi.oneArray, true);
});

test('live context: the caller\'s context is not changed by the run (pi copies it at the start)', async () => {
  const messages = [note('history')];
  const context = { messages, tools: [tool('read')] };
  const before = [...messages];
  await ours.runAgentLoop([note('go')], context, { model, convertToLlm: (m) => m, prepareNextTurn(turn) { turn.context.messages.push(note('x')); } }, () => {}, undefined,
    (() => { let n = 0; return () => (n++ === 0 ? answer(ours.createAssistantMessageEventStream, [{ type: 'toolCall', id: 'c', name: 'read', arguments: {} }], 'toolUse') : answer(ours.createAssistantMessageEventStream, [{ type: 'text', text: 'ok' }], 'stop')); })());
  assert.equal(context.messages, messages);
  assert.deepEqual(messages, before);
});
