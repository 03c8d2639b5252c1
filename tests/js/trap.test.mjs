// Trap recovery (issue 12, "What to build" point 4), against a real trap: the test-trap build
// (tests/js/shared/trap-build.mjs) traps on a marker in a streamed delta, in a tool result
// being converted, and in SseDecoder input. The run that hits the trap, and every other run
// in flight on that instance, must end with an error assistant message and `agent_end`;
// Agents stay usable; the next call gets a fresh instance; objects of the dead instance throw
// a clear error; nothing escapes as an uncaught exception.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Miniflare } from 'miniflare';
import { repoRoot } from './helpers.mjs';
import { trapApp } from './shared/trap-build.mjs';
import { startOpenAIServer, textChunks } from './shared/openai-server.mjs';

let pkg;
let server;
/** Uncaught exceptions and unhandled rejections while the tests run: there must be none. */
const escaped = [];
const onUncaught = (error) => escaped.push(error);

/** How a crashed run's error message reads. */
const CRASHED = /^pi-agent-wasm: its WebAssembly engine crashed \((RuntimeError|RangeError): [^)]+\) and was restarted; this run was ended\.$/;

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'local-model' };
/** A streamed text answer whose deltas are exactly `pieces` (a marker must not be split). */
const deltas = (pieces) => [
  { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
  ...pieces.map((content) => ({ ...base, choices: [{ index: 0, delta: { content }, finish_reason: null }] })),
  { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
];

const model = (baseUrl) => ({
  id: 'local', name: 'local', api: 'openai-completions', provider: 'local', baseUrl, reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 100,
});
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** A JS stream function whose responses are `script[i]` (assistant content blocks), one per
 * request; `gate`, when given, is awaited before the first event. */
function scripted(script, gate) {
  let turn = 0;
  return () => {
    const content = script[turn++] ?? [{ type: 'text', text: 'done' }];
    const stream = pkg.createAssistantMessageEventStream();
    const message = {
      role: 'assistant', api: 'test', provider: 'test', model: 'm', usage, content,
      stopReason: content.some((b) => b.type === 'toolCall') ? 'toolUse' : 'stop', timestamp: 1,
    };
    (async () => {
      await gate;
      stream.push({ type: 'start', partial: { ...message, content: [] } });
      stream.push({ type: 'done', reason: message.stopReason, message });
    })();
    return stream;
  };
}

const call = (id, name, args = {}) => ({ type: 'toolCall', id, name, arguments: args });

/** A tool whose `execute` returns `result()` (after `wait`, when given). */
function tool(name, result, wait) {
  return {
    name, label: name, description: name, parameters: { type: 'object' },
    execute: async () => {
      await wait;
      return result();
    },
  };
}

const ok = (text) => ({ content: [{ type: 'text', text }], details: {} });

function gate() {
  let open;
  const promise = new Promise((resolve) => { open = resolve; });
  return { promise, open };
}

/** The event types of a run, and the checks every ended run must pass: one agent_end last,
 * balanced turns and messages, one tool result per started tool call. */
function checkGrammar(events) {
  const types = events.map((e) => e.type);
  assert.equal(types[0], 'agent_start');
  assert.equal(types.at(-1), 'agent_end');
  assert.equal(types.filter((t) => t === 'agent_end').length, 1);
  const count = (t) => types.filter((x) => x === t).length;
  assert.equal(count('turn_start'), count('turn_end'));
  assert.equal(count('message_start'), count('message_end'));
  assert.equal(count('tool_execution_start'), count('tool_execution_end'));
  const started = events.filter((e) => e.type === 'tool_execution_start').map((e) => e.toolCallId);
  const results = events.filter((e) => e.type === 'message_end' && e.message.role === 'toolResult').map((e) => e.message.toolCallId);
  assert.deepEqual(results.slice().sort(), started.slice().sort(), 'one tool result per started call');
  const end = events.at(-1);
  const ended = events.filter((e) => e.type === 'message_end').map((e) => e.message);
  assert.deepEqual(end.messages, ended, 'agent_end carries every message of the run');
  return types;
}

before(async () => {
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  pkg = await import(pathToFileURL(join(trapApp(), 'entry.mjs')).href);
  server = await startOpenAIServer((body) => {
    const last = body.messages.at(-1);
    const text = typeof last.content === 'string' ? last.content : last.content?.map((p) => p.text).join('') ?? '';
    if (text.includes('trap')) return deltas(['Hel', 'lo, ', `PI_TEST_TRAP:${text.includes('stack') ? 'stack' : 'unreachable'}`, 'never']);
    return textChunks(`echo: ${text}`);
  });
});

after(async () => {
  await server?.close();
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

test('a trap in a streamed delta ends the run that hit it and every run in flight; Agents stay usable; the next run works', async () => {
  // Run A: an Agent whose built-in response traps mid-stream.
  const a = new pkg.Agent({ initialState: { model: model(server.baseUrl) }, getApiKey: () => 'k' });
  const aEvents = [];
  a.subscribe((e) => { aEvents.push(e); });

  // Run B, in flight meanwhile: an Agent whose tool call is still executing.
  const slow = gate();
  const b = new pkg.Agent({
    initialState: { model: model(server.baseUrl), tools: [tool('slow', () => ok('late'), slow.promise), tool('quick', () => ok('quick'))] },
    streamFn: scripted([[call('b1', 'quick'), call('b2', 'slow'), call('b3', 'quick')]]),
  });
  const bEvents = [];
  b.subscribe((e) => { bEvents.push(e); });
  const bDone = b.prompt('use the tools');
  while (!bEvents.some((e) => e.type === 'tool_execution_start' && e.toolCallId === 'b2')) await new Promise((r) => setImmediate(r));

  // Run C, in flight meanwhile: runAgentLoop waiting for its stream function's first event;
  // D: agentLoop's event stream, likewise.
  const held = gate();
  const cEvents = [];
  const cDone = pkg.runAgentLoop([{ role: 'user', content: 'c', timestamp: 1 }], { messages: [], tools: [] },
    { model: model(server.baseUrl), convertToLlm: (m) => m }, (e) => { cEvents.push(e); }, undefined, scripted([], held.promise));
  const dStream = pkg.agentLoop([{ role: 'user', content: 'd', timestamp: 1 }], { messages: [], tools: [] },
    { model: model(server.baseUrl), convertToLlm: (m) => m }, undefined, scripted([], held.promise));
  const dEvents = [];
  const dDone = (async () => { for await (const e of dStream) dEvents.push(e); return dStream.result(); })();
  await new Promise((r) => setTimeout(r, 20));

  await a.prompt('please trap');

  // A: the partial response ends as the error message, kept with what it had streamed.
  const aTypes = checkGrammar(aEvents);
  assert.deepEqual(aTypes.filter((t) => t !== 'message_update'),
    ['agent_start', 'turn_start', 'message_start', 'message_end', 'message_start', 'message_end', 'turn_end', 'agent_end']);
  const failure = aEvents.at(-1).messages.at(-1);
  assert.equal(failure.role, 'assistant');
  assert.equal(failure.stopReason, 'error');
  assert.match(failure.errorMessage, CRASHED);
  assert.deepEqual(failure.content, [{ type: 'text', text: 'Hello, ' }]);
  assert.equal(a.state.isStreaming, false);
  assert.equal(a.state.errorMessage, failure.errorMessage);
  assert.deepEqual(a.state.messages.map((m) => m.role), ['user', 'assistant']);

  // B: its finished and running tool calls get results, then the run ends with the error.
  await bDone;
  const bTypes = checkGrammar(bEvents);
  assert.deepEqual(bTypes.slice(-6), ['turn_end', 'turn_start', 'message_start', 'message_end', 'turn_end', 'agent_end']);
  const bResults = bEvents.filter((e) => e.type === 'message_end' && e.message.role === 'toolResult').map((e) => e.message);
  assert.deepEqual(bResults.map((m) => [m.toolCallId, m.isError]), [['b1', false], ['b2', true], ['b3', false]]);
  assert.match(bResults[1].content[0].text, CRASHED);
  assert.match(b.state.messages.at(-1).errorMessage, CRASHED);
  assert.equal(b.state.isStreaming, false);
  assert.equal(b.state.pendingToolCalls.size, 0);

  // C and D: both waiting for their stream when the engine died; both end, and resolve.
  const cMessages = await cDone;
  checkGrammar(cEvents);
  assert.deepEqual(cMessages.map((m) => m.role), ['user', 'assistant']);
  assert.match(cMessages[1].errorMessage, CRASHED);
  const dMessages = await dDone;
  checkGrammar(dEvents);
  assert.match(dMessages.at(-1).errorMessage, CRASHED);

  // What the dead runs still had going finishes into nothing: no event, no error.
  const counts = [aEvents.length, bEvents.length, cEvents.length, dEvents.length];
  slow.open();
  held.open();
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual([aEvents.length, bEvents.length, cEvents.length, dEvents.length], counts);

  // The same Agents run again, on a fresh instance.
  await a.prompt('hello again');
  assert.equal(a.state.messages.at(-1).stopReason, 'stop');
  assert.deepEqual(a.state.messages.at(-1).content, [{ type: 'text', text: 'echo: hello again' }]);
  b.streamFunction = scripted([[call('b4', 'quick')]]);
  await b.prompt('once more');
  assert.deepEqual(b.state.messages.slice(-3).map((m) => m.role), ['assistant', 'toolResult', 'assistant']);
  assert.equal(b.state.messages.at(-2).content[0].text, 'quick');
  assert.deepEqual(escaped, []);
});

test('a stack overflow while a tool result is converted ends the run with one result per tool call; runToolCall resolves with an error', async () => {
  const trapping = tool('trapping', () => ({ content: [{ type: 'text', text: 'x' }], details: { trap: 'PI_TEST_TRAP:stack' } }));
  const events = [];
  const messages = await pkg.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [trapping] },
    { model: model(server.baseUrl), convertToLlm: (m) => m, toolExecution: 'sequential' }, (e) => { events.push(e); }, undefined,
    scripted([[call('t1', 'trapping'), call('t2', 'trapping')]]));
  checkGrammar(events);
  // The system message declares the tools (L-23).
  assert.deepEqual(messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'toolResult', 'assistant']);
  assert.deepEqual(messages.slice(3, 5).map((m) => [m.toolCallId, m.isError]), [['t1', true], ['t2', true]]);
  assert.match(messages.at(-1).errorMessage, CRASHED);
  assert.equal(messages.at(-1).thinkingLevel, 'off');

  const outcome = await pkg.runToolCall(call('t3', 'trapping'), { tools: [trapping], assistantMessage: messages[2], context: { messages: [] } });
  assert.equal(outcome.isError, true);
  assert.match(outcome.result.content[0].text, CRASHED);
  assert.equal(outcome.toolCall.id, 't3');

  // The next call works.
  const fine = await pkg.runToolCall(call('t4', 'fine'), { tools: [tool('fine', () => ok('fine'))], assistantMessage: messages[2], context: { messages: [] } });
  assert.deepEqual([fine.isError, fine.result.content[0].text], [false, 'fine']);
  assert.deepEqual(escaped, []);
});

test('streamSimple: a trap mid-response ends it with an error event that keeps the streamed text', async () => {
  const stream = pkg.streamSimple(model(server.baseUrl), { messages: [{ role: 'user', content: 'trap', timestamp: 1 }] }, { apiKey: 'k' });
  const types = [];
  for await (const e of stream) types.push(e.type);
  const message = await stream.result();
  assert.equal(types.at(-1), 'error');
  assert.equal(message.stopReason, 'error');
  assert.match(message.errorMessage, CRASHED);
  assert.deepEqual(message.content, [{ type: 'text', text: 'Hello, ' }]);
  const again = pkg.streamSimple(model(server.baseUrl), { messages: [{ role: 'user', content: 'hi', timestamp: 1 }] }, { apiKey: 'k' });
  assert.deepEqual((await again.result()).content, [{ type: 'text', text: 'echo: hi' }]);
  assert.deepEqual(escaped, []);
});

test('SseDecoder: a trap inside feed throws a clear error; decoders of the dead instance refuse use; new ones work', () => {
  const idle = new pkg.SseDecoder();
  assert.deepEqual(idle.feed(new TextEncoder().encode('data: a\n\ndata: b')), [{ type: 'message', data: 'a', lastEventId: '' }]);
  const trapping = new pkg.SseDecoder();
  assert.throws(() => trapping.feed(new TextEncoder().encode('data: PI_TEST_TRAP:unreachable\n\n')), (error) => {
    assert.equal(error.code, 'wasm_crashed');
    assert.match(error.message, /engine crashed \(RuntimeError: unreachable\) and was restarted/);
    assert.ok(error.cause instanceof WebAssembly.RuntimeError);
    return true;
  });
  for (const use of [() => idle.feed(new Uint8Array([10])), () => idle.finish(), () => idle.truncated, () => trapping.retry]) {
    assert.throws(use, (error) => error.code === 'wasm_crashed' && /no longer work: make new ones/.test(error.message));
  }
  idle.free();
  trapping.free();
  assert.throws(() => idle.feed(new Uint8Array([10])), /This SseDecoder was freed/);
  const fresh = new pkg.SseDecoder();
  assert.deepEqual(fresh.feed(new TextEncoder().encode('data: c\n\n')), [{ type: 'message', data: 'c', lastEventId: '' }]);
  assert.deepEqual(escaped, []);
});

test('a crash with a run in flight on a tool: the run ends, the late tool result touches nothing, and repeated crashes recover each time', async () => {
  for (let round = 0; round < 5; round++) {
    const slow = gate();
    const events = [];
    const run = pkg.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool('slow', () => ok('late'), slow.promise)] },
      { model: model(server.baseUrl), convertToLlm: (m) => m }, (e) => { events.push(e); }, undefined, scripted([[call(`s${round}`, 'slow')]]));
    while (!events.some((e) => e.type === 'tool_execution_start')) await new Promise((r) => setImmediate(r));
    const decoder = new pkg.SseDecoder();
    assert.throws(() => decoder.feed(new TextEncoder().encode(`PI_TEST_TRAP:${round % 2 ? 'stack' : 'unreachable'}`)), { code: 'wasm_crashed' });
    const messages = await run;
    checkGrammar(events);
    assert.match(messages.at(-1).errorMessage, CRASHED);
    slow.open();
    await new Promise((r) => setTimeout(r, 10));
    // A normal run on the fresh instance, while the dead one's tool finished.
    const next = await pkg.runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [] },
      { model: model(server.baseUrl), convertToLlm: (m) => m, apiKey: 'k' }, () => {});
    assert.deepEqual(next.at(-1).content, [{ type: 'text', text: 'echo: hi' }], next.at(-1).errorMessage);
  }
  assert.deepEqual(escaped, []);
});

