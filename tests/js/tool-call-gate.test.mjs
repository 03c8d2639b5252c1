// Tool calls that wait for a person or a client (issue 33): `needsApproval`, client tools,
// `approve` / `reject` / `resolveToolCall`, through `Agent` and the loop functions, across a
// snapshot and an abort, and with bad answers. Not in pi: pi's runs never wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, ToolCallGate, runAgentLoop, runAgentLoopResume, createAssistantMessageEventStream } from 'pi-agent-wasm';
import { dyingHost } from './shared/dying-host.mjs';

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'a', provider: 'p' };

/** A stream function: first the tool calls `calls`, then a text answer. */
function scripted(calls) {
  let n = 0;
  return () => {
    const s = createAssistantMessageEventStream();
    const first = n++ === 0;
    const content = first ? calls.map(([id, name, args]) => ({ type: 'toolCall', id, name, arguments: args ?? {} })) : [{ type: 'text', text: 'done' }];
    const m = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content, stopReason: first ? 'toolUse' : 'stop', timestamp: 1 };
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...m, content: [] } });
      s.push({ type: 'done', reason: m.stopReason, message: m });
    });
    return s;
  };
}

function tools(log) {
  return {
    pay: { name: 'pay', label: 'pay', description: 'pay', parameters: { type: 'object' }, needsApproval: (args) => (args.amount > 1 ? `${args.amount} EUR` : false), execute: async (_id, a) => { log.push(`pay ${a.amount}`); return { content: [{ type: 'text', text: `paid ${a.amount}` }], details: {} }; } },
    read: { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => { log.push('read'); return { content: [{ type: 'text', text: 'file' }], details: {} }; } },
    title: { name: 'title', label: 'title', description: 'the page title', parameters: { type: 'object' }, client: true },
  };
}

const texts = (messages) => messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolCallId, m.isError, m.content[0]?.text]);
const tick = () => new Promise((r) => setTimeout(r, 5));

test('Agent: an approval and a client call wait, the rest of the batch runs meanwhile, and answers continue the run in pi\'s result order', async () => {
  const log = [];
  const t = tools(log);
  const agent = new Agent({ initialState: { model, tools: [t.pay, t.read, t.title] }, streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'read'], ['c3', 'title']]) });
  const events = [];
  agent.subscribe((e) => { if (e.type.startsWith('tool_execution')) events.push([e.type, e.toolCallId]); });
  const run = agent.prompt('go');
  await tick();
  // In the order they began to wait: the client call at once, the approval after its check.
  assert.deepEqual([...agent.waitingToolCalls].sort((a, b) => a.toolCallId.localeCompare(b.toolCallId)), [
    { toolCallId: 'c1', toolName: 'pay', args: { amount: 5 }, kind: 'approval', reason: '5 EUR' },
    { toolCallId: 'c3', toolName: 'title', args: {}, kind: 'client' },
  ]);
  assert.deepEqual(log, ['read'], 'the read ran while the others wait');
  assert.ok(events.some(([type, id]) => type === 'tool_execution_end' && id === 'c2'));
  agent.approve('c1');
  agent.resolveToolCall('c3', { content: [{ type: 'text', text: 'Example' }], details: { from: 'page' } });
  await run;
  assert.deepEqual(texts(agent.state.messages), [['c1', false, 'paid 5'], ['c2', false, 'file'], ['c3', false, 'Example']]);
  assert.deepEqual(agent.state.messages.find((m) => m.toolCallId === 'c3').details, { from: 'page' });
  assert.deepEqual(agent.waitingToolCalls, []);
  assert.deepEqual(events.filter(([type]) => type === 'tool_execution_waiting').map(([, id]) => id).sort(), ['c1', 'c3']);
  assert.equal(agent.state.messages.at(-1).content[0].text, 'done');
});

