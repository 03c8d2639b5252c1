// Seeded bad input for every entry point (shared/bad-input.mjs): the loop functions,
// runToolCall, the Agent, streamSimple and streamProxy, fed wrong types, Proxies, throwing
// getters, deep and huge values, broken iterators, cut and garbled streams, re-entrant calls
// and aborts. Every case must settle (before a generous timer: counted, never timed), with
// no uncaught exception or unhandled rejection, and a normal run must work after every
// hundred. The runAgentLoop(Continue) cases also run through pi-agent-core 1.6.0: where pi
// settles, ours must settle the same way (resolve or reject), except where we deliberately
// differ (DIFFERENT below). SEED=n runs one case and prints it.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import {
  loopCase, runLoopPlan, toolCallCase, runToolCallPlan, agentCase, runAgentPlan, streamCase, runStreamPlan,
  outcome, userMessage, assistantMessage, model, RUNAWAY, startStreamServer,
} from './shared/bad-input.mjs';

const pi = { ...piCore, createAssistantMessageEventStream: piStream };
const ONLY = process.env.SEED ? Number(process.env.SEED) : undefined;
/** Seeds per family; the families draw from disjoint seed ranges. */
const COUNTS = { loop: 2000, runToolCall: 400, Agent: 500, stream: 400 };
/** A case still pending when this timer fires counts as hung (never a timing assertion). */
const BOUND_MS = 10_000;

// Every uncaught exception and unhandled rejection is recorded and fails the case it
// happened in (the handlers also keep one from ending the test process).
const uncaught = [];
const onUncaught = (error) => uncaught.push(`uncaught exception: ${describe(error)}`);
const onUnhandled = (error) => uncaught.push(`unhandled rejection: ${describe(error)}`);
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUnhandled);
after(() => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUnhandled);
});

function describe(value) {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  } catch {
    return '[unprintable]';
  }
}

