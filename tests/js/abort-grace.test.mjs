// An aborted run never hangs on a Promise of the caller's that never settles (`abortGraceMs`):
// a tool's `execute`, the stream function, a hook, a listener. pi 1.6.0 waits forever in each
// of these (its runs await them with no bound); here the run goes on as if the Promise had
// rejected with an `Operation aborted` error, once `abortGraceMs` has passed since the abort.
// Nothing of pi's changes when the caller's Promises settle: a tool that ends soon after the
// abort gives its own result, as in pi.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, runAgentLoop, createAssistantMessageEventStream } from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'a', provider: 'p' };
const never = () => new Promise(() => {});
/** A regression here would hang: each test fails after this long instead. */
const T = { timeout: 20_000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A stream function: the tool calls `calls` first, then a text answer. */
function scripted(calls, make = createAssistantMessageEventStream) {
  let n = 0;
  return () => {
    const s = make();
    const first = n++ === 0;
    const content = first ? calls.map(([id, name]) => ({ type: 'toolCall', id, name, arguments: {} })) : [{ type: 'text', text: 'done' }];
    const m = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content, stopReason: first ? 'toolUse' : 'stop', timestamp: 1 };
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...m, content: [] } });
      s.push({ type: 'done', reason: m.stopReason, message: m });
    });
    return s;
  };
}

const tool = (name, execute) => ({ name, label: name, description: name, parameters: { type: 'object' }, execute });
const ok = (text) => ({ content: [{ type: 'text', text }], details: {} });
const results = (messages) => messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolCallId, m.isError, m.content[0]?.text]);
/** The timers Node has pending (a bound left armed would keep a process alive). */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('runAgentLoop: a tool that never settles gets an error result abortGraceMs after the abort; the batch\'s other tool keeps its own, and every message is in agent_end', T, async () => {
  const controller = new AbortController();
  const events = [];
  const tools = [
    tool('hang', () => { setTimeout(() => controller.abort(), 5); return never(); }),
    tool('fast', async () => ok('fast result')),
  ];
  const t0 = Date.now();
  const before = timers();
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, { model, convertToLlm: (m) => m, abortGraceMs: 40 },
    (e) => events.push(e), controller.signal, scripted([['h1', 'hang'], ['f1', 'fast']]));
  const waited = Date.now() - t0;
  assert.ok(waited >= 40, `ended ${waited} ms after the start, before the grace had passed`);
  const got = results(messages);
  assert.equal(got.length, 2, 'one result for each call');
  assert.deepEqual(got.find(([id]) => id === 'f1'), ['f1', false, 'fast result']);
  const [, isError, text] = got.find(([id]) => id === 'h1');
  assert.equal(isError, true);
  assert.match(text, /^Operation aborted: not settled 40 ms after the abort \(abortGraceMs\)$/);
  const end = events.at(-1);
  assert.equal(end.type, 'agent_end');
  assert.deepEqual(end.messages, messages);
  assert.equal(events.filter((e) => e.type === 'tool_execution_end').length, 2);
  await sleep(100);
  assert.equal(timers(), before, 'no timer is left armed after the run');
});

test('pi 1.6.0 waits forever in the same run (the difference this bound makes)', T, async () => {
  const controller = new AbortController();
  let ended = false;
  const tools = [tool('hang', () => { setTimeout(() => controller.abort(), 5); return never(); })];
  pi.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, { model, convertToLlm: (m) => m },
    () => {}, controller.signal, scripted([['h1', 'hang']], piStream)).then(() => { ended = true; }, () => { ended = true; });
  await sleep(150);
  assert.equal(ended, false);
});

test('runAgentLoop: a stream function whose Promise never settles, and one whose iteration never ends, reject the run after the grace', T, async () => {
  for (const streamFn of [never, () => ({ [Symbol.asyncIterator]: () => ({ next: never }), result: never })]) {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 5);
    await assert.rejects(
      runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m, abortGraceMs: 20 }, () => {}, controller.signal, streamFn),
      (error) => error.code === 'aborted' && /Operation aborted/.test(error.message),
    );
  }
});

test('runAgentLoop: a listener and a beforeToolCall hook that never settle after the abort', T, async () => {
  // The listener: its Promise for `turn_end` never settles.
  const controller = new AbortController();
  const run = runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('t', async () => ok('r'))] },
    { model, convertToLlm: (m) => m, abortGraceMs: 20 },
    (e) => { if (e.type === 'turn_end') { controller.abort(); return never(); } }, controller.signal, scripted([['c1', 't']]));
  await assert.rejects(run, (error) => error.code === 'aborted');
  // The hook: the call gets an error result, the run goes on.
  const c2 = new AbortController();
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('t', async () => ok('ran'))] },
    { model, convertToLlm: (m) => m, abortGraceMs: 20, beforeToolCall: () => { c2.abort(); return never(); } },
    () => {}, c2.signal, scripted([['c1', 't']]));
  const [[id, isError, text]] = results(messages);
  assert.equal(id, 'c1');
  assert.equal(isError, true);
  assert.match(text, /Operation aborted/);
});

test('a tool that ends within the grace gives its own result, as in pi; without an abort nothing is bounded', T, async () => {
  const controller = new AbortController();
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('slow', (_id, _a, signal) => new Promise((resolve) => {
    signal.addEventListener('abort', () => setTimeout(() => resolve(ok('cleaned up')), 20));
    setTimeout(() => controller.abort(), 5);
  }))] }, { model, convertToLlm: (m) => m, abortGraceMs: 200 }, () => {}, controller.signal, scripted([['s1', 'slow']]));
  assert.deepEqual(results(messages), [['s1', false, 'cleaned up']]);
  // No abort: a tool slower than the grace is waited for.
  const slow = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('slow', () => sleep(60).then(() => ok('late')))] },
    { model, convertToLlm: (m) => m, abortGraceMs: 10 }, () => {}, new AbortController().signal, scripted([['s1', 'slow']]));
  assert.deepEqual(results(slow), [['s1', false, 'late']]);
});

