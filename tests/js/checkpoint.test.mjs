// Checkpoint and restore through the public API, the way a host that must survive restarts
// uses it: an `Agent` snapshot taken in a listener (through JSON) and `restore` + `resume()`
// on a new agent, and the loop functions' `onCheckpoint` with `runAgentLoopResume`.
//
// A reference session (parallel tools, a sequential tool with progress updates, a steering
// message sent while a tool runs, a follow-up) is cut after every event index. The resumed
// transcript must equal the uninterrupted one, but for a call whose tool was running and is
// not safe to replay (its result is the interrupted error). Events already delivered are not
// delivered again (but for a response cut while streaming, which is requested again), none
// is lost, and no tool runs twice unless it says `replay: "safe"`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dyingHost } from './shared/dying-host.mjs';
import {
  Agent,
  createAssistantMessageEventStream,
  runAgentLoop,
  runAgentLoopResume,
  agentLoopResume,
} from 'pi-agent-wasm';

const usage = (n) => ({ input: n, output: n, cacheRead: 0, cacheWrite: 0, totalTokens: 2 * n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const model = { id: 'scripted', api: 'scripted', provider: 'scripted' };

/** The responses, in order: which one a request gets is decided by how many responses the
 * transcript already has, so a request made again gets the same answer. */
const RESPONSES = [
  { text: 'looking', calls: [['c1', 'look', { q: 1 }], ['c2', 'look', { q: 2 }]] },
  { text: 'writing', calls: [['w1', 'write', { t: 'a' }], ['c3', 'look', { q: 3 }]] },
  { text: 'done', calls: [] },
  { text: 'bye', calls: [] },
];

function streamFn(_model, context) {
  const n = context.messages.filter((m) => m.role === 'assistant').length;
  const script = RESPONSES[n] ?? { text: 'extra', calls: [] };
  const s = createAssistantMessageEventStream();
  const base = { role: 'assistant', api: model.api, provider: model.provider, model: model.id, usage: usage(n + 1) };
  const partial = { ...base, content: [], stopReason: 'pending', timestamp: 1 };
  queueMicrotask(async () => {
    s.push({ type: 'start', partial: { ...partial } });
    partial.content.push({ type: 'text', text: '' });
    s.push({ type: 'text_start', contentIndex: 0, partial: { ...partial } });
    for (const word of script.text.split('')) {
      partial.content[0] = { type: 'text', text: partial.content[0].text + word };
      s.push({ type: 'text_delta', contentIndex: 0, delta: word, partial: { ...partial } });
      await null;
    }
    s.push({ type: 'text_end', contentIndex: 0, content: script.text, partial: { ...partial } });
    for (const [id, name, args] of script.calls) {
      const call = { type: 'toolCall', id, name, arguments: args };
      partial.content.push(call);
      const i = partial.content.length - 1;
      s.push({ type: 'toolcall_start', contentIndex: i, partial: { ...partial } });
      s.push({ type: 'toolcall_end', contentIndex: i, toolCall: call, partial: { ...partial } });
    }
    const stopReason = script.calls.length > 0 ? 'toolUse' : 'stop';
    s.push({ type: 'done', reason: stopReason, message: { ...partial, content: partial.content.slice(), stopReason } });
  });
  return s;
}

/** Fresh tools whose executions go to `runs`. */
function tools(runs) {
  const look = {
    name: 'look', label: 'look', description: 'reads', parameters: { type: 'object' }, replay: 'safe',
    async execute(id, params) {
      runs.push(id);
      await new Promise((r) => setTimeout(r, 1));
      return { content: [{ type: 'text', text: `saw ${params.q}` }], details: {} };
    },
  };
  const write = {
    name: 'write', label: 'write', description: 'writes', parameters: { type: 'object' }, executionMode: 'sequential',
    async execute(id, params, _signal, onUpdate) {
      runs.push(id);
      await null;
      onUpdate?.({ content: [{ type: 'text', text: 'half' }], details: {} });
      await new Promise((r) => setTimeout(r, 1));
      return { content: [{ type: 'text', text: `wrote ${params.t}` }], details: {} };
    },
  };
  return [look, write];
}

const user = (text) => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 });
const json = (v) => JSON.parse(JSON.stringify(v));

