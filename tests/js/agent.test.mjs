// The Agent class against the rules of spec §11 (L-129…L-160), one test per rule or small
// group, each naming its IDs. The differential suite (agent-differential.test.mjs) compares
// whole conversations with pi-agent-core 1.6.0; these pin each rule down on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createAssistantMessageEventStream, setDefaultStreamFn, getDefaultStreamFn, streamSimple } from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';

const usage = () => ({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
import { answer } from './shared/scripted-loop.mjs';

const model = { id: 'm', name: 'm', api: 'test-api', provider: 'test', baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
const text = (t) => ({ type: 'text', text: t });
const user = (t) => ({ role: 'user', content: t, timestamp: 1 });
const reply = (content, stopReason = 'stop') => ({ role: 'assistant', content, api: 'test-api', provider: 'test', model: 'm', usage: usage(), stopReason, timestamp: 2 });
const call = (id, name, args = {}) => ({ type: 'toolCall', id, name, arguments: args });
/** Rules pi-agent-core 1.6.0 shares run against both Agents: the expectations are pi's. */
const BOTH = [['ours', Agent], ['pi-agent-core', piCore.Agent]];

/** A stream function answering with `answers` in turn (then "done"); records each call. */
function scripted(answers = []) {
  const calls = [];
  const fn = (m, context, options) => {
    calls.push({ messages: context.messages.map((x) => ({ ...x })), options, model: m });
    const s = createAssistantMessageEventStream();
    const message = answers.shift() ?? reply([text('done')]);
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...message, content: [] } });
      s.push({ type: 'done', reason: message.stopReason, message });
    });
    return s;
  };
  return { fn, calls };
}

const echoTool = (log = []) => ({
  name: 'echo', label: 'echo', description: 'echoes', parameters: { type: 'object', properties: { x: { type: 'string' } } },
  execute: async (id, args) => {
    log.push(id);
    return { content: [text(`echo ${args.x ?? ''}`)], details: {} };
  },
});

test('L-129 L-130: options are optional; defaults for convertToLlm, queue modes, transport, toolExecution', async () => {
  const { fn, calls } = scripted();
  const agent = new Agent({ streamFn: fn });
  assert.equal(agent.steeringMode, 'one-at-a-time');
  assert.equal(agent.followUpMode, 'one-at-a-time');
  assert.equal(agent.transport, 'auto');
  assert.equal(agent.toolExecution, 'parallel');
  for (const k of ['sessionId', 'thinkingBudgets', 'identity', 'beforeToolCall', 'afterToolCall', 'getApiKey']) assert.equal(agent[k], undefined, k);
  // The default convertToLlm drops custom roles.
  await agent.prompt([{ role: 'note', text: 'custom', timestamp: 1 }, user('hi')]);
  assert.deepEqual(calls[0].messages.map((m) => m.role), ['user']);
  assert.deepEqual(agent.state.messages.map((m) => m.role), ['note', 'user', 'assistant']);
  // `new Agent()` with no options at all uses the default stream function.
  assert.equal(new Agent().streamFunction, getDefaultStreamFn());
});

test('L-131: the stream function is resolved in the constructor; none at all throws the L-36 error', () => {
  const previous = getDefaultStreamFn();
  try {
    setDefaultStreamFn(undefined);
    assert.throws(() => new Agent({}), /No default stream function configured/);
    const late = scripted().fn;
    const a = new Agent({ streamFn: scripted().fn });
    setDefaultStreamFn(late);
    assert.notEqual(a.streamFunction, late, 'a default installed later is not picked up');
    a.streamFunction = late;
    assert.equal(a.streamFunction, late, 'streamFunction may be reassigned');
    assert.equal(new Agent({}).streamFunction, late);
  } finally {
    setDefaultStreamFn(previous);
  }
  assert.equal(getDefaultStreamFn(), streamSimple);
});

