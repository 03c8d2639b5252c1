// Record, replay and fork (pi-agent-wasm/cassette, not in pi), the way a user tests an agent
// with them: an Agent records a real run through its `record` option; `replay` runs it again
// with no model and no tool (the tools given throw if called) and must deliver the very same
// events, timestamps included; a changed agent is stopped by a divergence error naming the
// event, what the cassette held and what was asked; `fork` continues from any event.
// The reference run: 20 turns, two parallel tools a turn finishing out of call order (L-62,
// L-92) with progress updates, a steering message sent while tools run (L-57), a follow-up
// (L-52), and an abort in the last turn (L-48).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createAssistantMessageEventStream, runAgentLoop } from 'pi-agent-wasm';
import { Recorder, replay, fork, readCassette, checkpointAt, ReplayDivergence } from 'pi-agent-wasm/cassette';
import { usage, model, TURNS, scriptedStream, tools, untouchable, noModel, plain, recordReference, answering, answered, firstRequest } from './shared/cassette-run.mjs';
import { startOpenAIServer, textChunks, toolCallChunks } from './shared/openai-server.mjs';

const reference = await recordReference();

/** `replay` with the events serialized as each is delivered, as the recording listener did. */
async function replayed(cassette, options) {
  const seen = [];
  const got = await replay(cassette, { ...options, onEvent: (e) => { seen.push(JSON.parse(JSON.stringify(e))); } });
  return { ...got, seen };
}


test('the reference run is what the test says: 20+ turns, parallel tools out of order, steering, a follow-up, an abort', () => {
  const types = reference.events.map((e) => e.type);
  assert.ok(types.filter((t) => t === 'turn_start').length >= TURNS);
  const ends = reference.events.filter((e) => e.type === 'tool_execution_end').map((e) => e.toolCallId);
  assert.ok(ends.some((id, i) => id.endsWith('-2') && ends[i + 1]?.endsWith('-1')), 'some fast call ended before the slow one of its turn');
  assert.ok(reference.messages.some((m) => m.role === 'user' && m.content === 'steer: hurry'));
  assert.ok(reference.messages.some((m) => m.role === 'user' && m.content === 'follow-up: and then?'));
  assert.equal(reference.messages.at(-1).stopReason, 'aborted');
  assert.ok(types.includes('tool_execution_update'));
});

test('replay delivers the same events, timestamps included, with no model and no tool run', async () => {
  const text = reference.recorder.toString();
  const got = await replayed(text, { initialState: { tools: untouchable }, streamFn: noModel });
  assert.deepEqual(got.seen, reference.events);
  assert.deepEqual(JSON.parse(JSON.stringify(got.messages)), JSON.parse(JSON.stringify(reference.messages)));
  // The replay wrote a cassette of its own: it replays the same again.
  const again = await replayed(got.cassette.toString(), { initialState: { tools: untouchable }, streamFn: noModel });
  assert.deepEqual(again.seen, reference.events);
});

test('a cassette is JSON lines, versioned, append-only, linear in the run', () => {
  const lines = reference.recorder.lines;
  const head = JSON.parse(lines[0]);
  assert.deepEqual(head, { type: 'cassette', version: 1, kind: 'agent' });
  for (const line of lines) assert.equal(typeof JSON.parse(line).type, 'string');
  // The lines written so far stay as they were while the recorder goes on.
  const before = reference.recorder.lines;
  assert.deepEqual(reference.recorder.lines.slice(0, before.length), before);
  // No whole transcript per event: positions are written as changes.
  const events = lines.map((l) => JSON.parse(l)).filter((r) => r.type === 'event');
  assert.ok(events.every((r) => r.position === undefined || !('messages' in r.position)));
});

test('size is linear in the run: a run twice as long writes about twice the bytes', async () => {
  const bytesFor = async (turns) => {
    const recorder = new Recorder();
    const stream = answering((context) => {
      const n = answered(context);
      const content = [{ type: 'text', text: `answer ${n}` }];
      if (n < turns - 1) content.push({ type: 'toolCall', id: `c${n}`, name: 'fast', arguments: { turn: n } });
      return content;
    });
    const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: stream, record: recorder });
    await agent.prompt('go');
    return recorder.toString().length;
  };
  const [a, b] = [await bytesFor(50), await bytesFor(100)];
  assert.ok(b / a < 2.3, `50 turns: ${a} B, 100 turns: ${b} B`);
});

