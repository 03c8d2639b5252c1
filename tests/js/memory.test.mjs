// Runs must not leak: soak and load through the package (issue 12, "What to build" 8), with
// tools, the built-in stream over local HTTP and JS stream functions. Linear memory never
// shrinks, so after warm-up the wasm Memory must stay flat; the JS heap is measured after
// full garbage collections. What is asserted is how much the second half adds over the
// first, never a time. (A tool's onUpdate callback handed to JS once kept each run's whole
// identity table alive, about 380 KB per run of the JS-stream shape below.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Agent, runAgentLoop, createAssistantMessageEventStream, ready } from 'pi-agent-wasm';
// The package's own loader (the module 'pi-agent-wasm' resolves to): the live instance's size.
import { memorySize } from '../../pkg/wasm.js';
import { textChunks, toolCallChunks } from './shared/openai-server.mjs';
import { CALC, scenarioAnswer } from './shared/agent-scenario.mjs';

v8.setFlagsFromString('--expose-gc');
const gc = globalThis.gc ?? vm.runInNewContext('gc');

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const KB = 1024;
const MB = 1024 * 1024;

/** A JS stream function's response: on the first turn text and four parallel tool calls,
 * then a text answer. Events arrive after a tick, as from a real stream. */
function response(turn, run) {
  const s = createAssistantMessageEventStream();
  const calls = turn === 0 ? [0, 1, 2, 3].map((i) => ({ type: 'toolCall', id: `t${run}-${i}`, name: 'work', arguments: { i } })) : [];
  const message = {
    role: 'assistant', api: 'test', provider: 'test', model: 'm', usage,
    content: [{ type: 'text', text: 'x'.repeat(2000) }, ...calls], stopReason: calls.length ? 'toolUse' : 'stop', timestamp: 1,
  };
  setImmediate(() => {
    s.push({ type: 'start', partial: { ...message, content: [] } });
    s.push({ type: 'text_start', contentIndex: 0, partial: { ...message, content: [{ type: 'text', text: '' }] } });
    s.push({ type: 'text_delta', contentIndex: 0, delta: 'x', partial: { ...message, content: [{ type: 'text', text: 'x' }] } });
    s.push({ type: 'done', reason: message.stopReason, message });
  });
  return s;
}

/** Reports progress through onUpdate, then returns 1 KB. */
const work = {
  name: 'work', label: 'work', description: 'reports progress', parameters: { type: 'object' },
  execute: async (_id, _args, _signal, onUpdate) => {
    onUpdate({ content: [{ type: 'text', text: 'half' }], details: {} });
    return { content: [{ type: 'text', text: 'y'.repeat(1000) }], details: {} };
  },
};

/** Checks one run's events: it ended, and every started tool call got exactly one result. */
function checkRun(events, messages) {
  assert.equal(events.at(-1).type, 'agent_end');
  const started = events.filter((e) => e.type === 'tool_execution_start').map((e) => e.toolCallId).sort();
  const ended = events.filter((e) => e.type === 'tool_execution_end').map((e) => e.toolCallId).sort();
  const results = messages.filter((m) => m.role === 'toolResult').map((m) => m.toolCallId).sort();
  assert.deepEqual(ended, started);
  assert.deepEqual(results, started);
  assert.equal(messages.at(-1).stopReason, 'stop', messages.at(-1).errorMessage);
}

/** One run through a JS stream function: two turns, four parallel tools. */
async function jsRun(run) {
  let turn = 0;
  const events = [];
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [work] },
    { model: { id: 'm', api: 'test', provider: 'test' }, convertToLlm: (m) => m }, (e) => { events.push(e); }, undefined,
    () => response(turn++, run));
  checkRun(events, messages);
  assert.equal(messages.filter((m) => m.role === 'toolResult').length, 4);
}

let server;
let model;

before(async () => {
  // The tool scenario of agent-scenario.mjs (a tool call, then an answer quoting its result),
  // each answer in one write, and nothing recorded: the heap measured is the package's.
  server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const chunks = scenarioAnswer(JSON.parse(raw), { textChunks, toolCallChunks });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  model = {
    id: 'local', api: 'openai-completions', provider: 'local', baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 100,
  };
  await ready();
});