for (const [impl, A] of BOTH) test('L-132: the initial system message from systemPrompt and tool declarations, unless one leads already', () => {
  const tool = echoTool();
  const a = new A({ streamFn: scripted().fn, initialState: { systemPrompt: 'X' } });
  assert.deepEqual(a.state.messages, [{ role: 'system', content: 'X', timestamp: 0 }]);
  const b = new A({ streamFn: scripted().fn, initialState: { systemPrompt: 'X', tools: [tool] } });
  assert.deepEqual(b.state.messages[0].toolsAdded, [{ name: 'echo', description: 'echoes', parameters: tool.parameters }]);
  assert.notEqual(b.state.messages[0].toolsAdded[0].parameters, tool.parameters, 'a JSON copy of the schema');
  const lead = { role: 'system', content: 'existing', timestamp: 3 };
  const c = new A({ streamFn: scripted().fn, initialState: { systemPrompt: 'X', tools: [tool], messages: [lead] } });
  assert.deepEqual(c.state.messages, [lead]);
  assert.deepEqual(new A({ streamFn: scripted().fn }).state.messages, []);
});

test('L-133 L-134: the state object, its defaults, copying setters, the read-only systemPrompt; no events from state', () => {
  const a = new Agent({ streamFn: scripted().fn, initialState: { systemPrompt: 'P' } });
  const seen = [];
  a.subscribe((e) => seen.push(e.type));
  const s = a.state;
  assert.equal(a.state, s, 'the same object');
  assert.deepEqual(s.model, new piCore.Agent({ streamFn: scripted().fn }).state.model);
  assert.equal(s.thinkingLevel, 'off');
  assert.equal(s.isStreaming, false);
  assert.equal(s.streamingMessage, undefined);
  assert.ok(s.pendingToolCalls instanceof Set && s.pendingToolCalls.size === 0);
  assert.equal(s.errorMessage, undefined);
  assert.equal(s.systemPrompt, 'P');
  assert.throws(() => { s.systemPrompt = 'Q'; }, TypeError);
  const list = [user('a')];
  s.messages = list;
  assert.notEqual(s.messages, list);
  assert.deepEqual(s.messages, list);
  s.messages.push(user('b'));
  assert.equal(s.messages.length, 2, 'the getter returns the live array');
  const tools = [echoTool()];
  s.tools = tools;
  assert.notEqual(s.tools, tools);
  assert.equal(s.systemPrompt, '', 'no system message left');
  assert.deepEqual(seen, []);
});

for (const [impl, A] of BOTH) test('L-135 L-136: queues, modes, peek without consuming, clear', () => {
  const a = new A({ streamFn: scripted().fn });
  assert.equal(a.hasQueuedMessages(), false);
  a.followUp(user('f1'));
  a.followUp(user('f2'));
  assert.deepEqual(a.peekQueuedMessages(), [user('f1')]);
  a.followUpMode = 'all';
  assert.deepEqual(a.peekQueuedMessages(), [user('f1'), user('f2')]);
  a.steer(user('s1'));
  assert.deepEqual(a.peekQueuedMessages(), [user('s1')], 'steering first');
  assert.equal(a.hasQueuedMessages(), true);
  a.clearSteeringQueue();
  assert.deepEqual(a.peekQueuedMessages(), [user('f1'), user('f2')]);
  a.clearFollowUpQueue();
  assert.equal(a.hasQueuedMessages(), false);
  a.steer(user('x'));
  a.followUp(user('y'));
  a.clearAllQueues();
  assert.equal(a.hasQueuedMessages(), false);
});

for (const [impl, A] of BOTH) test(`L-137 L-138: queues drain at the loop poll points; enqueuing starts nothing and adds nothing to state (${impl})`, async () => {
  const { fn, calls } = scripted([reply([call('c1', 'echo', { x: '1' })], 'toolUse')]);
  const a = new A({ streamFn: fn, initialState: { model, tools: [echoTool()] } });
  a.steer(user('queued'));
  assert.equal(a.state.isStreaming, false);
  assert.deepEqual(a.state.messages.map((m) => m.role), ['system']);
  a.subscribe((e) => {
    if (e.type === 'tool_execution_start') a.steer(user('during tool'));
    if (e.type === 'agent_end') a.followUp(user('too late'));
  });
  await a.prompt('go');
  // The pre-queued message went into the first request, the steering one after the tool.
  assert.deepEqual(calls[0].messages.filter((m) => m.role !== 'system').map((m) => m.content), [[text('go')], 'queued']);
  assert.deepEqual(calls[1].messages.slice(-2).map((m) => m.role), ['toolResult', 'user']);
  assert.equal(calls[1].messages.at(-1).content, 'during tool');
  assert.deepEqual(a.peekQueuedMessages(), [user('too late')], 'queued after the last poll: kept for the next run');
});