test('a changed agent is stopped by a divergence naming the event, what was recorded and what was asked', async (t) => {
  const text = reference.recorder.toString();
  const opts = { initialState: { tools: untouchable }, streamFn: noModel };
  await t.test('a request with other messages (transformContext changed)', async () => {
    const transformContext = async (messages) => (messages.length > 6 ? [...messages, { role: 'user', content: 'extra', timestamp: 0 }] : messages);
    const error = await replay(text, { ...opts, transformContext }).then(() => undefined, (e) => e);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.equal(error.code, 'replay_divergence');
    assert.match(error.message, /^Replay diverged at event \d+: request \d+ differs in message \d+: the cassette has .* the run asked for .*extra/);
    assert.ok(Number.isInteger(error.index) && error.index > 0);
    assert.ok(error.events.length >= error.index);
  });
  await t.test('tool arguments changed (prepareArguments)', async () => {
    const changed = untouchable.map((tool) => ({ ...tool, prepareArguments: (args) => ({ ...args, turn: args.turn + 100 }) }));
    const error = await replay(text, { ...opts, initialState: { tools: changed } }).then(() => undefined, (e) => e);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.match(error.message, /the arguments of tool call call-0-1 \(slow\): the cassette has \{"turn":0,"note":"step 1"\}, the run asked for \{"turn":100/);
  });
  await t.test('a tool call not on the tape', async () => {
    const lines = reference.recorder.lines.filter((l) => !/"type":"tool","id":"call-2-2"/.test(l));
    const error = await replay(lines, opts).then(() => undefined, (e) => e);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.match(error.message, /tool call call-2-2 \(fast\): the cassette has no such call, the run asked for \{"id":"call-2-2"/);
  });
  await t.test('the run goes on where the recorded one ended (a hook asks for another turn): its first ask is named', async () => {
    const lastTurn = reference.events.filter((e) => e.type === 'turn_start').length;
    let turns = 0;
    const finishTurn = () => (++turns === 2 ? { action: 'continue' } : undefined);
    const short = await shortRunCassette();
    const error = await replay(short, { ...opts, finishTurn }).then(() => undefined, (e) => e);
    assert.ok(lastTurn > 0);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.match(error.message, /a steering poll: the cassette has no more polls, the run asked for its messages/);
  });
  await t.test('a cassette that ends inside its run (its process died) replays to there: cut is true', async () => {
    const cut = [];
    for (const line of reference.recorder.lines) {
      if (/"type":"request","n":3,/.test(line)) break;
      cut.push(line);
    }
    const seen = [];
    const got = await replay(cut, { ...opts, onEvent: (e) => { seen.push(JSON.parse(JSON.stringify(e))); } });
    assert.equal(got.cut, true);
    assert.deepEqual(seen, reference.events.slice(0, seen.length));
    assert.ok(seen.length > 10);
  });
  await t.test('a queue poll the cassette does not hold', async () => {
    const lines = reference.recorder.lines.filter((l) => !/"type":"poll","queue":"followUp"/.test(l));
    const error = await replay(lines, opts).then(() => undefined, (e) => e);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.match(error.message, /a followUp poll: the cassette has no more polls, the run asked for its messages/);
  });
  await t.test('fewer requests than recorded (a hook ends the run early)', async () => {
    let turns = 0;
    const finishTurn = () => (++turns === 3 ? { action: 'end' } : undefined);
    const error = await replay(text, { ...opts, finishTurn }).then(() => undefined, (e) => e);
    assert.ok(error instanceof ReplayDivergence, String(error));
    assert.match(error.message, /the run's end: the cassette has request 3 and \d+ more, the run asked for no more requests/);
  });
});

test('onMiss "live" goes on with the real model and tools from the first miss, and keeps recording', async () => {
  const cut = [];
  for (const line of reference.recorder.lines) {
    if (/"type":"request","n":4,/.test(line)) break;
    cut.push(line);
  }
  const ran = [];
  const got = await replayed(cut, { initialState: { tools: tools(ran) }, streamFn: scriptedStream, onMiss: 'live' });
  // Four requests came from the tape, the rest live: the tools ran from turn 4 on only.
  assert.ok(ran.length > 0 && ran.every((id) => Number(id.split('-')[1]) >= 4), ran.join(' '));
  assert.deepEqual(got.seen.slice(0, 40), reference.events.slice(0, 40));
  // The new cassette holds the whole run: it replays offline.
  const again = await replayed(got.cassette.toString(), { initialState: { tools: untouchable }, streamFn: noModel });
  assert.deepEqual(again.seen, got.seen);
});

test('fork at every event of a short run continues to the same end, running nothing before it again', async () => {
  const SHORT = 3;
  const short = answering((context) => {
    const n = answered(context);
    const content = [{ type: 'text', text: `answer ${n}` }];
    if (n < SHORT - 1) content.push({ type: 'toolCall', id: `a${n}`, name: 'slow', arguments: { turn: n } }, { type: 'toolCall', id: `b${n}`, name: 'fast', arguments: { turn: n } });
    return content;
  }, { delta: true });
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: short, record: recorder });
  const events = [];
  agent.subscribe((e) => events.push(e));
  await agent.prompt('go');
  const final = agent.state.messages.map((m) => [m.role, JSON.stringify(m.content)]);
  const text = recorder.toString();
  for (let at = 0; at < events.length; at++) {
    const ran = [];
    let asked = 0;
    const counting = (m, c, o) => (asked++, short(m, c, o));
    const f = await fork(text, { at }, { initialState: { tools: tools(ran) }, streamFn: counting });
    assert.deepEqual(f.messages.map((m) => [m.role, JSON.stringify(m.content)]), final, `fork at ${at} (${events[at].type})`);
    // Nothing that had ended by `at` runs again: the requests and tool runs are only those after it.
    const point = checkpointAt(text, at);
    const answered = point.messages.filter((m) => m.role === 'assistant').length;
    assert.ok(asked <= SHORT - answered, `fork at ${at}: ${asked} requests after ${answered} answers`);
    const ended = new Set(point.messages.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId));
    assert.ok(ran.every((id) => !ended.has(id)), `fork at ${at} ran ${ran.join(',')} again`);
  }
});

