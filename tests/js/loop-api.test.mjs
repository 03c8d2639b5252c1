// The loop API from JS (spec §§2–10 through the package): tool values of every kind, hooks
// that throw, re-entrancy, abort at each stage, object identity, and the entry points'
// preconditions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  setDefaultStreamFn,
  getDefaultStreamFn,
  createAssistantMessageEventStream,
  EventStream,
  DEFAULT_AGENT_IDENTITY,
} from 'pi-agent-wasm';

import { answer } from './shared/scripted-loop.mjs';

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const A = (content, stopReason = 'stop', extra = {}) => ({
  role: 'assistant', content, api: 'a', provider: 'p', model: 'm', usage, stopReason, timestamp: Date.now(), ...extra,
});
const user = (text) => ({ role: 'user', content: [{ type: 'text', text }], timestamp: 1 });
const call = (id, name, args = {}) => ({ type: 'toolCall', id, name, arguments: args });
const model = { id: 'm', api: 'a', provider: 'p' };
const baseConfig = { model, convertToLlm: (m) => m.filter((x) => x.role !== 'note') };

/** A stream function answering with `finals` in turn, each streamed with a start. */
function scripted(finals, seen = []) {
  let i = 0;
  return (m, context, options) => {
    seen.push({ model: m, context, options });
    const final = typeof finals[i] === 'function' ? finals[i](options) : finals[i] ?? A([{ type: 'text', text: 'done' }]);
    i += 1;
    const s = createAssistantMessageEventStream();
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...final, content: [] } });
      if (final.stopReason === 'error' || final.stopReason === 'aborted') s.push({ type: 'error', reason: final.stopReason, error: final });
      else s.push({ type: 'done', reason: final.stopReason, message: final });
    });
    return s;
  };
}

async function run(prompts, context, config, streamFn, signal) {
  const events = [];
  const messages = await runAgentLoop(prompts, context, { ...baseConfig, ...config }, (e) => { events.push(e); }, signal, streamFn);
  return { events, messages, types: events.map((e) => e.type) };
}

const toolResults = (messages) => messages.filter((m) => m.role === 'toolResult');
const textOf = (m) => m.content[0]?.text;

test('L-103/L-104: a tool may return a value, a Promise, throw anything, or reject with undefined', async () => {
  const cases = {
    value: () => ({ content: [{ type: 'text', text: 'plain' }], details: {} }),
    promise: async () => ({ content: [{ type: 'text', text: 'async' }], details: {} }),
    throwError: () => { throw new Error('boom'); },
    throwString: () => { throw 'a string'; },
    throwObject: () => { throw { code: 42 }; },
    rejectUndefined: () => Promise.reject(undefined),
    returnUndefined: () => undefined,
  };
  const tools = Object.entries(cases).map(([name, execute]) => ({ name, label: name, description: name, parameters: { type: 'object' }, execute }));
  const calls = Object.keys(cases).map((name, i) => call(`c${i}`, name));
  const { messages } = await run([user('go')], { messages: [], tools }, {}, scripted([A(calls, 'toolUse')]));
  const byName = Object.fromEntries(toolResults(messages).map((m) => [m.toolName, [textOf(m), m.isError]]));
  assert.deepEqual(byName, {
    value: ['plain', false],
    promise: ['async', false],
    throwError: ['boom', true],
    throwString: ['a string', true],
    throwObject: ['[object Object]', true],
    rejectUndefined: ['undefined', true],
    returnUndefined: ['Tool returnUndefined returned undefined or null instead of a result object', true],
  });
});

test('L-117/L-120: the result object a tool returns is the one tool_execution_end carries', async () => {
  const result = { content: [{ type: 'text', text: 'r' }], details: { big: [1, 2, 3] }, extra: 'kept' };
  const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => result };
  const { events } = await run([user('go')], { messages: [], tools: [tool] }, {}, scripted([A([call('c1', 't')], 'toolUse')]));
  const end = events.find((e) => e.type === 'tool_execution_end');
  assert.equal(end.result, result);
  assert.equal(end.isError, false);
  assert.equal(typeof end.durationMs, 'number');
});

test('L-34/L-66: prompt objects keep their identity through events and the result', async () => {
  const prompt = user('hi');
  const { events, messages } = await run([prompt], { messages: [] }, {}, scripted([A([{ type: 'text', text: 'x' }])]));
  const start = events.find((e) => e.type === 'message_start');
  const end = events.find((e) => e.type === 'message_end');
  assert.equal(start.message, prompt);
  assert.equal(end.message, prompt);
  assert.equal(messages[0], prompt);
  assert.equal(events.at(-1).messages[0], prompt);
});