for (const [impl, A] of BOTH) test(`L-139 L-140 L-144: listeners run once each, in order, awaited as a barrier; a throwing one skips the rest and fails the run (${impl})`, async () => {
  const { fn } = scripted([reply([call('c1', 'echo')], 'toolUse')]);
  const log = [];
  const tools = [{ ...echoTool(), execute: async () => { log.push('tool runs'); return { content: [text('ok')], details: {} }; } }];
  const a = new A({ streamFn: fn, initialState: { model, tools } });
  const first = async (e, signal) => {
    assert.ok(signal instanceof AbortSignal);
    if (e.type === 'message_end' && e.message.role === 'assistant') {
      await new Promise((r) => setTimeout(r, 5));
      log.push('assistant message_end handled');
    }
  };
  a.subscribe(first);
  const unsubscribe = a.subscribe(first); // the same function counts once
  a.subscribe((e) => { if (e.type === 'agent_end') log.push('second listener'); });
  await a.prompt('go');
  assert.deepEqual(log, ['assistant message_end handled', 'tool runs', 'assistant message_end handled', 'second listener']);
  unsubscribe();
  log.length = 0;
  a.subscribe((e) => { if (e.type === 'turn_start') throw new Error('listener broke'); });
  const after = [];
  a.subscribe((e) => after.push(e.type));
  await a.prompt('again');
  assert.ok(!after.includes('message_start') || after.indexOf('turn_start') < 0, 'the later listener missed turn_start');
  assert.equal(a.state.messages.at(-1).errorMessage, 'listener broke');
});

for (const [impl, A] of BOTH) test(`L-141 L-142: state reduction before listeners; state.messages is the transcript plus every message_end (${impl})`, async () => {
  const { fn } = scripted([reply([call('c1', 'echo')], 'toolUse')]);
  const a = new A({ streamFn: fn, initialState: { model, tools: [echoTool()], systemPrompt: 'S' } });
  const reads = [];
  a.subscribe((e) => {
    const s = a.state;
    reads.push(`${e.type}:${s.streamingMessage?.role ?? '-'}:${s.pendingToolCalls.size}:${s.messages.length}`);
  });
  await a.prompt('go');
  assert.deepEqual(reads, [
    'agent_start:-:0:1', 'turn_start:-:0:1', 'message_start:user:0:1', 'message_end:-:0:2',
    'message_start:assistant:0:2', 'message_end:-:0:3', 'tool_execution_start:-:1:3', 'tool_execution_end:-:0:3',
    'message_start:toolResult:0:3', 'message_end:-:0:4', 'turn_end:-:0:4', 'turn_start:-:0:4',
    'message_start:assistant:0:4', 'message_end:-:0:5', 'turn_end:-:0:5', 'agent_end:-:0:5',
  ]);
  assert.deepEqual(a.state.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'assistant']);
});

test('L-143 (improved, L-175): after a failed run, still-running tools reach no listener', async () => {
  let release;
  const slow = { ...echoTool(), name: 'slow', execute: () => new Promise((r) => { release = () => r({ content: [text('late')], details: {} }); }) };
  const { fn } = scripted([reply([call('c1', 'slow'), call('c2', 'echo')], 'toolUse')]);
  const a = new Agent({ streamFn: fn, initialState: { model, tools: [slow, echoTool()] } });
  const events = [];
  a.subscribe((e) => {
    events.push(e.type);
    if (e.type === 'tool_execution_end') throw new Error('listener failed');
  });
  await a.prompt('go');
  const count = events.length;
  release();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(events.length, count, 'no late events');
  assert.equal(events.at(-1), 'agent_end');
});

for (const [impl, A] of BOTH) test(`L-145: prompt input normalisation and the busy rejection (${impl})`, async () => {
  const { fn, calls } = scripted();
  const a = new A({ streamFn: fn, initialState: { model } });
  const image = { type: 'image', data: 'aGk=', mimeType: 'image/png' };
  await a.prompt('look', [image]);
  assert.deepEqual(calls[0].messages[0].content, [text('look'), image]);
  await a.prompt('plain', []);
  assert.deepEqual(calls[1].messages.at(-1).content, [text('plain')], 'content is always an array');
  await a.prompt(user('as message'));
  assert.equal(calls[2].messages.at(-1).content, 'as message');
  await a.prompt([]);
  assert.equal(calls.length, 4, 'an empty list still runs');
  const running = a.prompt('busy?');
  await assert.rejects(a.prompt('second'), { message: 'Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.' });
  await running;
});