test('fork while a tool runs: the call is known to have maybe run, so onInterruptedToolCall decides it', async () => {
  const text = reference.recorder.toString();
  const at = reference.events.findIndex((e) => e.type === 'tool_execution_update');
  const asked = [];
  const ran = [];
  const f = await fork(text, { at }, { initialState: { tools: tools(ran) }, streamFn: scriptedStream, onInterruptedToolCall: (context) => { asked.push(context.toolCall.id); return { content: [{ type: 'text', text: 'decided' }], details: {} }; } });
  const id = reference.events[at].toolCallId;
  assert.ok(asked.includes(id), `asked about ${asked.join(',')}`);
  assert.ok(!ran.includes(id));
  assert.equal(f.messages.find((m) => m.role === 'toolResult' && m.toolCallId === id).content[0].text, 'decided');
});

test('fork with a change: another tool result, an edited message, an added steering message, another model', async () => {
  const text = reference.recorder.toString();
  const at = reference.events.findIndex((e) => e.type === 'tool_execution_end' && e.toolCallId === 'call-1-1');
  const changed = await fork(text, { at: at + 3, change: { toolResult: { toolCallId: 'call-1-1', content: [{ type: 'text', text: 'CHANGED' }] } } }, { initialState: { tools: tools() }, streamFn: scriptedStream });
  const result = changed.messages.find((m) => m.role === 'toolResult' && m.toolCallId === 'call-1-1');
  assert.equal(result.content[0].text, 'CHANGED');
  // At the call's tool_execution_end itself, before its result message: the result in the position.
  const early = await fork(text, { at, change: { toolResult: { toolCallId: 'call-1-1', content: [{ type: 'text', text: 'EARLY' }] } } }, { initialState: { tools: tools() }, streamFn: scriptedStream });
  assert.equal(early.messages.find((m) => m.role === 'toolResult' && m.toolCallId === 'call-1-1').content[0].text, 'EARLY');
  assert.equal(changed.messages.at(-1).role, 'assistant');
  assert.equal(changed.events[0].type === 'agent_start', false, 'a forked run goes on; it does not start again');

  const userAt = reference.events.findIndex((e) => e.type === 'message_end' && e.message.role === 'user');
  const edited = await fork(text, { at: userAt, change: { message: { index: 1, with: { role: 'user', content: 'Edited prompt.', timestamp: 2 } } } }, { initialState: { tools: tools() }, streamFn: scriptedStream });
  assert.equal(edited.messages[1].content, 'Edited prompt.');

  const steered = await fork(text, { at: at + 3, change: { steer: { role: 'user', content: 'steer: added', timestamp: 3 } } }, { initialState: { tools: tools() }, streamFn: scriptedStream });
  assert.ok(steered.messages.some((m) => m.role === 'user' && m.content === 'steer: added'));

  let seen;
  const other = { ...model, id: 'other-model' };
  const delivered = [];
  const switched = await fork(text, { at: at + 3, change: { model: other } }, { initialState: { tools: tools() }, streamFn: (m, c, o) => ((seen = m.id), scriptedStream(m, c, o)), onEvent: (e) => { delivered.push(JSON.parse(JSON.stringify(e))); } });
  assert.equal(seen, 'other-model');
  assert.equal(switched.agent.state.model.id, 'other-model');
  // The fork's own cassette replays offline.
  const again = await replayed(switched.cassette.toString(), { initialState: { tools: untouchable, model: other }, streamFn: noModel });
  assert.deepEqual(again.seen, delivered);
  assert.equal(delivered.length, switched.events.length);
});