test('L-100: arguments a beforeToolCall hook mutates are what execute receives', async () => {
  let received;
  const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object', properties: { a: { type: 'number' } } }, execute: async (_id, args) => { received = args; return { content: [], details: {} }; } };
  await run([user('go')], { messages: [], tools: [tool] }, {
    beforeToolCall: async ({ args }) => { args.addedByHook = true; },
  }, scripted([A([call('c1', 't', { a: '5' })], 'toolUse')]));
  assert.deepEqual(received, { a: 5, addedByHook: true });
});

test('L-105: onUpdate partial results are forwarded unchanged, later ones ignored without error', async () => {
  const partial = { content: [{ type: 'text', text: 'half' }], details: { p: 0.5 } };
  let late;
  const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async (_id, _args, _signal, onUpdate) => { onUpdate(partial); late = onUpdate; return { content: [], details: {} }; } };
  const { events } = await run([user('go')], { messages: [], tools: [tool] }, {}, scripted([A([call('c1', 't')], 'toolUse')]));
  const update = events.find((e) => e.type === 'tool_execution_update');
  assert.equal(update.partialResult, partial);
  assert.doesNotThrow(() => late({ ignored: true }));
  assert.equal(events.filter((e) => e.type === 'tool_execution_update').length, 1);
});

test('L-82: a hook that throws rejects the run with the thrown value itself', async () => {
  const thrown = new RangeError('hook broke');
  await assert.rejects(run([user('go')], { messages: [] }, { transformContext: () => { throw thrown; } }, scripted([])), (e) => e === thrown);
  await assert.rejects(run([user('go')], { messages: [] }, { convertToLlm: async () => { throw 'plain string'; } }, scripted([])), (e) => e === 'plain string');
  await assert.rejects(run([user('go')], { messages: [] }, { getApiKey: () => Promise.reject(undefined) }, scripted([])), (e) => e === undefined);
  const finish = { reason: 'custom object' };
  await assert.rejects(run([user('go')], { messages: [] }, { finishTurn: () => { throw finish; } }, scripted([A([])])), (e) => e === finish);
});

test('L-82: a throwing stream function or listener rejects the run', async () => {
  const boom = new Error('stream fn threw');
  await assert.rejects(run([user('go')], { messages: [] }, {}, () => { throw boom; }), (e) => e === boom);
  const events = [];
  await assert.rejects(
    runAgentLoop([user('go')], { messages: [] }, baseConfig, (e) => { events.push(e.type); if (e.type === 'turn_start') throw new Error('listener'); }, undefined, scripted([])),
    /listener/,
  );
  assert.deepEqual(events, ['agent_start', 'turn_start']);
});

test('a value that cannot be read rejects with code invalid_input and what reading it threw as cause', async () => {
  const thrown = new Error('getter broke');
  const message = { role: 'user', timestamp: 1, get content() { throw thrown; } };
  await assert.rejects(run([message], { messages: [] }, {}, scripted([A([])])), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'invalid_input');
    assert.match(e.message, /cannot be converted to JSON: getter broke/);
    assert.equal(e.cause, thrown);
    return true;
  });
  // A BigInt in a field the loop never reads passes through as the caller's own value, as in
  // pi (issue 32: one owner per value); in a checkpointed run, whose checkpoints are JSON, the
  // run rejects and the cause is JSON.stringify's own TypeError.
  const big = { role: 'user', timestamp: 1, content: 'x', n: 1n, extra: { m: 2n } };
  let seen;
  const passes = await run([big], { messages: [] }, {}, (model, context, options) => { seen = context.messages[0]; return scripted([A([])])(model, context, options); });
  assert.equal(passes.types.at(-1), 'agent_end');
  assert.equal(seen.n, 1n);
  assert.equal(seen.extra, big.extra);
  await assert.rejects(run([big], { messages: [] }, { onCheckpoint: () => {} }, scripted([A([])])), (e) => {
    assert.equal(e.code, 'invalid_input');
    assert.ok(e.cause instanceof TypeError, String(e.cause));
    return true;
  });
  // A message the core never saw, returned by a hook: the same shape of error. (What
  // convertToLlm returns goes to a JS stream function unread, as in pi: one-owner.test.mjs.)
  await assert.rejects(run([user('go')], { messages: [] }, { transformContext: (m) => [...m, message] }, scripted([A([])])), (e) => {
    assert.equal(e.code, 'invalid_input');
    assert.equal(e.cause, thrown);
    return true;
  });
});