for (const [impl, A] of BOTH) test(`L-146 L-154: each run sees a snapshot of messages and tools, and the stream function at its start (${impl})`, async () => {
  const first = scripted();
  const a = new A({ streamFn: first.fn, initialState: { model } });
  let changed = false;
  a.subscribe((e) => {
    if (e.type === 'turn_start' && !changed) {
      changed = true;
      a.state.messages = [user('replaced')];
      a.state.tools = [echoTool()];
      a.streamFunction = scripted().fn;
    }
  });
  await a.prompt('go');
  assert.equal(first.calls.length, 1, 'the run kept the stream function it started with');
  assert.deepEqual(first.calls[0].messages.map((m) => m.content), [[text('go')]]);
  assert.deepEqual(a.state.messages.map((m) => m.role), ['user', 'user', 'assistant'], 'later message_end pushes onto the new array');
});

for (const [impl, A] of BOTH) test(`L-147 L-148: continue() rules and the skipped initial steering poll (${impl})`, async () => {
  const { fn, calls } = scripted();
  const a = new A({ streamFn: fn, initialState: { model } });
  await assert.rejects(a.continue(), { message: 'No messages to continue from' });
  a.state.messages = [{ role: 'system', content: 's', timestamp: 0 }];
  await assert.rejects(a.continue(), { message: 'No messages to continue from' });
  a.state.messages = [user('pending question')];
  await a.continue();
  assert.equal(calls.length, 1);
  await assert.rejects(a.continue(), { message: 'Cannot continue from message role: assistant' });
  // Assistant tail: steering first, one at a time, skipping the initial poll; the
  // follow-up waits until the run would stop.
  a.steer(user('s1'));
  a.steer(user('s2'));
  a.followUp(user('f1'));
  await a.continue();
  assert.equal(calls[1].messages.at(-1).content, 's1', 'request 1 holds only the first');
  assert.equal(calls[2].messages.at(-1).content, 's2', 'request 2 the second');
  assert.equal(calls[3].messages.at(-1).content, 'f1', 'then the follow-up');
  assert.equal(a.hasQueuedMessages(), false);
  // In "all" mode both steering messages go into the first request.
  a.steeringMode = 'all';
  a.steer(user('a1'));
  a.steer(user('a2'));
  await a.continue();
  assert.deepEqual(calls[4].messages.slice(-2).map((m) => m.content), ['a1', 'a2']);
  // Follow-ups alone also continue from an assistant tail.
  a.followUp(user('f2'));
  await a.continue();
  assert.equal(calls.at(-1).messages.at(-1).content, 'f2');
  const busy = a.prompt('long');
  await assert.rejects(a.continue(), { message: 'Agent is already processing. Wait for completion before continuing.' });
  await busy;
});

for (const [impl, A] of BOTH) test(`L-149 L-150: abort() and signal; waitForIdle() settles after agent_end listeners (${impl})`, async () => {
  const a = new A({ streamFn: scripted().fn, initialState: { model } });
  a.abort(); // a no-op when idle
  assert.equal(a.signal, undefined);
  await a.waitForIdle();
  const order = [];
  a.subscribe(async (e, signal) => {
    if (e.type === 'agent_start') assert.equal(signal, a.signal);
    if (e.type === 'agent_end') {
      await new Promise((r) => setTimeout(r, 5));
      order.push('agent_end listener done');
    }
  });
  const run = a.prompt('go').then(() => order.push('prompt'));
  const idle = a.waitForIdle().then(() => order.push('idle'));
  await Promise.all([run, idle]);
  assert.deepEqual(order, ['agent_end listener done', 'idle', 'prompt']);
  // An abort from a listener ends the run as aborted.
  const stop = a.subscribe((e) => { if (e.type === 'message_start' && e.message.role === 'user') a.abort(); });
  const slowStream = (m, c, options) => {
    const s = createAssistantMessageEventStream();
    const aborted = () => s.push({ type: 'error', reason: 'aborted', error: { ...reply([], 'aborted'), errorMessage: 'Request was aborted' } });
    if (options.signal.aborted) queueMicrotask(aborted);
    else options.signal.addEventListener('abort', aborted);
    return s;
  };
  a.streamFunction = slowStream;
  await a.prompt('stop me');
  stop();
  assert.equal(a.state.messages.at(-1).stopReason, 'aborted');
});