function label(e) {
  if (e.type === 'message_start' || e.type === 'message_end') return `${e.type}(${e.message.role})`;
  if (e.type === 'message_update') return `${e.type}(${e.assistantMessageEvent.type})`;
  if (e.type.startsWith('tool_execution')) return `${e.type}(${e.toolCallId})`;
  return e.type;
}

/** Without the fields a clock sets. */
function timeless(m) {
  const { timestamp, durationMs, ...rest } = m;
  // As JSON, what a snapshot holds: a toolResult the loop made has pi's own `usage:
  // undefined`, which a message restored from JSON does not.
  return JSON.parse(JSON.stringify(rest));
}

/** Drops the events of a response cut while streaming (a `message_start` of an assistant
 * with no `message_end`), which the resumed run requests again. */
function withoutCutResponse(labels) {
  const s = labels.lastIndexOf('message_start(assistant)');
  if (s >= 0 && !labels.slice(s).includes('message_end(assistant)')) return { labels: labels.slice(0, s), cut: true };
  return { labels, cut: false };
}

/** An agent of the session; its listener records events and steers when c1 ends. It dies at
 * step `killAt` (a step is an event, or the checkpoint before a tool runs), leaving its
 * snapshot (as JSON) behind. */
function sessionAgent(runs, killAt, restore) {
  let agent;
  const { seen, step } = dyingHost(killAt, () => agent.snapshot());
  seen.labels = [];
  agent = new Agent({
    initialState: { tools: tools(runs), model },
    streamFn,
    restore,
    toolExecution: 'parallel',
    onCheckpoint: (snapshot, event) => {
      if (seen.dead || event !== undefined) return;
      assert.ok(snapshot.position.executing.length > 0, 'before a tool runs, the position says so');
      step();
    },
  });
  agent.subscribe((e) => {
    if (seen.dead) return;
    seen.labels.push(label(e));
    if (e.type === 'tool_execution_end' && e.toolCallId === 'c1') agent.steer(user('steer'));
    step();
  });
  return { agent, seen };
}

/** The uninterrupted events without the updates of calls cut off before they ran. */
function expectedLabels(all, prefix, cutOff) {
  return all.filter((l) => !cutOff.some((c) => l === `tool_execution_update(${c})` && !prefix.includes(l)));
}

test('Agent: a session cut after any event resumes from its snapshot to the same transcript', async () => {
  const runs = [];
  const { agent: whole, seen: all } = sessionAgent(runs, -1);
  whole.followUp(user('more'));
  await whole.prompt('go');
  const expected = whole.state.messages.map(timeless);
  assert.equal(expected.filter((m) => m.role === 'assistant').length, 4);
  assert.equal(expected.filter((m) => m.role === 'toolResult').length, 4);
  assert.deepEqual(runs.sort(), ['c1', 'c2', 'c3', 'w1']);

  let cut = 0;
  let interrupted = 0;
  assert.equal(all.steps, all.labels.length + 4, 'a checkpoint before each of the 4 tool runs');
  for (let k = 0; k < all.steps; k++) {
    const runs = [];
    const first = sessionAgent(runs, k);
    first.agent.followUp(user('more'));
    await first.agent.prompt('go');
    const snapshot = first.seen.snapshot;
    assert.ok(snapshot, `k=${k}: a snapshot was taken`);
    assert.deepEqual(json(snapshot), snapshot, `k=${k}: the snapshot is JSON`);

    const second = sessionAgent(runs, -1, snapshot);
    await second.agent.resume();
    assert.equal(second.agent.state.isStreaming, false);

    const prefix = withoutCutResponse(first.seen.labels);
    if (prefix.cut) {
      cut++;
      assert.ok(second.agent.discardedUsage.length >= 1, `k=${k}: the cut response's usage is kept`);
    }
    const position = snapshot.position;
    const cutOff = position?.at === 'tools' ? position.executing.filter((id) => id.startsWith('w')) : [];
    assert.deepEqual([...prefix.labels, ...second.seen.labels], expectedLabels(all.labels, prefix.labels, cutOff), `k=${k}: events`);
    const got = second.agent.state.messages.map(timeless);
    assert.equal(got.length, expected.length, `k=${k}: message count`);
    got.forEach((m, i) => {
      if (cutOff.includes(m.toolCallId)) {
        interrupted++;
        assert.equal(m.isError, true);
        assert.match(m.content[0].text, /interrupted before completion/);
      } else {
        assert.deepEqual(m, expected[i], `k=${k}: message ${i}`);
      }
    });
    for (const id of ['c1', 'c2', 'c3', 'w1']) {
      const n = runs.filter((r) => r === id).length;
      assert.ok(n <= (id === 'w1' ? 1 : 2), `k=${k}: ${id} ran ${n} times`);
      if (!cutOff.includes(id)) assert.ok(n >= 1, `k=${k}: ${id} never ran`);
    }
    assert.deepEqual(second.agent.snapshot().position, undefined, `k=${k}: nothing left to resume`);
  }
  assert.ok(cut >= 10, `cuts inside streamed responses: ${cut}`);
  assert.ok(interrupted >= 1, 'a cut while the write tool ran');
});