test('abortGraceMs: Infinity waits as pi does; a bad value is invalid_input', T, async () => {
  const controller = new AbortController();
  let finish;
  let ended = false;
  const run = runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('t', () => new Promise((r) => { finish = r; controller.abort(); }))] },
    { model, convertToLlm: (m) => m, abortGraceMs: Infinity }, () => {}, controller.signal, scripted([['c1', 't']]));
  run.then(() => { ended = true; });
  await sleep(80);
  assert.equal(ended, false, 'still waiting for the tool');
  finish(ok('at last'));
  assert.deepEqual(results(await run), [['c1', false, 'at last']]);
  for (const bad of [-1, NaN, '5', {}]) {
    const events = [];
    await assert.rejects(
      runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m, abortGraceMs: bad }, (e) => events.push(e), undefined, scripted([])),
      (error) => error.code === 'invalid_input' && /abortGraceMs must be a number of milliseconds/.test(error.message),
    );
    assert.deepEqual(events, [], 'nothing ran');
    // The Agent refuses it at once.
    assert.throws(() => new Agent({ initialState: { model }, streamFn: scripted([]), abortGraceMs: bad }), (error) => error.code === 'invalid_input');
  }
  // null, as undefined: the default.
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m, abortGraceMs: null }, () => {}, undefined, scripted([]));
  assert.equal(messages.length, 2);
});

test('two runs at once: only the aborted one\'s awaits are ended', T, async () => {
  const aborted = new AbortController();
  const live = new AbortController();
  const a = runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('hang', () => { aborted.abort(); return never(); })] },
    { model, convertToLlm: (m) => m, abortGraceMs: 10 }, () => {}, aborted.signal, scripted([['a1', 'hang']]));
  const b = runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('slow', () => sleep(80).then(() => ok('b done')))] },
    { model, convertToLlm: (m) => m, abortGraceMs: 10 }, () => {}, live.signal, scripted([['b1', 'slow']]));
  const [ma, mb] = await Promise.all([a, b]);
  assert.match(results(ma)[0][2], /Operation aborted/);
  assert.deepEqual(results(mb), [['b1', false, 'b done']]);
});

test('Agent: abort() while a tool never settles ends the run, and the next prompt runs', T, async () => {
  let calls = 0;
  const agent = new Agent({
    initialState: { model, tools: [tool('hang', () => (calls++ === 0 ? never() : Promise.resolve(ok('second time'))))] },
    streamFn: (() => { let f = scripted([['h1', 'hang']]); return (...a) => f(...a); })(),
    abortGraceMs: 30,
  });
  const first = agent.prompt('go');
  while (calls === 0) await sleep(2);
  agent.abort();
  await first;
  const r = results(agent.state.messages);
  assert.equal(r.length, 1);
  assert.equal(r[0][1], true);
  assert.match(r[0][2], /Operation aborted/);
  assert.equal(agent.state.isStreaming, false);
  // The agent is free again.
  agent.streamFunction = scripted([['h2', 'hang']]);
  await agent.prompt('again');
  assert.deepEqual(results(agent.state.messages).at(-1), ['h2', false, 'second time']);
});

test('the grace is abortGraceMs from the abort, not twice that (outside tester)', T, async () => {
  const grace = 400;
  const controller = new AbortController();
  let abortedAt;
  let endedAt;
  const tools = [tool('hang', () => { setTimeout(() => { abortedAt = performance.now(); controller.abort(); }, 5); return never(); })];
  await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, { model, convertToLlm: (m) => m, abortGraceMs: grace },
    (e) => { if (e.type === 'tool_execution_end') endedAt = performance.now(); }, controller.signal, scripted([['h1', 'hang']]));
  const waited = endedAt - abortedAt;
  // At least the grace; well before twice it (timers on a busy machine run late, not early).
  assert.ok(waited >= grace - 1, `ended ${waited} ms after the abort`);
  assert.ok(waited < grace * 1.75, `ended ${waited} ms after the abort, for a grace of ${grace}`);
});

test('Agent: a listener that hangs again on the failure message\'s events after the abort: prompt() rejects with the aborted error, and the agent is idle and usable (outside tester)', T, async () => {
  let hang = true;
  const agent = new Agent({ initialState: { model }, streamFn: scripted([]), abortGraceMs: 30 });
  agent.subscribe((e) => {
    // The answer's message_end, then the failure message's own.
    if (hang && e.type === 'message_end' && e.message.role === 'assistant') {
      agent.abort();
      return never();
    }
    return undefined;
  });
  await assert.rejects(agent.prompt('hi'), (error) => error.code === 'aborted');
  assert.equal(agent.state.isStreaming, false);
  await agent.waitForIdle();
  hang = false;
  await agent.prompt('again');
  assert.equal(agent.state.messages.at(-1).content[0].text, 'done');
});

test('Agent: an onCheckpoint that hangs on every call after the abort does not keep the agent busy', T, async () => {
  let aborted = false;
  const agent = new Agent({
    initialState: { model, tools: [tool('t', T, async () => { agent.abort(); aborted = true; return ok('r'); })] },
    streamFn: scripted([['c1', 't']]),
    abortGraceMs: 30,
    onCheckpoint: () => (aborted ? never() : undefined),
  });
  await agent.prompt('go').catch((error) => assert.equal(error.code, 'aborted'));
  assert.equal(agent.state.isStreaming, false);
  await agent.waitForIdle();
});