for (const [impl, A] of BOTH) test(`L-151: reset() keeps the replayed system message, clears the rest; throws while busy (${impl})`, async () => {
  const a = new A({ streamFn: scripted().fn, initialState: { model, systemPrompt: 'S', tools: [echoTool()] } });
  a.state.messages = [...a.state.messages, { role: 'system', content: 'more', sections: { rules: 'r' }, timestamp: 4 }, user('u')];
  a.steer(user('s'));
  a.followUp(user('f'));
  a.reset();
  assert.equal(a.state.messages.length, 1);
  assert.deepEqual(a.state.messages[0].content, 'S\n\nmore');
  assert.deepEqual(a.state.messages[0].sections, { rules: 'r' });
  assert.equal(a.state.messages[0].toolsAdded.length, 1);
  assert.equal(a.hasQueuedMessages(), false);
  assert.equal(a.state.tools.length, 1, 'tools kept');
  const busy = a.prompt('go');
  assert.throws(() => a.reset(), { message: 'Agent is already processing. Wait for completion before resetting.' });
  await busy;
  a.state.messages = [user('only')];
  a.reset();
  assert.deepEqual(a.state.messages, []);
});

for (const [impl, A] of BOTH) test(`L-152 L-153: the per-run config forwards the Agent fields (no apiKey) and adapts prepareNextTurn (${impl})`, async () => {
  const { fn, calls } = scripted([reply([call('c1', 'echo')], 'toolUse')]);
  const turns = [];
  const a = new A({
    streamFn: fn,
    initialState: { model, tools: [echoTool()], thinkingLevel: 'high' },
    sessionId: 'sess-1', thinkingBudgets: { low: 10 }, maxRetryDelayMs: 5, transport: 'sse', getApiKey: () => 'dyn-key',
    prepareNextTurn: async (signal) => { turns.push(['legacy', signal instanceof AbortSignal]); },
  });
  await a.prompt('go');
  const options = calls[0].options;
  assert.equal(options.sessionId, 'sess-1');
  assert.deepEqual(options.thinkingBudgets, { low: 10 });
  assert.equal(options.maxRetryDelayMs, 5);
  assert.equal(options.transport, 'sse');
  assert.equal(options.reasoning, 'high');
  assert.equal(options.apiKey, 'dyn-key');
  assert.deepEqual(turns, [['legacy', true]]);
  a.prepareNextTurnWithContext = async (turn, signal) => { turns.push(['context', Array.isArray(turn.messages ?? turn.newMessages ?? []), signal === a.signal]); };
  a.state.thinkingLevel = 'off';
  calls.length = 0;
  a.streamFunction = scripted([reply([call('c2', 'echo')], 'toolUse')]).fn;
  await a.prompt('again');
  assert.deepEqual(turns[1], ['context', true, true]);
});

for (const [impl, A] of BOTH) test(`L-155 L-156: run start clears the last error; isStreaming holds through agent_end listeners (${impl})`, async () => {
  let fail = true;
  const fn = (m, c, o) => {
    if (fail) throw new Error('stream broke');
    return scripted().fn(m, c, o);
  };
  const a = new A({ streamFn: fn, initialState: { model } });
  await a.prompt('one');
  assert.equal(a.state.errorMessage, 'stream broke');
  fail = false;
  let during;
  a.subscribe((e) => {
    if (e.type === 'agent_start') during = a.state.errorMessage;
    if (e.type === 'agent_end') assert.equal(a.state.isStreaming, true);
  });
  await a.prompt('two');
  assert.equal(during, undefined, 'cleared when the next run starts');
  assert.equal(a.state.isStreaming, false);
  assert.equal(a.state.pendingToolCalls.size, 0);
});