test('a rejection is the call\'s error result in words the model can act on; the tool never runs', async () => {
  const log = [];
  const t = tools(log);
  const agent = new Agent({ initialState: { model, tools: [t.pay, t.title] }, streamFn: scripted([['c1', 'pay', { amount: 9 }], ['c2', 'title']]) });
  agent.subscribe((e) => {
    // A listener may answer at once, inside the event.
    if (e.type === 'tool_execution_waiting') agent.reject(e.toolCallId, e.kind === 'approval' ? 'too expensive' : undefined);
  });
  await agent.prompt('go');
  assert.deepEqual(log, []);
  assert.deepEqual(texts(agent.state.messages), [
    ['c1', true, 'The user rejected tool call pay: too expensive It did not run.'],
    ['c2', true, 'The client did not run tool call title. It has no result.'],
  ]);
});

test('needsApproval that says no (false, a function, the Agent option) runs the tool at once; the Agent\'s needsApproval hook can ask for any tool', async () => {
  const log = [];
  const t = tools(log);
  const quiet = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['c1', 'pay', { amount: 1 }]]) });
  await quiet.prompt('go');
  assert.deepEqual(log, ['pay 1']);
  const asked = [];
  const agent = new Agent({
    initialState: { model, tools: [t.read] },
    streamFn: scripted([['c1', 'read']]),
    needsApproval: ({ toolName, args, context }) => { asked.push([toolName, Array.isArray(context.messages)]); return 'reads are audited'; },
  });
  agent.subscribe((e) => { if (e.type === 'tool_execution_waiting') { assert.equal(e.reason, 'reads are audited'); agent.approve(e.toolCallId); } });
  await agent.prompt('go');
  assert.deepEqual(asked, [['read', true]]);
  assert.deepEqual(texts(agent.state.messages), [['c1', false, 'file']]);
});

test('bad answers are refused with invalid_input and change nothing: unknown or settled ids, the wrong verb, a result of the wrong shape, a reason that is no string', async () => {
  const log = [];
  const t = tools(log);
  const agent = new Agent({ initialState: { model, tools: [t.pay, t.title] }, streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'title']]) });
  const run = agent.prompt('go');
  await tick();
  const before = JSON.stringify(agent.waitingToolCalls);
  const refused = [
    () => agent.approve('nope'),
    () => agent.approve(5),
    () => agent.approve('c2'),
    () => agent.resolveToolCall('c1', { content: [] }),
    () => agent.resolveToolCall('c2', { content: 'text' }),
    () => agent.resolveToolCall('c2', null),
    () => agent.resolveToolCall('c2', { content: [], isError: 'yes' }),
    () => agent.reject('c1', 42),
  ];
  for (const f of refused) assert.throws(f, (e) => e.code === 'invalid_input' && e instanceof Error, String(f));
  assert.equal(JSON.stringify(agent.waitingToolCalls), before);
  agent.approve('c1');
  assert.throws(() => agent.approve('c1'), /no tool call "c1" is waiting/);
  agent.resolveToolCall('c2', { content: [{ type: 'text', text: 'T' }], isError: true });
  await run;
  assert.deepEqual(texts(agent.state.messages), [['c1', false, 'paid 5'], ['c2', true, 'T']]);
});

test('an abort ends waiting calls with pi\'s abort result; an approval after it is refused', async () => {
  const log = [];
  const t = tools(log);
  const agent = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]) });
  const run = agent.prompt('go');
  await tick();
  agent.abort();
  await run;
  const result = agent.state.messages.find((m) => m.role === 'toolResult');
  assert.deepEqual([result.isError, result.content[0].text], [true, 'Operation aborted']);
  assert.deepEqual(agent.waitingToolCalls, []);
  assert.throws(() => agent.approve('c1'), { code: 'invalid_input' });
  assert.deepEqual(log, []);
});

test('sequential tools: the next call starts only when the waiting one is answered', async () => {
  const log = [];
  const t = tools(log);
  const agent = new Agent({ initialState: { model, tools: [t.pay, t.read] }, toolExecution: 'sequential', streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'read']]) });
  const run = agent.prompt('go');
  await tick();
  assert.deepEqual(log, []);
  agent.approve('c1');
  await run;
  assert.deepEqual(log, ['pay 5', 'read']);
});