after(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

/** wasm Memory and JS heap (after full collections), in bytes. */
async function measure() {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { wasm: memorySize(), heap: process.memoryUsage().heapUsed };
}

const show = (m) => `wasm ${(m.wasm / MB).toFixed(2)} MB, heap ${(m.heap / MB).toFixed(2)} MB`;

test('soak: 10,000 sequential tool-using runs (JS streams, and an Agent over HTTP) leave wasm memory and the JS heap flat', async () => {
  const agent = new Agent({ initialState: { model, tools: [CALC] }, getApiKey: () => 'k' });
  const agentEvents = [];
  agent.subscribe((e) => { agentEvents.push(e); });
  /** Run `i`: every 20th through the Agent and the built-in stream, the rest through JS streams. */
  const one = async (i) => {
    if (i % 20 !== 0) return jsRun(i);
    agentEvents.length = 0;
    await agent.prompt('what is 17*23?');
    checkRun(agentEvents, agent.state.messages);
    assert.equal(agent.state.messages.at(-1).content[0].text, 'The answer is 391 — fertig ✓');
    agent.reset();
    assert.deepEqual(agent.state.messages.map((m) => m.role), ['system'], 'reset keeps the replayed system message');
  };
  const start = await measure();
  let i = 0;
  for (; i < 1000; i++) await one(i);
  const warm = await measure();
  for (; i < 5500; i++) await one(i);
  const half = await measure();
  for (; i < 10_000; i++) await one(i);
  const end = await measure();
  console.log(`soak, 10,000 runs: before ${show(start)}; after 1,000 ${show(warm)}; after 5,500 ${show(half)}; after 10,000 ${show(end)}`);
  const grown = { wasm: end.wasm - half.wasm, heap: end.heap - half.heap };
  assert.ok(grown.wasm <= 256 * KB, `wasm memory grew by ${grown.wasm} bytes over the last 4,500 runs`);
  assert.ok(grown.heap <= 2 * MB, `the JS heap grew by ${grown.heap} bytes over the last 4,500 runs`);
});

test('load: 1,000 concurrent tool-using runs in one process, four times over, leave wasm memory and the JS heap flat', async () => {
  const rounds = [];
  for (let round = 0; round < 4; round++) {
    // One in five over HTTP with the built-in stream, the rest through JS streams; all at once.
    await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        if (i % 5 !== 0) return jsRun(`${round}-${i}`);
        const events = [];
        const messages = await runAgentLoop([{ role: 'user', content: 'what is 17*23?', timestamp: 1 }], { messages: [], tools: [CALC] },
          { model, convertToLlm: (m) => m, apiKey: 'k' }, (e) => { events.push(e); });
        checkRun(events, messages);
        assert.equal(messages.at(-1).content[0].text, 'The answer is 391 — fertig ✓');
      }),
    );
    rounds.push(await measure());
  }
  console.log(`load, 4 x 1,000 concurrent runs: after each round ${rounds.map(show).join('; ')}`);
  const grown = { wasm: rounds[3].wasm - rounds[1].wasm, heap: rounds[3].heap - rounds[1].heap };
  assert.ok(grown.wasm <= 2 * MB, `wasm memory grew by ${grown.wasm} bytes over the last 2,000 concurrent runs`);
  assert.ok(grown.heap <= 2 * MB, `the JS heap grew by ${grown.heap} bytes over the last 2,000 concurrent runs`);
});

test('a finished run leaves nothing of its own reachable from the engine: its prompt is collected', async () => {
  // The engine keeps the glue its awaits go through between runs: the shared one, never a
  // run's own (which holds the run's transcript for checkpoints and approvals).
  let ref;
  await (async () => {
    const prompt = { role: 'user', content: 'go', timestamp: 1, padding: 'x'.repeat(1_000_000) };
    ref = new WeakRef(prompt);
    const streamFn = () => {
      const s = createAssistantMessageEventStream();
      const m = { role: 'assistant', content: [{ type: 'text', text: 'hi' }], api: 'b', provider: 'b', model: 'm', usage, stopReason: 'stop', timestamp: 1 };
      queueMicrotask(() => {
        s.push({ type: 'start', partial: m });
        s.push({ type: 'done', reason: 'stop', message: m });
      });
      return s;
    };
    await runAgentLoop([prompt], { messages: [] }, { model: { id: 'm', api: 'b', provider: 'b' }, convertToLlm: (m) => m, onCheckpoint: () => {} }, () => {}, undefined, streamFn);
  })();
  for (let i = 0; i < 5 && ref.deref() !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  assert.equal(ref.deref(), undefined);
});