test('the loop functions record through config.record, and replay takes their context and config', async () => {
  const recorder = new Recorder();
  const events = [];
  const context = { systemPrompt: 'loop', messages: [], tools: tools() };
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], context, { model, convertToLlm: (m) => m, record: recorder }, (e) => { events.push(JSON.parse(JSON.stringify(e))); }, undefined, scriptedStream);
  assert.equal(JSON.parse(recorder.lines[0]).kind, 'loop');
  const got = await replayed(recorder.toString(), { context: { tools: untouchable }, config: { convertToLlm: (m) => m }, streamFn: noModel });
  assert.deepEqual(got.seen, events);
  assert.deepEqual(JSON.parse(JSON.stringify(got.messages)), JSON.parse(JSON.stringify(messages)));
});

test('a run of the built-in provider against a local server replays offline, with its key redacted', async () => {
  const server = await startOpenAIServer((body, i) => (i === 0 ? toolCallChunks('srv-1', 'fast', { turn: 1 }) : textChunks('The work is done.')));
  const key = 'sk-local-secret-key-1234';
  const served = { id: 'local-model', name: 'local', api: 'openai-completions', provider: 'local', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: usage(0).cost, contextWindow: 32768, maxTokens: 1024 };
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model: served, tools: tools() }, getApiKey: () => key, record: recorder });
  const events = [];
  agent.subscribe((e) => events.push(JSON.parse(JSON.stringify(e))));
  await agent.prompt('Do the work.');
  await server.close();
  assert.equal(agent.state.messages.at(-1).content[0].text, 'The work is done.');
  const text = recorder.toString();
  assert.ok(!text.includes(key), 'the key is not in the cassette');
  // The server is gone: the replay makes no request.
  const got = await replayed(text, { initialState: { model: served, tools: untouchable }, getApiKey: () => key });
  assert.deepEqual(got.seen, events);
});

test('bad cassettes and options are invalid_input errors naming what is wrong', async () => {
  const bad = async (cassette, pattern, options) => {
    const error = await replay(cassette, options).then(() => undefined, (e) => e);
    assert.equal(error?.code, 'invalid_input', String(error));
    assert.match(error.message, pattern);
  };
  await bad(42, /cassette: expected its text, its lines or a Recorder/);
  await bad('{"type":"cassette","version":1,"kind":"agent"}\nnot json\n{"type":"end"}', /cassette line 2: not JSON/);
  // A last line cut off by a dying process (no line break after it) is where the cassette ends.
  const whole = reference.recorder.toString();
  const cut = whole.slice(0, whole.indexOf('\n', whole.length >> 1) + 20);
  assert.ok(!cut.endsWith('\n'));
  assert.deepEqual(readCassette(cut), readCassette(cut.slice(0, cut.lastIndexOf('\n') + 1)));
  await bad('{"type":"cassette","version":9,"kind":"agent"}', /version 9 is not 1/);
  await bad('{"type":"run","mode":"prompt"}', /the first line is not its header/);
  await bad('{"type":"cassette","version":1,"kind":"agent"}\n{"type":"run","mode":"prompt","messages":{"keep":3,"add":[]}}', /keeps 3 of 0 messages/);
  await bad(reference.recorder.toString(), /onMiss must be "error" or "live"/, { onMiss: 'sometimes' });
  assert.throws(() => checkpointAt(reference.recorder.toString(), -1), /at must be an event index/);
  assert.throws(() => checkpointAt(reference.recorder.toString(), 1e9), /the cassette has no event 1000000000/);
  assert.throws(() => new Agent({ initialState: { model }, streamFn: scriptedStream, record: {} }), /record must be a Recorder/);
  assert.throws(() => new Recorder({ onLine: 3 }), /onLine must be a function/);
});

test('onLine receives each line as it is written, the same lines the recorder keeps', async () => {
  const streamed = [];
  const recorder = new Recorder({ onLine: (line) => streamed.push(line) });
  const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: scriptedStream, record: recorder });
  agent.subscribe((e) => { if (e.type === 'turn_end') agent.abort(); });
  await agent.prompt('go');
  assert.deepEqual(streamed, recorder.lines);
  assert.ok(readCassette(streamed).runs.length === 1);
});