test('runAgentLoop: onCheckpoint after every event, and runAgentLoopResume from any of them', async () => {
  const config = () => ({ model, convertToLlm: (m) => m });
  const prompt = [user('go')];
  const runsAll = [];
  const checkpoints = [];
  const labelsAll = [];
  const whole = await runAgentLoop(prompt, { messages: [], tools: tools(runsAll) }, {
    ...config(),
    onCheckpoint: (c) => { checkpoints.push(json(c)); },
  }, (e) => { labelsAll.push(label(e)); }, undefined, streamFn);
  const expected = whole.map(timeless);
  assert.equal(checkpoints.length, labelsAll.filter((l) => !l.startsWith('message_update') && !l.startsWith('tool_execution_update')).length + 4);
  assert.equal(checkpoints.at(-1).position.at, 'done');
  assert.deepEqual(checkpoints.at(-1).messages.map(timeless), expected);

  for (let k = 0; k < checkpoints.length; k++) {
    const runs = [];
    const labels = [];
    let saved;
    let count = 0;
    await assert.rejects(runAgentLoop(prompt, { messages: [], tools: tools(runs) }, {
      ...config(),
      onCheckpoint: (c) => {
        if (count++ === k) {
          saved = json(c);
          throw new Error('the host died');
        }
      },
    }, (e) => { labels.push(label(e)); }, undefined, streamFn), /the host died/);
    const resumedLabels = [];
    const out = await runAgentLoopResume(saved, { tools: tools(runs) }, config(), (e) => { resumedLabels.push(label(e)); }, undefined, streamFn);
    const prefix = withoutCutResponse(labels);
    const cutOff = saved.position.at === 'tools' ? saved.position.executing.filter((id) => id.startsWith('w')) : [];
    assert.deepEqual([...prefix.labels, ...resumedLabels], expectedLabels(labelsAll, prefix.labels, cutOff), `k=${k}: events`);
    assert.equal(out.length, expected.length);
    out.map(timeless).forEach((m, i) => {
      if (cutOff.includes(m.toolCallId)) assert.match(m.content[0].text, /interrupted/);
      else assert.deepEqual(m, expected[i], `k=${k}: message ${i}`);
    });
  }
});

test('agentLoopResume streams the rest of the run; a finished checkpoint resumes to nothing', async () => {
  const checkpoints = [];
  await runAgentLoop([user('go')], { messages: [], tools: tools([]) }, { model, convertToLlm: (m) => m, onCheckpoint: (c) => { checkpoints.push(json(c)); } }, () => {}, undefined, streamFn);
  const middle = checkpoints.find((c) => c.position.at === 'next');
  const stream = agentLoopResume(middle, { tools: tools([]) }, { model, convertToLlm: (m) => m }, undefined, streamFn);
  const types = [];
  for await (const e of stream) types.push(e.type);
  assert.equal(types[0], 'turn_start');
  assert.equal(types.at(-1), 'agent_end');
  const messages = await stream.result();
  assert.deepEqual(messages.map(timeless), checkpoints.at(-1).messages.slice(-messages.length).map(timeless));

  const events = [];
  const out = await runAgentLoopResume(checkpoints.at(-1), { tools: [] }, { model, convertToLlm: (m) => m }, (e) => events.push(e), undefined, streamFn);
  assert.equal(events.length, 0);
  assert.equal(out.length, checkpoints.at(-1).position.new);
});