test('hook values of the wrong type fail the run with a clear error (improvement over pi)', async () => {
  await assert.rejects(run([user('go')], { messages: [] }, { convertToLlm: () => 'nope' }, scripted([])), (e) => {
    assert.equal(e.code, 'invalid_input');
    assert.equal(e.message, 'convertToLlm: expected an array of messages, got a string');
    return true;
  });
  await assert.rejects(run([user('go')], { messages: [] }, { getSteeringMessages: () => 'junk' }, scripted([])), /getSteeringMessages: expected an array/);
  // Falsy queue results and unknown finishTurn actions are read as pi reads them.
  const ok = await run([user('go')], { messages: [] }, { getSteeringMessages: () => null, finishTurn: () => 'end' }, scripted([A([])]));
  assert.equal(ok.types.at(-1), 'agent_end');
});

test('L-33/L-35: continue preconditions: thrown synchronously by agentLoopContinue, rejected by runAgentLoopContinue', async () => {
  assert.throws(() => agentLoopContinue({ messages: [] }, baseConfig, undefined, scripted([])), { message: 'Cannot continue: no messages in context' });
  assert.throws(() => agentLoopContinue({ messages: [A([])] }, baseConfig, undefined, scripted([])), { message: 'Cannot continue from message role: assistant' });
  await assert.rejects(runAgentLoopContinue({ messages: [] }, baseConfig, () => {}, undefined, scripted([])), { message: 'Cannot continue: no messages in context' });
});

test("L-35/L-172: runAgentLoopContinue does not append to the caller's messages array (improvement)", async () => {
  const messages = [user('q')];
  const out = await runAgentLoopContinue({ messages }, baseConfig, () => {}, undefined, scripted([A([{ type: 'text', text: 'a' }])]));
  assert.equal(messages.length, 1);
  assert.equal(out.length, 1);
});

test('L-36: default stream function: missing → rejects after the prompt events; set → used', async () => {
  setDefaultStreamFn(undefined);
  assert.throws(() => getDefaultStreamFn(), /No default stream function configured/);
  const events = [];
  await assert.rejects(runAgentLoop([user('x')], { messages: [] }, baseConfig, (e) => { events.push(e.type); }), /No default stream function configured/);
  assert.deepEqual(events, ['agent_start', 'turn_start', 'message_start', 'message_end']);
  const fn = scripted([A([{ type: 'text', text: 'from default' }])]);
  setDefaultStreamFn(fn);
  assert.equal(getDefaultStreamFn(), fn);
  const out = await runAgentLoop([user('x')], { messages: [] }, baseConfig, () => {});
  assert.equal(out[1].content[0].text, 'from default');
  setDefaultStreamFn(undefined);
});

test('L-80/L-78/L-37: the stream function gets the config spread with apiKey, identity and signal', async () => {
  const seen = [];
  const controller = new AbortController();
  await runAgentLoop([user('x')], { messages: [] }, { ...baseConfig, apiKey: 'k', temperature: 0.2, reasoning: 'high' }, () => {}, controller.signal, scripted([A([])], seen));
  const { options, context, model: m } = seen[0];
  assert.equal(m, model);
  assert.deepEqual(Object.keys(context), ['messages']);
  assert.equal(options.apiKey, 'k');
  assert.equal(options.temperature, 0.2);
  assert.equal(options.reasoning, 'high');
  assert.equal(options.signal, controller.signal);
  assert.equal(options.convertToLlm, baseConfig.convertToLlm);
  assert.deepEqual(options.identity, DEFAULT_AGENT_IDENTITY);
});