test('a process killed inside a tool, and the one that resumed it, wrote one cassette that replays as both delivered', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cassette-kill-'));
  try {
    const script = new URL('./shared/cassette-process.mjs', import.meta.url).pathname;
    const first = spawnSync(process.execPath, [script, 'first', dir], { timeout: 30000 });
    assert.equal(first.signal, 'SIGKILL', String(first.stderr));
    const second = spawnSync(process.execPath, [script, 'second', dir], { timeout: 30000 });
    assert.equal(second.status, 0, String(second.stderr));
    const cassette = readFileSync(join(dir, 'cassette.jsonl'), 'utf8');
    const delivered = readFileSync(join(dir, 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const runs = readCassette(cassette).runs;
    assert.deepEqual(runs.map((r) => r.line.mode), ['prompt', 'resume']);
    assert.equal(delivered.filter((e) => e.type === 'agent_start').length, 1);
    assert.equal(delivered.at(-1).type, 'agent_end');
    const got = await replayed(cassette, { initialState: { tools: untouchable }, streamFn: noModel });
    assert.deepEqual(got.seen, delivered);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- Found by an outside tester (each failed before its fix) ----

/** The cassette of a short run (see `shortRun`). */
async function shortRunCassette() {
  return (await shortRun()).recorder.toString();
}

/** A short recorded run: two parallel calls (one reporting progress), then an answer. */
async function shortRun(extra = {}) {
  const recorder = new Recorder(extra.recorder);
  const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: (m, c, o) => scriptedStream(m, { ...c, messages: [...c.messages, ...Array(Math.max(0, TURNS - 2)).fill({ role: 'assistant', content: [] })] }, o), record: recorder, ...extra.agent });
  const delivered = [];
  agent.subscribe((e) => { delivered.push(JSON.parse(JSON.stringify(e))); return extra.listener?.(e, agent); });
  await agent.prompt('go');
  return { recorder, delivered, agent };
}

test('a cassette cut at any line replays to an end: the events up to the cut (cut: true), or a refusal, never a wait forever', { timeout: 120000 }, async () => {
  const { recorder, delivered } = await shortRun();
  const lines = recorder.lines;
  const outcomes = new Map();
  for (let n = 1; n < lines.length; n++) {
    const seen = [];
    const outcome = await replay(lines.slice(0, n), { initialState: { tools: untouchable }, streamFn: noModel, onEvent: (e) => { seen.push(JSON.parse(JSON.stringify(e))); } })
      .then((r) => (r.cut ? 'cut' : 'replayed'), (e) => e.code ?? String(e));
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    // Whatever it delivered, the recorded run delivered first.
    assert.deepEqual(seen, delivered.slice(0, seen.length), `cut at line ${n}`);
  }
  assert.deepEqual([...outcomes.keys()].filter((k) => !['cut', 'replayed', 'invalid_input'].includes(k)), [], JSON.stringify([...outcomes]));
  assert.ok(outcomes.get('cut') > lines.length / 2, JSON.stringify([...outcomes]));
});

test('results JSON cannot hold (a BigInt, a cycle, undefined) change nothing in the live run, and the cassette stays readable', async () => {
  const cycle = {};
  cycle.self = cycle;
  for (const details of [{ n: 10n }, cycle]) {
    for (const onLine of [undefined, () => {}]) {
      const odd = { name: 'odd', label: 'odd', description: 'odd', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details }) };
      const stream = answering((c) => (firstRequest(c) ? [{ type: 'toolCall', id: 'o1', name: 'odd', arguments: {} }] : [{ type: 'text', text: 'done' }]));
      const recorder = new Recorder({ onLine });
      const agent = new Agent({ initialState: { model, tools: [odd] }, streamFn: stream, record: recorder });
      await agent.prompt('go');
      assert.equal(agent.state.messages.at(-1).stopReason, 'stop');
      assert.ok(agent.state.messages.some((m) => m.role === 'toolResult' && m.toolCallId === 'o1'));
      const text = recorder.toString();
      assert.ok(readCassette(text).runs.length === 1);
      const error = await replay(text, { initialState: { tools: [{ ...odd, execute: () => assert.fail('ran') }] }, streamFn: noModel }).then(() => undefined, (e) => e);
      assert.equal(error?.code, 'replay_divergence');
      assert.match(error.message, /a value JSON cannot hold/);
    }
  }
  // undefined: an error result in the run, the same one replayed.
  const none = { name: 'none', label: 'none', description: 'none', parameters: { type: 'object' }, execute: async () => undefined };
  const { recorder, delivered } = await shortRun({ agent: { initialState: { model, tools: [...tools(), none] } } });
  const got = await replayed(recorder.toString(), { initialState: { tools: [...untouchable, { ...none, execute: () => assert.fail('ran') }] }, streamFn: noModel });
  assert.deepEqual(got.seen, delivered);
});