test('a waiting call survives snapshot and restore in another Agent: answered before resume() it runs exactly once; unanswered it waits again', async () => {
  for (const answer of ['before', 'after', 'reject']) {
    const log = [];
    const t = tools(log);
    const options = { initialState: { model, tools: [t.pay, t.read] }, streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'read']]) };
    let saved;
    let dead = false;
    const first = new Agent({ ...options, onCheckpoint: (snapshot, event) => {
      if (!dead) saved = JSON.stringify(snapshot);
      if (event?.type === 'tool_execution_waiting') dead = true; // the process dies here
    } });
    first.prompt('go');
    await tick();
    const snapshot = JSON.parse(saved);
    assert.deepEqual(snapshot.waiting, [{ toolCallId: 'c1', toolName: 'pay', args: { amount: 5 }, kind: 'approval', reason: '5 EUR' }]);
    const second = new Agent({ ...options, streamFn: scripted([]), restore: snapshot });
    assert.deepEqual(second.waitingToolCalls.map((c) => c.toolCallId), ['c1']);
    const waitingEvents = [];
    second.subscribe((e) => { if (e.type === 'tool_execution_waiting') waitingEvents.push(e.toolCallId); });
    if (answer === 'before') second.approve('c1');
    if (answer === 'reject') second.reject('c1', 'no');
    // An answer given while no run holds the call is in the next snapshot.
    if (answer !== 'after') assert.ok(second.snapshot().waiting[0].answer);
    const resumed = second.resume();
    if (answer === 'after') {
      await tick();
      assert.deepEqual(waitingEvents, ['c1'], 'the resumed run asks again');
      second.approve('c1');
    }
    await resumed;
    const paid = log.filter((l) => l === 'pay 5').length;
    assert.equal(paid, answer === 'reject' ? 0 : 1, answer);
    const results = texts(second.state.messages);
    assert.deepEqual(results.map(([id]) => id), ['c1', 'c2'], answer);
    assert.equal(results[0][1], answer === 'reject', answer);
    assert.equal(log.filter((l) => l === 'read').length, 1, 'the read ran once, before the snapshot');
  }
});

test('loop functions: config.toolCallGate answers, checkpoints carry the waiting calls, and runAgentLoopResume continues; without a gate the call is an error result naming it', async () => {
  const log = [];
  const t = tools(log);
  const noGate = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [t.pay] }, { model, convertToLlm: (m) => m }, () => {}, undefined, scripted([['c1', 'pay', { amount: 5 }]]));
  assert.deepEqual(texts(noGate), [['c1', true, 'Tool pay needs approval, and this run has no toolCallGate to answer it (config.toolCallGate)']]);
  const gate = new ToolCallGate();
  let checkpoint;
  const config = { model, convertToLlm: (m) => m, toolCallGate: gate, onCheckpoint: (c) => { checkpoint ??= c.waiting ? JSON.parse(JSON.stringify(c)) : undefined; } };
  runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [t.pay] }, config, () => {}, undefined, scripted([['c1', 'pay', { amount: 5 }]]));
  await tick();
  assert.deepEqual(gate.waiting.map((c) => c.toolCallId), ['c1']);
  assert.deepEqual(checkpoint.waiting.map((c) => c.kind), ['approval']);
  // Another process: a fresh gate takes the answer and the resumed run uses it.
  const later = new ToolCallGate();
  const events = [];
  const resumed = runAgentLoopResume(checkpoint, { tools: [t.pay] }, { model, convertToLlm: (m) => m, toolCallGate: later }, (e) => events.push(e.type), undefined, scripted([]));
  await tick();
  assert.deepEqual(later.waiting.map((c) => c.toolCallId), ['c1']);
  later.approve('c1');
  const messages = await resumed;
  assert.deepEqual(texts(messages), [['c1', false, 'paid 5']]);
  assert.equal(events.filter((e) => e === 'tool_execution_waiting').length, 1);
});