const HUNG = Symbol('hung');
async function bounded(promise, ms = BOUND_MS) {
  let timer;
  const hung = new Promise((resolve) => { timer = setTimeout(resolve, ms, HUNG); });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Lets late errors surface: rejections are reported after the microtasks, timers after. */
const quiet = () => new Promise((resolve) => setTimeout(() => setImmediate(resolve), 1));

/** Runs `fn`, then checks it settled and left nothing uncaught. Returns its outcome. */
async function settles(label, fn) {
  uncaught.length = 0;
  const out = await bounded(outcome(fn));
  await quiet();
  assert.notEqual(out, HUNG, `${label}: still pending after ${BOUND_MS} ms`);
  assert.deepEqual(uncaught, [], `${label}: errors escaped`);
  return out;
}

/** `f()`, or `fallback` when reading the caller's own hostile object throws. */
function safely(f, fallback) {
  try {
    return f();
  } catch {
    return fallback;
  }
}

/** What must hold for a loop run that resolved: it ended with turn_end and agent_end,
 * agent_end holds the returned messages, and each tool call of a message that did not fail
 * has exactly one result, in order (L-48). */
function checkLoopRun(label, out) {
  if (out.kind !== 'resolve') return;
  const messages = out.value;
  assert.ok(Array.isArray(messages), `${label}: resolved with ${describe(messages)}`);
  const types = out.events.map((e) => e.type);
  assert.equal(types.at(-1), 'agent_end', `${label}: last event ${types.at(-1)}`);
  assert.equal(types.at(-2), 'turn_end', label);
  const end = out.events.at(-1).messages;
  assert.equal(end.length, messages.length, label);
  end.forEach((m, i) => assert.ok(m === messages[i], `${label}: agent_end message ${i} is not the returned one`));
  messages.forEach((m, i) => {
    if (safely(() => m.role, undefined) !== 'assistant') return;
    const stop = safely(() => m.stopReason, undefined);
    const calls = safely(() => m.content.filter((b) => b?.type === 'toolCall').map((b) => b.id), undefined);
    if (calls === undefined) return;
    const next = messages.slice(i + 1);
    const stopAt = next.findIndex((x) => safely(() => x.role, undefined) !== 'toolResult');
    const results = (stopAt < 0 ? next : next.slice(0, stopAt)).map((x) => x.toolCallId);
    if (stop === 'error' || stop === 'aborted') assert.equal(results.length, 0, `${label}: L-48`);
    else assert.deepEqual(results, calls, `${label}: one result per tool call`);
  });
}

/** A plain run that must succeed, in the same process, after hostile ones. */
async function normalRun(label) {
  const events = [];
  const streamFn = () => {
    const s = ours.createAssistantMessageEventStream();
    queueMicrotask(() => s.push({ type: 'done', reason: 'stop', message: assistantMessage([{ type: 'text', text: 'fine' }]) }));
    return s;
  };
  const messages = await bounded(ours.runAgentLoop([userMessage()], { messages: [] }, { model: model(), convertToLlm: (m) => m }, (e) => { events.push(e.type); }, undefined, streamFn));
  assert.notEqual(messages, HUNG, `${label}: a normal run hung`);
  assert.equal(messages.at(-1).content[0].text, 'fine', label);
  assert.deepEqual(events, ['agent_start', 'turn_start', 'message_start', 'message_end', 'message_start', 'message_end', 'turn_end', 'agent_end'], label);
}

/**
 * Where this package deliberately settles differently from pi, by the tags of the case's
 * hostile values:
 * - `data`, `key-messages`: messages, models and tool results must be JSON here; a value
 *   that is not (a Proxy, BigInt, a cycle, a getter that throws, a string for an array) is
 *   a clear error or an error result, where pi passes it on untouched.
 * - `hook-value`: a hook result of the wrong shape fails the run (the hook-value policy,
 *   tests/js/shared/improvements.mjs), where pi passes it on.
 * - `thrown-unprintable`: a tool or hook that throws a value that cannot be read (a revoked
 *   Proxy) gets an error result; pi's own catch block throws on it and the run rejects,
 *   leaving the tool call without a result.
 * - `signal`: a signal whose `aborted` getter throws counts as not aborted.
 * - `trap-has`, `trap-ownKeys`, `trap-getOwnPropertyDescriptor`: arrays are read by index
 *   here, pi's `map` and spread also ask `has` and own keys: a Proxy throwing from those
 *   traps fails one and not the other.
 * - `deep`: nested past the 1,100-level limit, which ours names where pi overflows its stack.
 * Runs where pi hangs or throws outside its Promise are counted (`piHung`): ours settles.
 */
const DIFFERENT = ['data', 'key-messages', 'hook-value', 'thrown-unprintable', 'signal', 'trap-has', 'trap-ownKeys', 'trap-getOwnPropertyDescriptor', 'deep'];

const piSettled = { same: 0, different: 0, piHung: 0, skipped: 0 };
const mismatches = [];

async function loopCaseRun(seed) {
  const plan = loopCase(seed);
  const label = `loop seed ${seed} (${plan.api}: ${plan.sites.join(', ')})`;
  const nested = () => ours.runAgentLoop([userMessage()], { messages: [] }, { model: model(), convertToLlm: (m) => m }, () => {}, undefined, () => {
    const s = ours.createAssistantMessageEventStream();
    queueMicrotask(() => s.push({ type: 'done', reason: 'stop', message: assistantMessage([{ type: 'text', text: 'nested' }]) }));
    return s;
  });
  let run;
  const out = await settles(label, async () => {
    run = await runLoopPlan(plan, ours, { nested });
    return run;
  });
  if (ONLY) console.log(label, plan, run);
  assert.ok(!describe(run.error).includes(RUNAWAY), `${label}: the run went on forever`);
  checkLoopRun(label, out.value);
  // The differential: the runAgentLoop(Continue) cases pi settles.
  if (!plan.api.startsWith('run')) return;
  if (plan.tags.some((t) => DIFFERENT.includes(t))) {
    piSettled.skipped++;
    return;
  }
  if (plan.tags.includes('pi-hangs')) {
    piSettled.piHung++;
    return;
  }
  uncaught.length = 0;
  // pi's own hangs are only counted: a shorter wait for them, which decides nothing.
  const theirs = await bounded(runLoopPlan(plan, pi, { nested: () => undefined }), 2000);
  await quiet();
  const piBroke = uncaught.splice(0);
  if (theirs === HUNG || piBroke.length > 0 || describe(theirs.error).includes(RUNAWAY)) {
    piSettled.piHung++;
    return;
  }
  if (theirs.kind === out.value.kind) piSettled.same++;
  else {
    piSettled.different++;
    mismatches.push(`${label}: pi ${theirs.kind} (${describe(theirs.error)}), ours ${out.value.kind} (${describe(out.value.error)})`);
  }
}

test(`bad input: ${COUNTS.loop} seeded loop cases settle, keep their invariants, and settle as pi does where pi settles`, async () => {
  for (let seed = ONLY ?? 1; seed <= (ONLY ?? COUNTS.loop); seed++) {
    await loopCaseRun(seed);
    if (seed % 100 === 0) await normalRun(`after loop seed ${seed}`);
  }
  await normalRun('after the loop cases');
  if (ONLY) return;
  console.log(`pi differential: ${JSON.stringify(piSettled)}`);
  assert.deepEqual(mismatches, []);
  // The comparison is a real one, not an empty one, and it saw pi hang where ours settles.
  assert.ok(piSettled.same > 300 && piSettled.piHung > 0, JSON.stringify(piSettled));
});

test(`bad input: ${COUNTS.runToolCall} seeded runToolCall cases settle`, async () => {
  const base = 10_000;
  for (let seed = base + 1; seed <= base + COUNTS.runToolCall; seed++) {
    if (ONLY && seed !== ONLY) continue;
    const plan = toolCallCase(seed);
    const out = await settles(`runToolCall seed ${seed} (${plan.tags.join(', ')})`, () => runToolCallPlan(plan, ours));
    // runToolCall never rejects for a tool's failure: a result, or a rejection for input
    // it cannot read at all.
    if (out.value.kind === 'resolve') assert.equal(typeof out.value.value.isError, 'boolean', `seed ${seed}`);
  }
  await normalRun('after the runToolCall cases');
});

test(`bad input: ${COUNTS.Agent} seeded Agent cases settle and leave the Agent idle`, async () => {
  const base = 20_000;
  for (let seed = base + 1; seed <= base + COUNTS.Agent; seed++) {
    if (ONLY && seed !== ONLY) continue;
    const plan = agentCase(seed);
    const label = `Agent seed ${seed} (${plan.ops.map((o) => o.op).join(', ')}; listener ${plan.listener.how})`;
    const out = await settles(label, () => runAgentPlan(plan, ours));
    const { agent } = out.value;
    if (!agent) continue;
    // L-156: once every call settled, the Agent is idle and usable (never stuck streaming).
    assert.equal(await bounded(agent.waitForIdle()), undefined, `${label}: waitForIdle`);
    assert.equal(agent.state.isStreaming, false, `${label}: still streaming`);
    if (ONLY) console.log(label, out.value.results, agent.state.messages);
    if (seed % 50 === 0) await normalRun(`after Agent seed ${seed}`);
  }
  await normalRun('after the Agent cases');
});

test(`bad input: ${COUNTS.stream} seeded streamSimple and streamProxy cases end their stream`, async (t) => {
  // A real server answers; the caller's fetch (the input under test) misbehaves over it.
  const server = await startStreamServer();
  t.after(server.close);
  const base = 30_000;
  for (let seed = base + 1; seed <= base + COUNTS.stream; seed++) {
    if (ONLY && seed !== ONLY) continue;
    const plan = streamCase(seed);
    const label = `${plan.family} seed ${seed} (${plan.site} ${plan.fault.kind})`;
    const out = await settles(label, () => runStreamPlan(plan, ours, server.origin));
    if (ONLY) console.log(label, out.value);
    // Failures are data: the stream ends with one error or done and a final message.
    if (out.value.kind === 'resolve') {
      const { events, result } = out.value.value;
      assert.ok(['done', 'error'].includes(events.at(-1)), `${label}: ended with ${events.at(-1)}`);
      assert.equal(typeof result.stopReason, 'string', label);
    }
  }
  await normalRun('after the stream cases');
});

test('100 hostile runs, then a normal one', { skip: ONLY !== undefined }, async () => {
  for (let seed = 40_001; seed <= 40_100; seed++) await loopCaseRun(seed);
  await normalRun('after 100 hostile runs');
});