test('a bad checkpoint or snapshot is refused with an error that names what is wrong', async () => {
  const cfg = { model, convertToLlm: (m) => m };
  const cases = [
    [null, /checkpoint: not an object/],
    [{ version: 2, messages: [], position: {} }, /version is not 1/],
    [{ version: 1, messages: 'x', position: {} }, /messages is not an array/],
    [{ version: 1, messages: [], position: null }, /position is not an object/],
    [{ version: 1, messages: [], position: { v: 1, at: 'nowhere', new: 0, model } }, /checkpoint: at is not/],
    [{ version: 1, messages: [], position: { v: 1, at: 'next', new: 3, model, results: 0, hasMore: false, explicit: false, end: false } }, /more messages of the run than the transcript/],
    [{ version: 1, messages: [user('a'), user('b')], position: { v: 1, at: 'tools', new: 2, model, results: 0, ended: [], started: [], executing: [], announced: false } }, /not an assistant message/],
  ];
  for (const [checkpoint, message] of cases) {
    const events = [];
    await assert.rejects(runAgentLoopResume(checkpoint, { tools: [] }, cfg, (e) => events.push(e), undefined, streamFn), (e) => {
      assert.match(e.message, message);
      assert.equal(e.code, 'invalid_input');
      return true;
    });
    assert.equal(events.length, 0);
  }
  assert.throws(() => new Agent({ restore: { version: 9 } }), /snapshot: version is not 1/);
  assert.throws(() => new Agent({ restore: { version: 1, messages: {} } }), /snapshot: messages is not an array/);
});

test('a snapshot of an idle agent restores its transcript, queues and settings', async () => {
  const a = new Agent({ initialState: { tools: tools([]), model, systemPrompt: 'be brief', thinkingLevel: 'low' }, streamFn, steeringMode: 'all' });
  await a.prompt('go');
  a.steer(user('later'));
  a.followUp(user('after'));
  const s = json(a.snapshot());
  assert.equal(s.position, undefined);
  const b = new Agent({ initialState: { tools: tools([]) }, streamFn, restore: s });
  assert.deepEqual(json(b.state.messages), json(a.state.messages));
  assert.equal(b.state.systemPrompt, 'be brief');
  assert.equal(b.state.thinkingLevel, 'low');
  assert.equal(b.steeringMode, 'all');
  assert.deepEqual(json(b.peekQueuedMessages()), [user('later')]);
  await b.resume(); // nothing to finish
  assert.equal(b.state.messages.length, a.state.messages.length);
  await b.prompt('again');
  assert.ok(b.state.messages.some((m) => m.role === 'user' && m.content[0].text === 'later'));
});

/** An agent restored from a snapshot taken while call w1 (a write, not safe to replay) ran. */
async function restoredMidWrite() {
  const runs = [];
  let snapshot;
  const a = new Agent({
    initialState: { tools: tools(runs), model },
    streamFn,
    onCheckpoint: (s, event) => {
      if (event === undefined && s.position.executing.includes('w1') && !snapshot) {
        snapshot = json(s);
        throw new Error('the host died');
      }
    },
  });
  a.followUp(user('more'));
  await a.prompt('go');
  assert.ok(snapshot);
  return { snapshot, runs, make: (extra = {}) => new Agent({ initialState: { tools: tools(runs), model }, streamFn, restore: snapshot, ...extra }) };
}

test('a restored agent with a run in progress refuses prompt() and continue() until resume() (or reset())', async () => {
  const { make } = await restoredMidWrite();
  const b = make();
  await assert.rejects(b.prompt('something else'), /call resume\(\) before prompt\(\)/);
  await assert.rejects(b.continue(), /call resume\(\) before continue\(\)/);
  assert.equal(b.snapshot().position.at, 'tools', 'nothing changed');
  await b.resume();
  const results = b.state.messages.filter((m) => m.role === 'toolResult');
  assert.deepEqual(results.map((m) => m.toolCallId), ['c1', 'c2', 'w1', 'c3'], 'one result per call, in order');
  await b.prompt('and now something else');
  const c = make();
  c.reset();
  await c.prompt('fresh');
  assert.equal(c.state.messages.filter((m) => m.role === 'user').length, 1);
});