test('a needsApproval that throws gives the call an error result naming what it threw; restore refuses a bad waiting list', async () => {
  const tool = { name: 'x', label: 'x', description: 'x', parameters: { type: 'object' }, needsApproval: () => { throw new Error('policy service down'); }, execute: async () => ({ content: [], details: {} }) };
  const agent = new Agent({ initialState: { model, tools: [tool] }, streamFn: scripted([['c1', 'x']]) });
  await agent.prompt('go');
  assert.deepEqual(texts(agent.state.messages), [['c1', true, 'policy service down']]);
  const snapshot = agent.snapshot();
  for (const waiting of ['x', [5], [{ toolCallId: 'a', toolName: 'b', kind: 'later' }], [{ toolCallId: 'a', toolName: 'b', kind: 'approval', answer: { approved: 'yes' } }]]) {
    assert.throws(() => new Agent({ initialState: { model }, restore: { ...snapshot, waiting } }), { code: 'invalid_input' }, JSON.stringify(waiting));
  }
});

/** A stream function that answers from the context: tool calls for a new prompt, text once
 * the tool results are in (so a restored run asks what it still needs). */
function contextual(calls) {
  return (_model, context) => {
    const s = createAssistantMessageEventStream();
    const done = context.messages.at(-1)?.role === 'toolResult';
    const content = done ? [{ type: 'text', text: 'done' }] : calls.map(([id, name, args]) => ({ type: 'toolCall', id, name, arguments: args ?? {} }));
    const m = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content, stopReason: done ? 'stop' : 'toolUse', timestamp: 1 };
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...m, content: [] } });
      s.push({ type: 'done', reason: m.stopReason, message: m });
    });
    return s;
  };
}

test('a run with a waiting call, cut at every step (each event, each checkpoint before a tool): the restored run ends with one result per call, and no tool runs twice', async () => {
  const json = (v) => JSON.parse(JSON.stringify(v));
  const calls = [['c1', 'pay', { amount: 5 }], ['c2', 'read']];
  function session(log, killAt, restore) {
    let agent;
    const { seen, step } = dyingHost(killAt, () => agent.snapshot());
    const t = tools(log);
    agent = new Agent({
      initialState: { model, tools: [t.pay, t.read] },
      streamFn: contextual(calls),
      restore,
      onCheckpoint: (_snapshot, event) => {
        if (!seen.dead && event === undefined) step();
      },
    });
    agent.subscribe((e) => {
      if (seen.dead) return;
      // The person answers a moment after the card shows.
      if (e.type === 'tool_execution_waiting') setTimeout(() => { if (!seen.dead) agent.approve(e.toolCallId); }, 2);
      step();
    });
    return { agent, seen };
  }
  const whole = session([], -1);
  await whole.agent.prompt('go');
  const steps = whole.seen.steps;
  assert.ok(steps > 10, `steps: ${steps}`);
  let waitingCuts = 0;
  for (let k = 0; k < steps; k++) {
    const log = [];
    const first = session(log, k);
    await first.agent.prompt('go').catch(() => {});
    await tick();
    const snapshot = first.seen.snapshot;
    assert.ok(snapshot, `k=${k}: a snapshot`);
    assert.deepEqual(json(snapshot), snapshot);
    if (snapshot.waiting) waitingCuts++;
    const second = session(log, -1, snapshot);
    for (const c of second.agent.waitingToolCalls) second.agent.approve(c.toolCallId);
    await second.agent.resume();
    const results = texts(second.agent.state.messages);
    assert.deepEqual(results.map(([id]) => id), ['c1', 'c2'], `k=${k}: one result per call, in order`);
    assert.equal(second.agent.state.messages.at(-1).content[0].text, 'done', `k=${k}`);
    for (const [id, tool] of [['c1', 'pay 5'], ['c2', 'read']]) {
      const n = log.filter((l) => l === tool).length;
      assert.ok(n <= 1, `k=${k}: ${tool} ran ${n} times`);
      const [, isError, text] = results.find(([r]) => r === id);
      if (!isError) assert.equal(n, 1, `k=${k}: ${id} has a result, so it ran`);
      else assert.match(text, /interrupted/, `k=${k}: ${id} was cut while running`);
    }
    assert.equal(second.agent.snapshot().position, undefined, `k=${k}: nothing left to resume`);
    assert.deepEqual(second.agent.waitingToolCalls, []);
  }
  assert.ok(waitingCuts >= 1, `cuts while a call waited: ${waitingCuts}`);
});