test('L-157 L-158: a failed run ends with the synthetic error message and its events', async () => {
  const a = new Agent({ streamFn: () => { throw new Error('sync throw'); }, initialState: { model } });
  const types = [];
  a.subscribe((e) => types.push(e.type + (e.message ? `(${e.message.role})` : '')));
  await a.prompt('go');
  assert.deepEqual(types, ['agent_start', 'turn_start', 'message_start(user)', 'message_end(user)', 'message_start(assistant)',
    'message_end(assistant)', 'turn_end(assistant)', 'agent_end']);
  const failure = a.state.messages.at(-1);
  assert.deepEqual({ ...failure, timestamp: 0 }, {
    role: 'assistant', content: [text('')], api: 'test-api', provider: 'test', model: 'm',
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'error', errorMessage: 'sync throw', timestamp: 0,
  });
  // A listener that throws at turn_start: the prompt is never emitted.
  const b = new Agent({ streamFn: scripted().fn, initialState: { model } });
  const seen = [];
  let thrown = false;
  b.subscribe((e) => {
    seen.push(e.type);
    if (e.type === 'turn_start' && !thrown) { thrown = true; throw 'a string'; }
  });
  await b.prompt('go');
  assert.deepEqual(seen, ['agent_start', 'turn_start', 'message_start', 'message_end', 'turn_end', 'agent_end']);
  assert.deepEqual(b.state.messages.map((m) => m.errorMessage), ['a string']);
  // Improvement: each failure message has its own usage object.
  await a.prompt('again');
  assert.notEqual(a.state.messages.at(-1).usage, failure.usage);
});

for (const [impl, A] of BOTH) test(`L-159: a listener that throws while the failure is processed rejects the prompt, after cleanup (${impl})`, async () => {
  const a = new A({ streamFn: () => { throw new Error('first'); }, initialState: { model } });
  a.subscribe((e) => { if (e.type === 'agent_end') throw new Error('listener at agent_end'); });
  await assert.rejects(a.prompt('go'), { message: 'listener at agent_end' });
  assert.equal(a.state.isStreaming, false);
  assert.equal(a.signal, undefined);
});

test('L-160 (improved): queued messages a failed run drained but never sent go back to their queue', async () => {
  const { fn } = scripted([reply([call('c1', 'echo')], 'toolUse')]);
  const a = new Agent({ streamFn: fn, initialState: { model, tools: [echoTool()] } });
  a.prepareNextTurn = async () => { throw new Error('prepareNextTurn failed'); };
  a.subscribe((e) => { if (e.type === 'tool_execution_start') a.steer(user('steer me')); });
  await a.prompt('go');
  assert.equal(a.state.messages.at(-1).errorMessage, 'prepareNextTurn failed');
  assert.deepEqual(a.peekQueuedMessages(), [user('steer me')], 'pi-agent-core loses it');
  // pi-agent-core 1.6.0 on the same script:
  const p = new piCore.Agent({ streamFn: scripted([reply([call('c1', 'echo')], 'toolUse')]).fn, initialState: { model, tools: [echoTool()] } });
  p.prepareNextTurn = async () => { throw new Error('prepareNextTurn failed'); };
  p.subscribe((e) => { if (e.type === 'tool_execution_start') p.steer(user('steer me')); });
  await p.prompt('go');
  assert.deepEqual(p.peekQueuedMessages(), []);
});