test('L-80: the options object has pi\'s own keys in pi\'s order, an own `__proto__` key and a symbol key included, and a plain prototype; the final message\'s copy with thinkingLevel too', async () => {
  const pi = await import('@earendil-works/pi-agent-core');
  const { createAssistantMessageEventStream: piStream } = await import('@earendil-works/pi-ai');
  const sym = Symbol('s');
  const shapes = (name) => {
    const seen = [];
    const make = name === 'pi' ? piStream : createAssistantMessageEventStream;
    const streamFn = (_model, _context, options) => {
      seen.push(options);
      return answer(make, [], 'stop');
    };
    return { seen, streamFn };
  };
  const described = (o) => ({ keys: Reflect.ownKeys(o).map(String), proto: Object.getPrototypeOf(o) === Object.prototype, own: Object.hasOwn(o, '__proto__') ? o.__proto__ : 'none' });
  for (const config of [
    { ...baseConfig, apiKey: 'k', temperature: 0.2 },
    Object.assign(JSON.parse('{"__proto__": {"x": 1}, "maxTokens": 9}'), baseConfig, { [sym]: 1 }),
    { model, convertToLlm: baseConfig.convertToLlm, reasoning: 'high', signal: 'not the signal', identity: { version: 'mine' } },
  ]) {
    const out = {};
    for (const [name, run] of [['ours', runAgentLoop], ['pi', pi.runAgentLoop]]) {
      const { seen, streamFn } = shapes(name);
      const messages = await run([user('x')], { messages: [] }, config, () => {}, undefined, streamFn);
      out[name] = { options: described(seen[0]), final: described(messages.at(-1)) };
    }
    assert.deepEqual(out.ours, out.pi);
  }
});

test('L-78: each request\'s identity is made from config.identity as pi makes it: read at each request (a change between requests counts), a fresh object over the default, whose attribution is the default\'s own object unless replaced', async () => {
  const pi = await import('@earendil-works/pi-agent-core');
  const { createAssistantMessageEventStream: piStream } = await import('@earendil-works/pi-ai');
  const out = {};
  for (const [name, core, make] of [['ours', { runAgentLoop, DEFAULT_AGENT_IDENTITY }, createAssistantMessageEventStream], ['pi', pi, piStream]]) {
    const identities = [];
    const config = { model, convertToLlm: (m) => m, identity: { version: '1.0', userAgent: 'short' } };
    const changes = [{ userAgent: undefined }, { version: 'x', attribution: null }];
    let n = 0;
    const streamFn = (_model, _context, options) => {
      identities.push(options.identity);
      n += 1;
      return n <= 2 ? answer(make, [{ type: 'toolCall', id: `c${n}`, name: 't', arguments: {} }], 'toolUse') : answer(make, [], 'stop');
    };
    const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => { config.identity = changes.shift(); return { content: [], details: {} }; } };
    await core.runAgentLoop([user('x')], { messages: [], tools: [tool] }, config, () => {}, undefined, streamFn);
    assert.equal(identities.length, 3);
    assert.notEqual(identities[0], identities[1], `${name}: a fresh object for each request`);
    assert.ok(identities.slice(0, 2).every((i) => i.attribution === core.DEFAULT_AGENT_IDENTITY.attribution), `${name}: the default's attribution object`);
    out[name] = identities.map((i) => ({ ...i, attribution: i.attribution && 'default' }));
  }
  assert.deepEqual(out.ours, out.pi);
  assert.deepEqual(out.ours.map((i) => [Object.keys(i), i.version]), [[['attribution', 'userAgent', 'version'], '1.0'], [['attribution'], undefined], [['attribution', 'version'], 'x']]);
});

test('L-123/L-124/L-127: abort during a tool batch: every call gets a result, the next response ends the run', async () => {
  const controller = new AbortController();
  const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async (_id, _a, signal) => {
    controller.abort();
    return { content: [{ type: 'text', text: signal.aborted ? 'saw abort' : 'no abort' }], details: {} };
  } };
  const finals = [A([call('c1', 't'), call('c2', 't')], 'toolUse'), (o) => A([], o.signal.aborted ? 'aborted' : 'stop', { errorMessage: 'aborted' })];
  const { messages, types } = await run([user('go')], { messages: [], tools: [tool] }, { toolExecution: 'sequential' }, scripted(finals), controller.signal);
  const results = toolResults(messages);
  assert.deepEqual(results.map(textOf), ['saw abort', 'Operation aborted']);
  assert.equal(messages.at(-1).stopReason, 'aborted');
  assert.equal(types.at(-1), 'agent_end');
});

test('abort before the run: the stream function still runs and its aborted answer ends the run (L-122)', async () => {
  const controller = new AbortController();
  controller.abort();
  const { messages } = await run([user('go')], { messages: [] }, {}, scripted([(o) => A([], o.signal.aborted ? 'aborted' : 'stop', { errorMessage: 'x' })]), controller.signal);
  assert.equal(messages.at(-1).stopReason, 'aborted');
});