test('outside tester, round 1: duplicate ids, a listener that throws at the waiting event, an abort after resume: no call is left listed or orphaned', async () => {
  const log = [];
  const t = tools(log);
  // Two calls of one response with the same id: the second is an error result, the first waits.
  const dup = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['dup', 'pay', { amount: 5 }], ['dup', 'pay', { amount: 6 }]]) });
  const run = dup.prompt('go');
  await tick();
  assert.deepEqual(dup.waitingToolCalls.map((c) => c.args.amount), [5]);
  dup.approve('dup');
  await run;
  assert.deepEqual(texts(dup.state.messages), [['dup', false, 'paid 5'], ['dup', true, 'Tool call id "dup" is already waiting for an answer: tool call ids must be unique']]);
  // A listener that throws at the waiting event: that call's error result, nothing left waiting.
  const thrower = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]) });
  thrower.subscribe((e) => { if (e.type === 'tool_execution_waiting') throw new Error('card failed'); });
  await thrower.prompt('go');
  assert.deepEqual(thrower.waitingToolCalls, []);
  assert.throws(() => thrower.approve('c1'), { code: 'invalid_input' });
  assert.equal(thrower.snapshot().waiting, undefined);
  // Restored while waiting, resumed, then aborted: nothing left listed.
  log.length = 0;
  let saved;
  const first = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]), onCheckpoint: (s, e) => { if (e?.type === 'tool_execution_waiting') saved ??= JSON.parse(JSON.stringify(s)); } });
  first.prompt('go');
  await tick();
  const second = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([]), restore: saved });
  const resumed = second.resume();
  await tick();
  second.abort();
  await resumed;
  assert.deepEqual(second.waitingToolCalls, []);
  assert.deepEqual(texts(second.state.messages), [['c1', true, 'Operation aborted']]);
  assert.deepEqual(log, []);
});

test('outside tester, round 1: needsApproval sees the run\'s messages and its signal; one that never settles still ends at abort(); no waiting event after an abort', async () => {
  const seen = [];
  const asks = { name: 'asks', label: 'asks', description: 'asks', parameters: { type: 'object' }, needsApproval: (_args, context, signal) => { seen.push([context.messages.map((m) => m.role), signal instanceof AbortSignal]); return false; }, execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }) };
  const agent = new Agent({ initialState: { model, tools: [asks] }, streamFn: scripted([['c1', 'asks']]) });
  await agent.prompt('go');
  assert.deepEqual(seen, [[['system', 'user', 'assistant'], true]]);
  const hangs = { ...asks, name: 'hangs', needsApproval: () => new Promise(() => {}) };
  const stuck = new Agent({ initialState: { model, tools: [hangs] }, streamFn: scripted([['c1', 'hangs']]) });
  const waits = [];
  stuck.subscribe((e) => { if (e.type === 'tool_execution_waiting') waits.push(e); });
  const run = stuck.prompt('go');
  await tick();
  stuck.abort();
  await run;
  assert.deepEqual(texts(stuck.state.messages), [['c1', true, 'Operation aborted']]);
  assert.deepEqual(waits, []);
});