test('onLine is not awaited: what it throws or rejects with is kept in failures, never unhandled', async () => {
  const unhandled = [];
  const listen = (e) => unhandled.push(e);
  process.on('unhandledRejection', listen);
  try {
    let n = 0;
    const recorder = new Recorder({ onLine: () => (++n % 2 ? Promise.reject(new Error('disk full')) : (() => { throw new Error('no space'); })()) });
    const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: scriptedStream, record: recorder });
    agent.subscribe((e) => { if (e.type === 'turn_end') agent.abort(); });
    await agent.prompt('go');
    await new Promise((r) => setTimeout(r, 20));
    assert.ok(agent.state.messages.some((m) => m.role === 'toolResult'), 'the run went on');
    assert.ok(recorder.failures.includes('disk full') && recorder.failures.includes('no space'));
    assert.equal(recorder.failures.length, recorder.lines.length);
  } finally {
    process.off('unhandledRejection', listen);
  }
  assert.deepEqual(unhandled, []);
});

test('an abort from a listener at tool_execution_start, a stream function that gives no stream, and a stream that fails replay as delivered', async () => {
  const aborted = await shortRun({ listener: (e, agent) => { if (e.type === 'tool_execution_start') agent.abort(); } });
  assert.equal(aborted.agent.state.messages.at(-1).stopReason, 'aborted');
  assert.deepEqual((await replayed(aborted.recorder.toString(), { initialState: { tools: untouchable }, streamFn: noModel })).seen, aborted.delivered);
  for (const give of [() => undefined, () => 42, () => {
    const s = createAssistantMessageEventStream();
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { role: 'assistant', content: [], api: 'x', provider: 'x', model: 'x', usage: usage(0), stopReason: 'stop', timestamp: 1 } });
      s.fail(new Error('the stream broke'));
    });
    return s;
  }]) {
    const recorder = new Recorder();
    const events = [];
    const failed = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [] }, { model, convertToLlm: (m) => m, record: recorder }, (e) => { events.push(JSON.parse(JSON.stringify(e))); }, undefined, give).then(() => undefined, (e) => e);
    const seen = [];
    const again = await replay(recorder.toString(), { config: { convertToLlm: (m) => m }, streamFn: noModel, onEvent: (e) => { seen.push(JSON.parse(JSON.stringify(e))); } }).then(() => undefined, (e) => e);
    assert.equal(again?.message, failed?.message);
    assert.deepEqual(seen, events);
  }
});

test('many parallel calls: the cassette grows by the same bytes a call (the position lists written as what was appended)', async () => {
  const perCall = async (calls) => {
    const recorder = new Recorder();
    const stream = answering((c) => (firstRequest(c) ? Array.from({ length: calls }, (_, i) => ({ type: 'toolCall', id: `p${i}`, name: 'fast', arguments: { turn: i } })) : [{ type: 'text', text: 'done' }]));
    const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: stream, record: recorder });
    await agent.prompt('go');
    return recorder.toString().length / calls;
  };
  const [a, b] = [await perCall(20), await perCall(80)];
  assert.ok(b / a < 1.3, `${a.toFixed(0)} B a call with 20 calls, ${b.toFixed(0)} with 80`);
});

test('redaction: a key of 12 characters or more is cut everywhere; a short placeholder key is no secret and nothing is mangled', async () => {
  // Placeholder keys that are also words of the cassette (a provider's name, a field's): the
  // replay is the run.
  for (const key of ['ollama', 'scripted', 'content', 'assistant']) {
    const { recorder, delivered } = await shortRun({ agent: { getApiKey: () => key } });
    const got = await replayed(recorder.toString(), { initialState: { tools: untouchable }, streamFn: noModel });
    assert.deepEqual(got.seen, delivered, key);
  }
  // A real key, echoed into the conversation (here by the user): cut from every line.
  const key = 'sk-long-secret-123';
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model, tools: tools() }, streamFn: scriptedStream, getApiKey: () => key, record: recorder });
  agent.subscribe((e) => { if (e.type === 'turn_end') agent.abort(); });
  await agent.prompt(`my key is ${key}`);
  const text = recorder.toString();
  assert.ok(!text.includes(key) && text.includes('my key is [redacted]'));
});