test('re-entrancy: a tool calls runToolCall, and a listener starts a second run, without "recursive use" errors', async () => {
  const inner = { name: 'inner', label: 'inner', description: 'inner', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'inner ok' }], details: {} }) };
  const outer = { name: 'outer', label: 'outer', description: 'outer', parameters: { type: 'object' }, execute: async () => {
    const r = await runToolCall(call('n1', 'inner'), { tools: [inner], assistantMessage: A([]), context: { messages: [] } });
    return { content: [{ type: 'text', text: `outer saw ${r.result.content[0].text}` }], details: {} };
  } };
  let nested;
  const { messages } = await run([user('go')], { messages: [], tools: [outer, inner] }, {}, scripted([A([call('c1', 'outer')], 'toolUse')]));
  assert.equal(textOf(toolResults(messages)[0]), 'outer saw inner ok');
  const events = [];
  await runAgentLoop([user('a')], { messages: [] }, baseConfig, async (e) => {
    events.push(e.type);
    if (e.type === 'turn_start' && !nested) nested = await run([user('nested')], { messages: [] }, {}, scripted([A([{ type: 'text', text: 'inner run' }])]));
  }, undefined, scripted([A([{ type: 'text', text: 'outer run' }])]));
  assert.equal(nested.messages[1].content[0].text, 'inner run');
  assert.equal(events.at(-1), 'agent_end');
});

test('L-38: runToolCall runs hooks, validation and execute; failures resolve as errors', async () => {
  const tool = { name: 'calc', label: 'calc', description: 'calc', parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }, execute: async (_id, args, _s, onUpdate) => { await onUpdate({ step: 1 }); return { content: [{ type: 'text', text: String(args.n + 1) }], details: {} }; } };
  const toolCall = call('x', 'calc', { n: '41' });
  const updates = [];
  const out = await runToolCall(toolCall, {
    tools: [tool], assistantMessage: A([toolCall]), context: { messages: [], custom: 1 },
    beforeToolCall: async ({ context }) => { assert.equal(context.custom, 1); },
    onUpdate: (u) => { updates.push(u); },
  });
  assert.equal(out.toolCall, toolCall);
  assert.equal(out.result.content[0].text, '42');
  assert.equal(out.isError, false);
  assert.equal(typeof out.durationMs, 'number');
  assert.deepEqual(updates, [{ step: 1 }]);
  const missing = await runToolCall(call('y', 'nope'), { tools: [tool], assistantMessage: A([]), context: { messages: [] } });
  assert.deepEqual([missing.isError, missing.result.content[0].text, 'durationMs' in missing], [true, 'Tool nope not found', false]);
  const invalid = await runToolCall(call('z', 'calc', {}), { tools: [tool], assistantMessage: A([]), context: { messages: [] } });
  assert.match(invalid.result.content[0].text, /Validation failed for tool "calc":\n {2}- n: missing/);
  // L-106: a rejecting update sink rejects runToolCall.
  await assert.rejects(runToolCall(call('w', 'calc', { n: 1 }), { tools: [tool], assistantMessage: A([]), context: { messages: [] }, onUpdate: () => Promise.reject(new Error('sink down')) }), /sink down/);
});

test('L-17/L-31/L-32: agentLoop is observational, and a rejected run ends its stream (improvement)', async () => {
  const stream = agentLoop([user('go')], { messages: [] }, baseConfig, undefined, scripted([A([{ type: 'text', text: 'hi' }])]));
  assert.ok(stream instanceof EventStream);
  const types = [];
  for await (const e of stream) types.push(e.type);
  assert.equal(types[0], 'agent_start');
  assert.equal(types.at(-1), 'agent_end');
  assert.equal((await stream.result()).length, 2);
  const failing = agentLoop([user('go')], { messages: [] }, { ...baseConfig, convertToLlm: () => { throw new Error('bad'); } }, undefined, scripted([]));
  const seen = [];
  await assert.rejects(async () => { for await (const e of failing) seen.push(e.type); }, /bad/);
  assert.deepEqual(seen, ['agent_start', 'turn_start', 'message_start', 'message_end']);
  await assert.rejects(failing.result(), /bad/);
});

test('L-15/L-170: a stream that ends with no terminal event and no result ends the run with an error message (improvement)', async () => {
  const streamFn = () => {
    const s = createAssistantMessageEventStream();
    queueMicrotask(() => {
      s.push({ type: 'start', partial: A([]) });
      s.end();
    });
    return s;
  };
  const { messages, types } = await run([user('go')], { messages: [] }, {}, streamFn);
  assert.equal(messages.at(-1).stopReason, 'error');
  assert.match(messages.at(-1).errorMessage, /ended without a done or error event/);
  assert.equal(types.at(-1), 'agent_end');
});