test('a crashed instance lets go of its memory, even while objects of it are still held', async () => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    return process.memoryUsage().rss;
  };
  const held = [];
  const rss = [];
  for (let round = 0; round < 3; round++) {
    // 128 MB copied into wasm memory, then the trap: each dead instance held about 128 MB.
    const decoder = new pkg.SseDecoder();
    held.push(decoder);
    const input = new Uint8Array(128 * 1024 * 1024).fill(97);
    input.set(new TextEncoder().encode('PI_TEST_TRAP:unreachable'), input.length - 32);
    assert.throws(() => decoder.feed(input), { code: 'wasm_crashed' });
    rss.push(await settle());
  }
  const grown = rss[2] - rss[0];
  console.log(`rss after each crash: ${rss.map((b) => `${(b / 1e6).toFixed(0)} MB`).join(', ')}`);
  assert.ok(grown < 96 * 1024 * 1024, `two more crashed instances kept ${(grown / 1e6).toFixed(0)} MB`);
  assert.deepEqual(new pkg.SseDecoder().feed(new TextEncoder().encode('data: x\n\n')), [{ type: 'message', data: 'x', lastEventId: '' }]);
  assert.deepEqual(escaped, []);
});

// In workerd, as a Worker bundled by wrangler (the "workerd" entry, the .wasm a compiled
// module): a trap in a tool result with another run in flight, a trapping SseDecoder, then
// normal runs, all inside one request.
const WORKER = `import * as pkg from 'pi-agent-wasm';
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'test', provider: 'test' };
function respond(content, gate) {
  const stream = pkg.createAssistantMessageEventStream();
  const message = { role: 'assistant', api: 'test', provider: 'test', model: 'm', usage, content, stopReason: content.some((b) => b.type === 'toolCall') ? 'toolUse' : 'stop', timestamp: 1 };
  (async () => {
    await gate;
    stream.push({ type: 'start', partial: { ...message, content: [] } });
    stream.push({ type: 'done', reason: message.stopReason, message });
  })();
  return stream;
}
const run = (content, tools, gate) => {
  let turn = 0;
  return pkg.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, { model, convertToLlm: (m) => m }, () => {}, undefined,
    () => respond(turn++ === 0 ? content : [{ type: 'text', text: 'done' }], gate));
};
const tool = (name, details) => ({ name, label: name, description: name, parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: name }], details }) });
const roles = (messages) => messages.map((m) => m.role + (m.isError ? '!' : '') + (m.errorMessage ? ':' + m.errorMessage : ''));
export default {
  async fetch() {
    let open;
    const gate = new Promise((resolve) => { open = resolve; });
    const waiting = run([{ type: 'text', text: 'hi' }], [], gate);
    const trapped = await run([{ type: 'toolCall', id: 't1', name: 'trap', arguments: {} }], [tool('trap', { trap: 'PI_TEST_TRAP:unreachable' })]);
    const other = await waiting;
    open();
    const old = new pkg.SseDecoder();
    let decoder;
    try { new pkg.SseDecoder().feed(new TextEncoder().encode('PI_TEST_TRAP:stack')); } catch (e) { decoder = e.code; }
    let stale;
    try { old.feed(new Uint8Array([10])); } catch (e) { stale = e.code; }
    const after = await run([{ type: 'toolCall', id: 't2', name: 'fine', arguments: {} }], [tool('fine', {})]);
    const fresh = new pkg.SseDecoder().feed(new TextEncoder().encode('data: ok\\n\\n'));
    return Response.json({ trapped: roles(trapped), other: roles(other), decoder, stale, after: roles(after), fresh });
  },
};
`;