test('before a tool runs, onCheckpoint saves that it may have run: a death there never runs it twice', async () => {
  const { snapshot, runs, make } = await restoredMidWrite();
  assert.deepEqual(snapshot.position.executing, ['w1']);
  assert.ok(!runs.includes('w1'), 'the write had not run when the host died');
  const b = make();
  await b.resume();
  assert.ok(!runs.includes('w1'), 'nor after: its effect is unknown, so it gets an error result');
  const w1 = b.state.messages.find((m) => m.toolCallId === 'w1');
  assert.equal(w1.isError, true);
  assert.match(w1.content[0].text, /interrupted before completion/);
});

test('a restored position that does not fit its transcript rejects resume() with invalid_input, and changes nothing', async () => {
  const { snapshot } = await restoredMidWrite();
  const broken = [
    [(s) => { s.position.new = -1; }, /new is not a count/],
    [(s) => { s.position.at = 'bogus'; }, /at is not/],
    [(s) => { s.position.executing = ['zzz']; s.position.started = ['zzz']; }, /zzz is not a tool call of the turn/],
    [(s) => { const e = { id: 'w1', result: { content: [] }, isError: false }; s.position.ended = [e, e]; }, /w1 is listed twice/],
    [(s) => { for (const b of s.messages.findLast((m) => m.role === 'assistant').content) if (b.type === 'toolCall') b.id += 'x'; }, /w1 is not a tool call of the turn/],
  ];
  for (const [i, [breakIt, message]] of broken.entries()) {
    const s = json(snapshot);
    breakIt(s);
    const runs = [];
    const b = new Agent({ initialState: { tools: tools(runs), model }, streamFn, restore: s });
    const before = json(b.state.messages);
    await assert.rejects(b.resume(), (e) => {
      assert.equal(e.code, 'invalid_input', `case ${i}: ${e.message}`);
      assert.match(e.message, message);
      return true;
    }, `case ${i}`);
    assert.deepEqual(json(b.state.messages), before, 'no failure message was added');
    assert.deepEqual(runs, [], 'no tool ran');
    assert.equal(b.state.isStreaming, false);
  }
});

test('restore checks every field of the snapshot; one that cannot be read is invalid_input with its cause', async () => {
  const base = json(new Agent({ initialState: { model, messages: [user('hi')] } }).snapshot());
  const cases = [
    [{ messages: null }, /messages is not an array/],
    [{ messages: [5] }, /messages holds something other than messages/],
    [{ steering: null }, /steering is not an array/],
    [{ followUps: [{}] }, /followUps holds something other than messages/],
    [{ model: 'gpt' }, /model is not a model object/],
    [{ thinkingLevel: 'banana' }, /thinkingLevel is not a thinking level/],
    [{ steeringMode: 'banana' }, /steeringMode is not/],
    [{ followUpMode: 42 }, /followUpMode is not/],
    [{ discardedUsage: [5] }, /discardedUsage holds/],
    [{ position: [] }, /position is not an object/],
  ];
  for (const [change, message] of cases) {
    assert.throws(() => new Agent({ restore: { ...base, ...change } }), (e) => e.code === 'invalid_input' && message.test(e.message), JSON.stringify(change));
  }
  const thrown = new Error('getter says no');
  const hostile = { ...base };
  Object.defineProperty(hostile, 'messages', { get() { throw thrown; } });
  assert.throws(() => new Agent({ restore: hostile }), (e) => e.code === 'invalid_input' && e.cause === thrown && /getter says no/.test(e.message));
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  assert.throws(() => new Agent({ restore: proxy }), (e) => e.code === 'invalid_input' && e.cause instanceof TypeError);
});

test('a snapshot taken after abort() and before the run ended resumes into the abort, not the whole run', async () => {
  const runs = [];
  let snapshot;
  const a = new Agent({ initialState: { tools: tools(runs), model }, streamFn });
  a.subscribe((e) => {
    if (e.type === 'tool_execution_start' && e.toolCallId === 'c1' && !snapshot) {
      a.abort();
      snapshot = json(a.snapshot());
    }
  });
  await a.prompt('go');
  assert.equal(snapshot.position.aborted, true);
  const b = new Agent({ initialState: { tools: tools([]), model }, streamFn, restore: snapshot });
  await b.resume();
  // As the aborted run itself went on: the tools see the abort (this stream function does
  // not read the signal, so the loop asks it once more, as pi's would).
  assert.deepEqual(b.state.messages.map(timeless), a.state.messages.map(timeless));
  const results = b.state.messages.filter((m) => m.role === 'toolResult');
  assert.deepEqual(results.slice(0, 2).map((m) => [m.toolCallId, m.content[0].text]), [['c1', 'Operation aborted'], ['c2', 'Operation aborted']]);
});