test('outside tester, round 1: a cut after the checkpoint before execute but before needsApproval answered asks again on resume, not "interrupted"; many waiting calls add one abort listener', async () => {
  const log = [];
  const t = tools(log);
  let saved;
  const first = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]), onCheckpoint: (s, e) => { if (e === undefined) saved ??= JSON.parse(JSON.stringify(s)); } });
  first.prompt('go');
  await tick();
  assert.deepEqual(saved.position.executing, ['c1'], 'saved as the tool was about to be called');
  const second = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted([]), restore: saved });
  second.subscribe((e) => { if (e.type === 'tool_execution_waiting') second.approve(e.toolCallId); });
  await second.resume();
  assert.deepEqual(texts(second.state.messages), [['c1', false, 'paid 5']]);
  assert.deepEqual(log, ['pay 5']);
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  const many = new Agent({ initialState: { model, tools: [t.pay] }, streamFn: scripted(Array.from({ length: 15 }, (_, i) => [`m${i}`, 'pay', { amount: 5 }])) });
  const run = many.prompt('go');
  await tick();
  assert.equal(many.waitingToolCalls.length, 15);
  for (const c of many.waitingToolCalls) many.approve(c.toolCallId);
  await run;
  await tick();
  process.off('warning', onWarning);
  assert.deepEqual(warnings, []);
});

test('outside tester, round 1: restore checks the waiting list as the live API checks answers; resolveToolCall checks each block and names what a getter threw', async () => {
  const log = [];
  const t = tools(log);
  let saved;
  const first = new Agent({ initialState: { model, tools: [t.pay, t.title] }, streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'title']]), onCheckpoint: (s) => { if (s.waiting?.length === 2) saved ??= JSON.parse(JSON.stringify(s)); } });
  first.prompt('go');
  await tick();
  const pay = saved.waiting.find((c) => c.kind === 'approval');
  const title = saved.waiting.find((c) => c.kind === 'client');
  const forged = [
    [{ ...pay, answer: { result: { content: [{ type: 'text', text: 'FORGED' }] } } }, title],
    [pay, { ...title, answer: { approved: true } }],
    [pay, { ...title, answer: { result: { content: [{ type: 'weird' }, 42] } } }],
    [pay, { ...title, toolCallId: 'nope' }],
    [pay, pay],
    [{ ...pay, kind: 'later' }],
  ];
  for (const waiting of forged) {
    assert.throws(() => new Agent({ initialState: { model, tools: [t.pay, t.title] }, restore: { ...saved, waiting } }), { code: 'invalid_input' }, JSON.stringify(waiting));
  }
  const { position, ...ended } = saved;
  assert.throws(() => new Agent({ initialState: { model }, restore: ended }), /no run \(position\) to wait in/);
  const thrown = new Error('getter broke');
  assert.throws(() => first.resolveToolCall('c2', { get content() { throw thrown; } }), (e) => e.code === 'invalid_input' && e.cause === thrown);
  assert.throws(() => first.resolveToolCall('c2', { content: [null, 42] }), { code: 'invalid_input' });
  assert.deepEqual(first.waitingToolCalls.map((c) => c.toolCallId).sort(), ['c1', 'c2']);
  first.abort();
});

test('expiry: a wait that expires (the tool\'s expiresAfterMs, else the Agent\'s) ends with an error result that says it timed out; a late answer is refused', async () => {
  const log = [];
  const t = tools(log);
  const pay = { ...t.pay, expiresAfterMs: 30 };
  const agent = new Agent({ initialState: { model, tools: [pay, t.title] }, expiresAfterMs: 60, streamFn: scripted([['c1', 'pay', { amount: 5 }], ['c2', 'title']]) });
  const waiting = [];
  agent.subscribe((e) => { if (e.type === 'tool_execution_waiting') waiting.push(e); });
  const before = Date.now();
  await agent.prompt('go');
  const byId = Object.fromEntries(waiting.map((e) => [e.toolCallId, e]));
  // The event carries when the wait ends: the tool's own 30 ms, the Agent's 60 ms.
  assert.ok(byId.c1.expiresAt >= before + 30 && byId.c1.expiresAt < before + 1000);
  assert.ok(byId.c2.expiresAt >= before + 60 && byId.c2.expiresAt < before + 1000);
  assert.ok(Date.now() >= byId.c2.expiresAt, 'the run went on only when the waits expired');
  const at = (id) => new Date(byId[id].expiresAt).toISOString();
  assert.deepEqual(texts(agent.state.messages), [
    ['c1', true, `Tool call pay timed out waiting for approval (it expired at ${at('c1')}). It did not run.`],
    ['c2', true, `Tool call title timed out waiting for its client's result (it expired at ${at('c2')}). It has no result.`],
  ]);
  assert.deepEqual(log, []);
  assert.throws(() => agent.approve('c1'), (e) => e.code === 'invalid_input' && e.notWaiting === true);
  assert.deepEqual(agent.waitingToolCalls, []);
});

