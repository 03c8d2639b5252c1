// The Agent differential suite: seeded conversations (tests/js/shared/agent-conversation.mjs)
// through this package's Agent and pi-agent-core 1.6.0's must give the same events, the same
// state reads inside listeners, the same state after every step, the same settlement order
// of prompt()/continue() and waitForIdle(), and the same stream requests.
//
// The one intentional difference: messages a failed run drained from a queue but never sent
// go back to their queue here, where pi loses them (L-137/L-160). A conversation is compared
// up to the step where that happened; that the messages came back is checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { generateConversation, runConversation } from './shared/agent-conversation.mjs';

const OURS = { Agent: ours.Agent, createAssistantMessageEventStream: ours.createAssistantMessageEventStream };
const PI = { Agent: piCore.Agent, createAssistantMessageEventStream: piStream };
const COUNT = Number(process.env.AGENT_CONVERSATIONS ?? 2000);

/**
 * The record without pi's late events (L-175): a `tool_execution_end` whose call started in an earlier step's run,
 * which ended without it (a failed run leaves its slow parallel tools running; pi then delivers their ends to a later
 * run's listeners). This package emits none (tests/js/shared/improvements.mjs); `late` counts what was left out, and
 * `lateStep` is the first step one reached (its listeners saw it, so pi's record from there on is not comparable).
 */
function withoutLate(record) {
  const open = new Map();
  let late = 0;
  let lateStep;
  const events = record.events.filter(({ step, event }) => {
    if (event.type === 'tool_execution_start') open.set(event.toolCallId, step);
    if (event.type !== 'tool_execution_end') return true;
    const started = open.get(event.toolCallId);
    open.delete(event.toolCallId);
    if (started !== undefined && started < step) {
      late += 1;
      lateStep ??= step;
      return false;
    }
    return true;
  });
  return { record: { ...record, events }, late, lateStep };
}

/** The record up to and including step `last`. */
function upTo(record, last) {
  return {
    events: record.events.filter((e) => e.step <= last),
    states: record.states.slice(0, last + 1),
    order: record.order.filter((o) => Number(o.split(' ')[0]) <= last),
  };
}

test(`agent differential: ${COUNT} generated conversations behave as pi-agent-core 1.6.0's Agent (L-129…L-160)`, async () => {
  const failures = [];
  let events = 0;
  let restored = 0;
  let failedRuns = 0;
  let lateEvents = 0;
  for (let seed = 1; seed <= COUNT; seed++) {
    const conv = generateConversation(seed);
    const ours = withoutLate(await runConversation(OURS, conv));
    let a = ours.record;
    assert.equal(ours.late, 0, `seed ${seed}: no late events from an earlier run (L-175)`);
    const theirs = withoutLate(await runConversation(PI, conv));
    let b = theirs.record;
    lateEvents += theirs.late;
    if (theirs.lateStep !== undefined) {
      // A late event reached a later run's listeners (a listener that throws once per step
      // threw at it there): the records are compared up to the step before.
      a = upTo(a, theirs.lateStep - 1);
      b = upTo(b, theirs.lateStep - 1);
    }
    events += b.events.length;
    failedRuns += b.order.filter((o) => o.includes('rejected')).length
      + b.states.filter((s) => s.messages.at(-1)?.content?.[0]?.text === '' && s.errorMessage).length;
    // The first step after which the queues differ: pi lost drained messages there.
    const diverged = a.states.findIndex((s, i) => JSON.stringify(s.peek) !== JSON.stringify(b.states[i]?.peek) || s.queued !== b.states[i]?.queued);
    if (diverged >= 0) {
      restored += 1;
      const left = upTo(a, diverged);
      const right = upTo(b, diverged);
      right.states = right.states.map((s, i) => (i === diverged ? { ...s, peek: left.states[i].peek, queued: left.states[i].queued } : s));
      try {
        assert.deepEqual(left, right);
        assert.ok(a.states[diverged].queued && a.states[diverged].peek.length > 0, 'ours kept the unsent messages');
        assert.ok(b.states[diverged].errorMessage, 'only a failed run loses messages');
      } catch (e) {
        failures.push(`seed ${seed} (restored at step ${diverged}): ${e.message.slice(0, 1500)}`);
      }
      continue;
    }
    try {
      assert.deepEqual(a.events, b.events);
      assert.deepEqual(a.reads, b.reads);
      assert.deepEqual(a.states, b.states);
      assert.deepEqual(a.order, b.order);
      assert.deepEqual(a.busy, b.busy);
      assert.deepEqual(a.requests, b.requests);
      assert.deepEqual(a.toolLog, b.toolLog);
      // Object identity: the context, its messages array and the message objects each hook
      // and event carries (by first sighting), as in pi.
      // What follows the last agent_end is late work of an ended run (L-175).
      const settled = (ids) => ids.slice(0, ids.findLastIndex((x) => x.startsWith('agent_end:')) + 1);
      if (theirs.lateStep === undefined) assert.deepEqual(settled(a.identities), settled(b.identities));
    } catch (e) {
      failures.push(`seed ${seed}: ${e.message.slice(0, 3000)}`);
    }
    if (failures.length >= 3) break;
  }
  console.log(`agent differential: ${COUNT} conversations, ${events} reference events, ${failedRuns} failed runs, ${restored} with restored queue messages, ${lateEvents} late pi events left out (L-175)`);
  assert.deepEqual(failures, []);
});