test('after a divergence nothing more is delivered; the replayed agent goes on live afterwards; a sequential replay of a parallel run ends', async () => {
  const { recorder, delivered } = await shortRun();
  const seen = [];
  const transformContext = (messages) => (messages.some((m) => m.role === 'toolResult') ? [...messages, { role: 'user', content: 'x', timestamp: 0 }] : messages);
  const error = await replay(recorder.toString(), { initialState: { tools: untouchable }, streamFn: noModel, transformContext, onEvent: (e) => { seen.push(e.type); } }).then(() => undefined, (e) => e);
  assert.equal(error?.code, 'replay_divergence');
  assert.equal(seen.length, error.index, 'only the events before the divergence');
  assert.equal(Object.keys(error).includes('events'), false, 'events is not printed with the error');
  assert.deepEqual(error.events.map((e) => e.type), seen);
  // The replay's agent takes a new prompt live, and its cassette records it.
  const got = await replay(recorder.toString(), { initialState: { tools: tools() }, streamFn: scriptedStream });
  await got.agent.prompt('and again');
  assert.equal(got.agent.state.messages.at(-1).role, 'assistant');
  assert.deepEqual(readCassette(got.cassette.toString()).runs.map((r) => r.line.mode), ['prompt', 'prompt']);
  // Sequential execution of calls recorded in parallel: an end (here a divergence on durations).
  const sequential = await replay(recorder.toString(), { initialState: { tools: untouchable }, streamFn: noModel, toolExecution: 'sequential' }).then(() => 'replayed', (e) => e.code);
  assert.ok(['replayed', 'replay_divergence'].includes(sequential));
  assert.ok(delivered.length > 0);
});