test('workerd: a trap in a tool result ends that run and the one in flight, SseDecoders of the dead instance refuse use, and the Worker goes on', async () => {
  const app = trapApp();
  writeFileSync(join(app, 'worker.mjs'), WORKER);
  writeFileSync(join(app, 'wrangler.toml'), 'name = "pi-agent-wasm-trap"\nmain = "worker.mjs"\ncompatibility_date = "2026-04-26"\n');
  execFileSync(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', 'dist'], {
    cwd: app,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  const mf = new Miniflare({
    scriptPath: join(app, 'dist/worker.js'),
    modules: true,
    modulesRoot: join(app, 'dist'),
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2026-04-26',
  });
  try {
    const out = await (await mf.dispatchFetch('http://localhost/')).json();
    const crashed = (roles) => roles.at(-1).replace(/^assistant:(.*)$/, (_, m) => (CRASHED.test(m) ? 'assistant:crashed' : m));
    assert.deepEqual(out.trapped.slice(0, -1), ['system', 'user', 'assistant', 'toolResult!']);
    assert.equal(crashed(out.trapped), 'assistant:crashed', out.trapped.at(-1));
    assert.deepEqual(out.other.slice(0, -1), ['user']);
    assert.equal(crashed(out.other), 'assistant:crashed', out.other.at(-1));
    assert.equal(out.decoder, 'wasm_crashed');
    assert.equal(out.stale, 'wasm_crashed');
    assert.deepEqual(out.after, ['system', 'user', 'assistant', 'toolResult', 'assistant']);
    assert.deepEqual(out.fresh, [{ type: 'message', data: 'ok', lastEventId: '' }]);
  } finally {
    await mf.dispose();
  }
});