test('expiry: an answer in time cancels the timer (nothing keeps the process alive); a wait beyond setTimeout\'s 24.8 days does not fire at once; a bad expiresAfterMs is the call\'s error result', async () => {
  const log = [];
  const t = tools(log);
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const base = timers();
  const far = new Agent({ initialState: { model, tools: [{ ...t.pay, expiresAfterMs: 40 * 24 * 3600 * 1000 }] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]) });
  const run = far.prompt('go');
  await tick();
  await tick();
  assert.equal(far.waitingToolCalls.length, 1, 'still waiting: a 40-day wait did not fire at once');
  assert.ok(far.waitingToolCalls[0].expiresAt > Date.now() + 39 * 24 * 3600 * 1000);
  far.approve('c1');
  await run;
  assert.deepEqual(log, ['pay 5']);
  assert.equal(timers(), base, 'the answered wait left no timer behind');
  for (const bad of [0, -5, Number.NaN, Infinity, '100']) {
    const agent = new Agent({ initialState: { model, tools: [{ ...t.pay, expiresAfterMs: bad }] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]) });
    await agent.prompt('go');
    const [[, isError, text]] = texts(agent.state.messages);
    assert.equal(isError, true);
    assert.match(text, /^Tool pay: expiresAfterMs must be a positive number of milliseconds/);
  }
});

test('expiry: a restored call keeps the time it expires at; restored after it, the resumed run ends it as timed out at once; restore checks expiresAt', async () => {
  const log = [];
  const t = tools(log);
  const pay = { ...t.pay, expiresAfterMs: 80 };
  const first = new Agent({ initialState: { model, tools: [pay] }, streamFn: scripted([['c1', 'pay', { amount: 5 }]]) });
  const run = first.prompt('go');
  await tick();
  const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
  const expiresAt = snapshot.waiting[0].expiresAt;
  assert.equal(typeof expiresAt, 'number');
  first.abort();
  await run;
  // Restored before it expires: still waiting, with the same time.
  const again = new Agent({ initialState: { model, tools: [pay] }, restore: snapshot, streamFn: scripted([]) });
  assert.equal(again.waitingToolCalls[0].expiresAt, expiresAt);
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 5));
  assert.throws(() => again.approve('c1'), /expired at/, 'an answer after the time is refused, even before the run resumes');
  assert.deepEqual(again.waitingToolCalls, [], 'past its time, it is not listed as waiting (outside tester, round 2)');
  const asked = [];
  again.subscribe((e) => { if (e.type === 'tool_execution_waiting') asked.push(e.toolCallId); });
  await again.resume();
  assert.deepEqual(asked, [], 'the resumed run does not ask again for a call past its time');
  assert.deepEqual(log, []);
  assert.match(texts(again.state.messages)[0][2], /^Tool call pay timed out waiting for approval/);
  assert.throws(() => new Agent({ initialState: { model }, restore: { ...snapshot, waiting: [{ ...snapshot.waiting[0], expiresAt: 'soon' }] } }), (e) => e.code === 'invalid_input' && /expiresAt must be a number/.test(e.message));
});