/** A seeded generator (mulberry32): the failing seed is in the assertion message. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('streams that change the partial between deltas as pi-ai\'s do (usage in place, an id, a stop reason, the duration; thinking, text and a call\'s arguments), read as pushed or far behind, replay as delivered', async () => {
  for (let seed = 1; seed <= 60; seed++) {
    const random = rng(seed);
    const pick = (n) => Math.floor(random() * n);
    // Each response: deltas in one or two blocks; between deltas, one of pi-ai's changes to the
    // partial; the stream pushes all at once (the loop reads far behind) or a microtask apart.
    const respond = (_model, context) => {
      const n = context.messages.filter((m) => m.role === 'assistant').length;
      const s = createAssistantMessageEventStream();
      const ahead = random() < 0.5;
      const deltas = 1 + pick(600);
      (async () => {
        const partial = { role: 'assistant', api: 'gen', provider: 'gen', model: 'gen', usage: usage(1), content: [], stopReason: 'stop', timestamp: 1000 + n };
        s.push({ type: 'start', partial });
        const kinds = random() < 0.5 ? ['text'] : ['thinking', 'text'];
        for (const [i, kind] of kinds.entries()) {
          partial.content.push(kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' });
          s.push({ type: `${kind}_start`, contentIndex: i, partial });
          for (let d = 0; d < deltas; d++) {
            const delta = pick(20) === 0 ? '' : `w${d}\u00e9 `;
            partial.content[i][kind] += delta;
            s.push({ type: `${kind}_delta`, contentIndex: i, delta, partial });
            switch (pick(40)) {
              case 0: partial.usage.output += 1; partial.usage.totalTokens += 1; break;
              case 1: partial.usage.cost.total += 0.5; break;
              case 2: partial.responseId ??= `resp-${seed}-${n}`; break;
              case 3: partial.usage = usage(2 + d); break;
              case 4: partial.stopReason = partial.stopReason === 'stop' ? 'length' : 'stop'; break;
              default: break;
            }
            if (!ahead) await Promise.resolve();
          }
          if (kind === 'thinking') partial.content[i].thinkingSignature = `sig-${seed}`;
          s.push({ type: `${kind}_end`, contentIndex: i, content: partial.content[i][kind], partial });
        }
        if (random() < 0.5) {
          // A call whose arguments stream as pi-ai's do: the partial text kept, the arguments
          // parsed anew at each delta.
          const i = partial.content.length;
          const call = { type: 'toolCall', id: `call-${seed}-${n}`, name: 'nothing', arguments: {}, partialArgs: '' };
          partial.content.push(call);
          s.push({ type: 'toolcall_start', contentIndex: i, partial });
          const json = JSON.stringify({ note: 'x'.repeat(pick(50)), n });
          for (let k = 0; k < json.length; k += 3) {
            call.partialArgs += json.slice(k, k + 3);
            call.arguments = k + 3 >= json.length ? JSON.parse(json) : { partial: call.partialArgs.length };
            s.push({ type: 'toolcall_delta', contentIndex: i, delta: json.slice(k, k + 3), partial });
            if (!ahead) await Promise.resolve();
          }
          delete call.partialArgs;
          s.push({ type: 'toolcall_end', contentIndex: i, toolCall: call, partial });
        }
        s.push({ type: 'done', reason: partial.stopReason, message: partial });
      })();
      return s;
    };
    const recorder = new Recorder();
    const nothing = { name: 'nothing', label: 'nothing', description: 'does nothing', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'done' }], details: {} }) };
    const agent = new Agent({ initialState: { model, tools: [nothing] }, streamFn: respond, record: recorder });
    const events = [];
    agent.subscribe((e) => events.push(JSON.parse(JSON.stringify(e))));
    await agent.prompt('go');
    await agent.prompt('again');
    const got = await replayed(recorder.toString(), { initialState: { model, tools: [{ ...nothing, execute: () => assert.fail('replay ran the tool') }] }, streamFn: noModel });
    assert.equal(got.seen.length, events.length, `seed ${seed}`);
    for (let i = 0; i < events.length; i++) assert.deepEqual(got.seen[i], events[i], `seed ${seed}, event ${i} (${events[i].type})`);
  }
});

test('a delta whose contentIndex is a string, or that carries a field of its own, replays as it was delivered', async () => {
  const respond = () => {
    const s = createAssistantMessageEventStream();
    const partial = { role: 'assistant', api: 'odd', provider: 'odd', model: 'odd', usage: usage(1), content: [{ type: 'text', text: '' }], stopReason: 'stop', timestamp: 5 };
    s.push({ type: 'start', partial });
    s.push({ type: 'text_start', contentIndex: 0, partial });
    for (let d = 0; d < 300; d++) {
      partial.content[0].text += `d${d} `;
      s.push(d % 3 === 0 ? { type: 'text_delta', contentIndex: '0', delta: `d${d} `, partial } : d % 3 === 1 ? { type: 'text_delta', contentIndex: 0, delta: `d${d} `, partial, extra: d } : { type: 'text_delta', contentIndex: 0, delta: `d${d} `, partial });
    }
    s.push({ type: 'done', reason: 'stop', message: partial });
    return s;
  };
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model }, streamFn: respond, record: recorder });
  const events = [];
  agent.subscribe((e) => events.push(JSON.parse(JSON.stringify(e))));
  await agent.prompt('go');
  const got = await replayed(recorder.toString(), { initialState: { model }, streamFn: noModel });
  assert.deepEqual(got.seen, events);
  assert.ok(events.some((e) => e.assistantMessageEvent?.contentIndex === '0') && events.some((e) => e.assistantMessageEvent?.extra === 1));
});

test('a fork at the last event has a cassette all the same; a stream that sent no more after an abort replays as the live run ended', async () => {
  const once = () => {
    const s = createAssistantMessageEventStream();
    const partial = { role: 'assistant', api: 'a', provider: 'a', model: 'a', usage: usage(1), content: [{ type: 'text', text: 'hi' }], stopReason: 'stop', timestamp: 9 };
    s.push({ type: 'start', partial });
    s.push({ type: 'done', reason: 'stop', message: partial });
    return s;
  };
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model }, streamFn: once, record: recorder });
  let count = 0;
  agent.subscribe(() => { count++; });
  await agent.prompt('go');
  const forked = await fork(recorder.toString(), { at: count - 1 }, { streamFn: noModel });
  assert.equal(forked.events.length, 0);
  // A cassette with no run: read, replayed (nothing to deliver).
  assert.equal(readCassette(forked.cassette.toString()).runs.length, 0);
  assert.deepEqual((await replay(forked.cassette.toString(), { streamFn: noModel })).messages, []);

  // The stream stops sending; a listener aborts; the run gives up on it after abortGraceMs.
  const stalls = () => {
    const s = createAssistantMessageEventStream();
    const partial = { role: 'assistant', api: 'a', provider: 'a', model: 'a', usage: usage(1), content: [{ type: 'text', text: '' }], stopReason: 'stop', timestamp: 9 };
    s.push({ type: 'start', partial });
    partial.content[0].text = 'half';
    s.push({ type: 'text_delta', contentIndex: 0, delta: 'half', partial });
    return s;
  };
  const taped = new Recorder();
  const stalled = new Agent({ initialState: { model }, streamFn: stalls, abortGraceMs: 20, record: taped });
  const events = [];
  stalled.subscribe((e) => {
    events.push(JSON.parse(JSON.stringify(e)));
    if (e.type === 'message_update') stalled.abort();
  });
  await stalled.prompt('go');
  assert.equal(stalled.state.messages.at(-1).stopReason, 'aborted');
  const got = await replayed(taped.toString(), { initialState: { model }, streamFn: noModel, abortGraceMs: 20 });
  // The run failed as a whole: its failure message is stamped by the replay's clock (a limit
  // docs/record-replay.md names); all else is as delivered.
  const unstamped = (list) => JSON.parse(JSON.stringify(list, (k, v) => (v !== null && typeof v === 'object' && v.stopReason === 'aborted' ? { ...v, timestamp: 0 } : v)));
  assert.deepEqual(unstamped(got.seen), unstamped(events));
});