test('Re-entrancy: listeners, tools and hooks call back into the Agent while the built-in (wasm) stream runs', async () => {
  const { startScenarioServer } = await import('./shared/openai-server.mjs');
  const server = await startScenarioServer('openai-completions');
  try {
    const local = { ...model, api: 'openai-completions', provider: 'local', baseUrl: server.baseUrl };
    const reads = [];
    // Each re-entrant call happens once: the scenario server answers a user message with
    // another tool call.
    const once = new Set();
    const first = (k) => !once.has(k) && once.add(k);
    const calc = {
      name: 'calc', label: 'calc', description: 'multiplies',
      parameters: { type: 'object', properties: { expression: { type: 'string' }, note: { type: 'string' } } },
      execute: async (_id, { expression }) => {
        if (first('tool')) agent.steer(user('from the tool'));
        reads.push(`tool sees streaming=${agent.state.isStreaming} pending=${agent.state.pendingToolCalls.size}`);
        const [x, y] = expression.split('*').map(Number);
        return { content: [text(String(x * y))], details: {} };
      },
    };
    const agent = new Agent({
      initialState: { model: local, tools: [calc] },
      getApiKey: () => 'local-key',
      beforeToolCall: async () => {
        if (first('hook')) agent.followUp(user('from the hook'));
        return undefined;
      },
    });
    const busy = [];
    agent.subscribe((e) => {
      if (e.type !== 'message_update') return;
      // Called from inside wasm's delta delivery.
      reads.push(`update ${e.assistantMessageEvent.type} streaming=${agent.state.streamingMessage === e.message}`);
      if (e.assistantMessageEvent.type === 'toolcall_start' && first('listener')) {
        agent.steer(user('from a listener'));
        agent.prompt('not now').catch((err) => busy.push(err.message));
        assert.throws(() => agent.reset(), /already processing/);
      }
    });
    await agent.prompt('what is 17*23?');
    assert.deepEqual(busy, ['Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.']);
    assert.ok(reads.includes('tool sees streaming=true pending=1'));
    assert.ok(reads.every((r) => !r.startsWith('update') || r.endsWith('streaming=true')));
    const users = agent.state.messages.filter((m) => m.role === 'user').map((m) => (typeof m.content === 'string' ? m.content : m.content[0].text));
    assert.deepEqual(users, ['what is 17*23?', 'from a listener', 'from the tool', 'from the hook']);
    // abort() from a listener inside a built-in stream's delta: the run ends aborted, the Agent is usable after.
    const stop = agent.subscribe((e) => { if (e.type === 'message_update') agent.abort(); });
    await agent.prompt('what is 17*23?');
    stop();
    assert.equal(agent.state.messages.at(-1).stopReason, 'aborted');
    assert.equal(agent.state.isStreaming, false);
    await agent.prompt('what is 17*23?');
    assert.equal(agent.state.messages.at(-1).stopReason, 'stop');
  } finally {
    await server.close();
  }
});

test('a value steer() took that is no message fails one run, not every run after it (outside tester, round 2)', async () => {
  const a = new Agent({ initialState: { model }, streamFn: scripted().fn });
  a.steer(5);
  await a.prompt('first');
  assert.match(a.state.errorMessage ?? '', /item 0 is not a message/);
  assert.equal(a.hasQueuedMessages(), false, 'the bad value is not put back');
  await a.prompt('second');
  assert.equal(a.state.errorMessage, undefined);
  assert.equal(a.state.messages.at(-1).role, 'assistant');
  assert.equal(a.state.messages.at(-1).stopReason, 'stop');
});

test('new Agent({ restore: null }) starts afresh, as for a session never saved', () => {
  const a = new Agent({ initialState: { model }, restore: null });
  assert.deepEqual(a.state.messages, []);
});

test('L-80/L-152: the options an Agent\'s stream function gets have pi\'s keys in pi\'s order and pi\'s values (this package\'s own options only when set)', async () => {
  const { createAssistantMessageEventStream: piStream } = await import('@earendil-works/pi-ai');
  const keys = {};
  for (const [name, AgentClass, make] of [['ours', Agent, createAssistantMessageEventStream], ['pi', piCore.Agent, piStream]]) {
    const seen = [];
    const streamFn = (_model, _context, options) => {
      seen.push(Object.entries(options).map(([k, v]) => [k, typeof v === 'function' ? 'function' : k === 'signal' ? v instanceof AbortSignal : v]));
      return answer(make, [{ type: 'text', text: 'ok' }], 'stop');
    };
    const agent = new AgentClass({ initialState: { model }, streamFn, sessionId: 's1', identity: { version: '7' } });
    agent.prepareNextTurn = async () => undefined;
    await agent.prompt('hi');
    agent.state.thinkingLevel = 'high';
    agent.identity = { attribution: null };
    await agent.prompt('again');
    keys[name] = seen;
  }
  assert.deepEqual(keys.ours, keys.pi);
  const own = new Agent({ initialState: { model }, streamFn: (_m, _c, options) => { keys.own = Object.keys(options); return scripted([{ text: 'ok' }]).fn(_m, _c, options); }, abortGraceMs: 100, onInterruptedToolCall: () => undefined });
  await own.prompt('hi');
  assert.deepEqual(keys.own.slice(-4), ['onInterruptedToolCall', 'abortGraceMs', 'apiKey', 'signal']);
});