test("L-173: the stream function's final message object is not mutated (improvement)", async () => {
  const final = A([{ type: 'text', text: 'x' }]);
  final.timestamp = 1; // before the stream: no durationMs stamping either
  const { messages } = await run([user('go')], { messages: [] }, { reasoning: 'low' }, scripted([final]));
  assert.equal(messages.at(-1).thinkingLevel, 'low');
  assert.equal('thinkingLevel' in final, false);
});

test('L-14/L-16/L-22: EventStream and AssistantMessageEventStream semantics', async () => {
  const s = createAssistantMessageEventStream();
  const started = Date.now();
  const message = A([], 'stop');
  message.timestamp = started + 1;
  s.push({ type: 'text_delta', delta: 'x' });
  s.push({ type: 'done', reason: 'stop', message });
  s.push({ type: 'text_delta', delta: 'ignored after done' });
  const seen = [];
  for await (const e of s) seen.push(e.type);
  assert.deepEqual(seen, ['text_delta', 'done']);
  assert.equal(await s.result(), message);
  assert.equal(typeof message.durationMs, 'number');
  const plain = new EventStream(() => false, () => undefined);
  plain.push(1);
  plain.end('r');
  const items = [];
  for await (const e of plain) items.push(e);
  assert.deepEqual(items, [1]);
  assert.equal(await plain.result(), 'r');
});

test('a stream whose iterator gives non-objects or empty results rejects the run as pi does, never spins', async () => {
  const pi = await import('@earendil-works/pi-agent-core');
  const ours = await import('pi-agent-wasm');
  for (const result of [42, null, 'x', {}]) {
    const streamFn = () => ({ [Symbol.asyncIterator]: () => ({ next: async () => result }), result: async () => A([]) });
    const outcome = async (impl) => {
      // A timer that must still fire: a spinning loop would starve it and the test would hang.
      const timer = new Promise((resolve) => setTimeout(resolve, 2000, 'hung'));
      const run = impl.runAgentLoop([user('hi')], { messages: [] }, baseConfig, () => {}, undefined, streamFn).then(() => 'resolved', (e) => `${e.constructor.name}: ${e.message}`);
      return Promise.race([run, timer]);
    };
    assert.equal(await outcome(ours), await outcome(pi), `iterator result ${JSON.stringify(result)}`);
  }
});

test('thrown values that cannot even be printed (revoked Proxy, throwing traps) never crash the process', async () => {
  // Object.prototype.toString and String() both throw on these; the glue used to call the
  // former unguarded, and the exception escaped every handler (an uncaught error in Node).
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const unprintable = {
    'a revoked Proxy': revoked.proxy,
    'a Proxy whose get trap throws': new Proxy({}, { get() { throw new Error('trap'); } }),
    'a throwing Symbol.toStringTag': { get [Symbol.toStringTag]() { throw 1; } },
    'a Proxy of an Error whose get trap throws': new Proxy(new Error('x'), { get() { throw new Error('trap'); } }),
  };
  for (const [name, value] of Object.entries(unprintable)) {
    // From a tool: an error result the model sees (pi rejects the run: it cannot print it either).
    const boom = { name: 'boom', label: 'b', description: 'b', parameters: { type: 'object' }, execute: async () => { throw value; } };
    const messages = await runAgentLoop([user('go')], { messages: [], tools: [boom] }, baseConfig, () => {}, undefined,
      scripted([A([call('t1', 'boom')], 'toolUse'), A([{ type: 'text', text: 'done' }])]));
    const result = messages.find((m) => m.role === 'toolResult');
    assert.equal(result.isError, true, name);
    assert.deepEqual(result.content, [{ type: 'text', text: '[unprintable value]' }], name);
    // From a hook: the run rejects with the value itself, as in pi.
    const rejected = await runAgentLoop([user('go')], { messages: [] }, { ...baseConfig, convertToLlm: () => { throw value; } }, () => {}, undefined,
      scripted([A([{ type: 'text', text: 'done' }])])).then(() => 'resolved', (e) => ({ e })); // boxed: awaiting a revoked Proxy throws
    assert.equal(rejected.e, value, name);
  }
});