test('onInterruptedToolCall decides for a call cut off while it ran: run it again, or give its result', async () => {
  const { snapshot, runs } = await restoredMidWrite();
  const seen = [];
  const decide = (answer) => new Agent({
    initialState: { tools: tools(runs), model },
    streamFn,
    restore: snapshot,
    onInterruptedToolCall: (ctx) => {
      seen.push([ctx.toolCall.id, ctx.toolCall.name, ctx.args]);
      return answer;
    },
  });
  const w1 = (a) => a.state.messages.find((m) => m.toolCallId === 'w1');

  const rerun = decide('rerun');
  await rerun.resume();
  assert.deepEqual(seen, [['w1', 'write', { t: 'a' }]], 'asked once, with the call');
  assert.equal(w1(rerun).content[0].text, 'wrote a');
  assert.equal(runs.filter((r) => r === 'w1').length, 1, 'run again on request');

  const given = decide({ content: [{ type: 'text', text: 'checked by hand: written' }], details: { checked: true } });
  await given.resume();
  assert.equal(w1(given).content[0].text, 'checked by hand: written');
  assert.deepEqual(w1(given).details, { checked: true });
  assert.equal(w1(given).isError, false);

  const dflt = decide(undefined);
  await dflt.resume();
  assert.match(w1(dflt).content[0].text, /interrupted before completion/);

  const thrown = new Agent({ initialState: { tools: tools(runs), model }, streamFn, restore: snapshot, onInterruptedToolCall: () => { throw new Error('cannot tell'); } });
  await thrown.resume();
  assert.equal(w1(thrown).isError, true);
  assert.equal(w1(thrown).content[0].text, 'cannot tell');
  assert.equal(runs.filter((r) => r === 'w1').length, 1, 'only the rerun ran it');
});

test('an onCheckpoint that always throws (storage down) still ends the run with its failure message', async () => {
  const events = [];
  const a = new Agent({ initialState: { tools: tools([]), model }, streamFn, onCheckpoint: () => { throw new Error('db down'); } });
  a.subscribe((e) => events.push(e.type));
  await a.prompt('go'); // resolves, as any failed run
  assert.equal(a.state.messages.at(-1).errorMessage, 'db down');
  assert.equal(events.at(-1), 'agent_end');
  assert.equal(events.filter((t) => t === 'message_start').length, events.filter((t) => t === 'message_end').length);
  assert.equal(a.state.isStreaming, false);
});

test('onInterruptedToolCall: a value that is not a decision is a named error result; after an abort it is not called', async () => {
  const { snapshot, runs } = await restoredMidWrite();
  for (const [value, named] of [['RERUN', /the string "RERUN"/], [42, /returned 42/], [[1], /an array/], [{ content: 'x' }, /content is not an array/], [() => 1, /a function/]]) {
    const a = new Agent({ initialState: { tools: tools(runs), model }, streamFn, restore: snapshot, onInterruptedToolCall: () => value });
    await a.resume();
    const w1 = a.state.messages.find((m) => m.toolCallId === 'w1');
    assert.equal(w1.isError, true);
    assert.match(w1.content[0].text, named);
    assert.match(w1.content[0].text, /expected "rerun", a tool result object or undefined/);
  }
  assert.ok(!runs.includes('w1'));
  let asked = 0;
  const aborted = { ...snapshot, position: { ...snapshot.position, aborted: true } };
  const b = new Agent({ initialState: { tools: tools(runs), model }, streamFn, restore: aborted, onInterruptedToolCall: () => { asked++; return new Promise(() => {}); } });
  await b.resume();
  assert.equal(asked, 0, 'no hook once aborted');
  assert.equal(b.state.messages.find((m) => m.toolCallId === 'w1').content[0].text, 'Operation aborted');
});
