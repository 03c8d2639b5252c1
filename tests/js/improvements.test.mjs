// Each deliberate difference from pi-agent-core 1.6.0 (tests/js/shared/improvements.mjs),
// shown side by side: pi's behaviour, then ours. Nothing waits for time: a test waits for
// what it needs to have happened, and "never" (a hang, a late event) is shown by ordering:
// still so once everything that was queued has run (`drained()`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { IMPROVEMENTS } from './shared/improvements.mjs';
import { assistant, scriptedStream } from './shared/scripted-loop.mjs';
import { drained, deferred } from './helpers.mjs';

const pi = { ...piCore, createAssistantMessageEventStream: piStream };
const A = assistant;
const user = { role: 'user', content: 'hi', timestamp: 1 };
const config = { model: { id: 'm', api: 'a', provider: 'p' }, convertToLlm: (m) => m };


/** Whether `promise` has settled, read at any later point. */
function watch(promise) {
  const state = { settled: false };
  promise.then(() => { state.settled = true; }, () => { state.settled = true; });
  return state;
}

const streamOf = scriptedStream;

test('the list of improvements names each rule once', () => {
  const rules = IMPROVEMENTS.map((i) => i.rule);
  assert.equal(new Set(rules).size, rules.length);
  assert.ok(rules.includes('L-175'));
});

test('L-175: after a rejected run, slow parallel tools emit no late events', async () => {
  for (const [impl, expectLate] of [[pi, true], [ours, false]]) {
    const events = [];
    // The slow tool finishes only when released, after the run has rejected.
    const release = deferred();
    const finished = deferred();
    const slow = { name: 'slow', label: 's', description: 's', parameters: { type: 'object' }, execute: async () => { await release.promise; finished.resolve(); return { content: [], details: {} }; } };
    const fast = { name: 'fast', label: 'f', description: 'f', parameters: { type: 'object' }, execute: async () => ({ content: [], details: {} }) };
    const run = impl.runAgentLoop([user], { messages: [], tools: [slow, fast] }, config, async (e) => {
      events.push(e.type);
      if (e.type === 'tool_execution_end') throw new Error('listener failed');
    }, undefined, streamOf(impl, [A([{ type: 'toolCall', id: 'a', name: 'slow', arguments: {} }, { type: 'toolCall', id: 'b', name: 'fast', arguments: {} }], 'toolUse')]));
    await assert.rejects(run, /listener failed/);
    const atRejection = events.length;
    release.resolve();
    await finished.promise;
    // Whatever the slow tool's end sets off has run by now (pi's late events included).
    await drained();
    assert.equal(events.length > atRejection, expectLate, impl === pi ? 'pi emits late' : 'ours does not');
  }
});

test("L-172: runAgentLoopContinue appends to the caller's array in pi, not here", async () => {
  for (const [impl, grows] of [[pi, true], [ours, false]]) {
    const messages = [user];
    await impl.runAgentLoopContinue({ messages }, config, () => {}, undefined, streamOf(impl, []));
    assert.equal(messages.length > 1, grows);
  }
});

test("L-173: pi stamps thinkingLevel on the stream function's own message; we leave it alone", async () => {
  for (const [impl, mutated] of [[pi, true], [ours, false]]) {
    const final = A([{ type: 'text', text: 'x' }]);
    await impl.runAgentLoop([user], { messages: [] }, { ...config, reasoning: 'low' }, () => {}, undefined, streamOf(impl, [final]));
    assert.equal('thinkingLevel' in final, mutated);
  }
});

test('L-32/L-171: when the run rejects, agentLoop consumers get the error instead of waiting forever', async () => {
  // pi's agentLoop leaves the stream open and the rejection unhandled (spec L-32, verified);
  // that unhandled rejection would fail this test process, so only ours runs here.
  // A result that never settled would leave this test pending when the event loop runs dry,
  // which fails it: nothing here keeps the process alive.
  const stream = ours.agentLoop([user], { messages: [] }, { ...config, convertToLlm: () => { throw new Error('convert failed'); } }, undefined, streamOf(ours, []));
  await assert.rejects(stream.result(), /convert failed/);
});

test('L-15/L-170: a stream ended without result hangs pi; ours ends the turn with an error message', async () => {
  for (const [impl, hangs] of [[pi, true], [ours, false]]) {
    const ended = deferred();
    const streamFn = () => {
      const s = impl.createAssistantMessageEventStream();
      queueMicrotask(() => { s.end(); ended.resolve(); });
      return s;
    };
    const run = impl.runAgentLoop([user], { messages: [] }, config, () => {}, undefined, streamFn);
    const state = watch(run);
    await ended.promise;
    if (hangs) {
      // pi: the stream has ended and all that followed has run, and the run is still pending.
      await drained();
      assert.equal(state.settled, false, 'pi still waits');
    } else {
      assert.equal((await run).at(-1).stopReason, 'error');
    }
  }
});
