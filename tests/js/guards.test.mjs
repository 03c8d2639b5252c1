// Every touch of a caller's JS value is guarded (issue 12, defect 5 and "what to build" 2):
// a revoked Proxy, a Proxy whose trap throws or a getter that throws, wherever it is, ends
// the run through the normal path: it rejects where pi rejects, or gives an error result
// where pi gives one. None of these may leave a run pending or throw past its Promise. Each
// case runs next to pi-agent-core 1.6.0 where pi settles, and says so where pi does not.
import { test, after } from 'node:test';
import { createServer } from 'node:http';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { startOpenAIServer, textChunks } from './shared/openai-server.mjs';
import { assistant, scriptedStream } from './shared/scripted-loop.mjs';

const pi = { ...piCore, createAssistantMessageEventStream: piStream };
const A = (content, stopReason = 'stop') => assistant(content, stopReason, 1);
const user = () => ({ role: 'user', content: 'hi', timestamp: 1 });
const config = { model: { id: 'm', api: 'a', provider: 'p' }, convertToLlm: (m) => m };
const call = (id = 'c1', args = {}) => ({ type: 'toolCall', id, name: 't', arguments: args });
const tool = (over = {}) => ({ name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'ran' }], details: {} }), ...over });

/** A stream function answering with `finals` in turn (then "done"). */
const answers = (impl, finals) => scriptedStream(impl, finals, () => A([{ type: 'text', text: 'done' }]));

function revoked(target = {}) {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}
const trapping = (target, trap = 'get') => new Proxy(target, { [trap]() { throw new Error(`${trap} trap`); } });

// Anything thrown past a Promise fails the test that caused it.
const escaped = [];
const onEscape = (error) => escaped.push(error);
process.on('uncaughtException', onEscape);
process.on('unhandledRejection', onEscape);
after(() => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PENDING = 'still pending';
/** How `run()` settled, within a generous bound (a hang shows as PENDING, never a timing). */
async function settle(run) {
  escaped.length = 0;
  let timer;
  const out = await Promise.race([
    (async () => run())().then((value) => ({ value }), (error) => ({ error })),
    new Promise((r) => { timer = setTimeout(r, 5000, PENDING); }),
  ]);
  clearTimeout(timer);
  await sleep(5);
  assert.deepEqual(escaped.map(String), [], 'an error escaped the run');
  assert.notEqual(out, PENDING);
  return out;
}

const messageOf = (e) => (e instanceof Error ? e.message : String(e));

/** Runs `make(impl)` through both; asserts both reject with the same message. */
async function bothReject(make, expected) {
  for (const impl of [pi, ours]) {
    const out = await settle(() => make(impl));
    assert.ok('error' in out, `${impl === pi ? 'pi' : 'ours'} resolved`);
    assert.equal(messageOf(out.error), expected, impl === pi ? 'pi' : 'ours');
  }
}

test('defect 5: a Proxy whose get trap throws, as context.messages, rejects with its error as in pi (it hung)', async () => {
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: trapping([]) }, config, () => {}, undefined, answers(impl, [])), 'get trap');
});

test('defect 5: a Proxy whose get trap throws, returned by transformContext or convertToLlm, rejects as in pi (it hung)', async () => {
  for (const hook of ['transformContext', 'convertToLlm']) {
    await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, { ...config, [hook]: () => trapping([]) }, () => {}, undefined, answers(impl, [])), 'get trap');
  }
});

test('defect 5: a revoked Proxy as context.messages, a tool or the tool list rejects with pi\'s TypeError', async () => {
  // It ran the call as an unknown tool ("Tool t not found") instead.
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [], tools: [revoked()] }, config, () => {}, undefined, answers(impl, [A([call()], 'toolUse')])), "Cannot perform 'get' on a proxy that has been revoked");
  // The arrays: pi's TypeError names the first trap each reaches (pi spreads, we ask IsArray).
  for (const context of [{ messages: revoked([]) }, { messages: [], tools: revoked([]) }]) {
    const out = await settle(() => ours.runAgentLoop([user()], context, config, () => {}, undefined, answers(ours, [])));
    assert.equal(messageOf(out.error), "Cannot perform 'IsArray' on a proxy that has been revoked");
    const theirs = await settle(() => pi.runAgentLoop([user()], context, config, () => {}, undefined, answers(pi, [])));
    assert.match(messageOf(theirs.error), /on a proxy that has been revoked/);
  }
});

test('defect 5: a hook result whose getter throws (finishTurn, prepareNextTurn) rejects with its error as in pi (it was ignored)', async () => {
  const getter = { get action() { throw new Error('action getter'); } };
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, { ...config, finishTurn: () => getter }, () => {}, undefined, answers(impl, [])), 'action getter');
  const next = { get messages() { throw new Error('messages getter'); } };
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [], tools: [tool()] }, { ...config, prepareNextTurn: () => next }, () => {}, undefined, answers(impl, [A([call()], 'toolUse')])), 'messages getter');
});

test('a thenable whose `then` getter throws, returned by a hook or a listener, rejects as `await` does in pi (it was taken as a value)', async () => {
  const thenable = () => ({ get then() { throw new Error('then getter'); } });
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, { ...config, getApiKey: thenable }, () => {}, undefined, answers(impl, [])), 'then getter');
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, config, thenable, undefined, answers(impl, [])), 'then getter');
});

test('a native Promise with its own throwing `then` is awaited as `await` does (it threw past wasm and hung)', async () => {
  const promise = () => Object.assign(Promise.resolve([user()]), { then() { throw new Error('own then'); } });
  for (const impl of [pi, ours]) {
    const out = await settle(() => impl.runAgentLoop([user()], { messages: [] }, { ...config, transformContext: promise }, () => {}, undefined, answers(impl, [])));
    assert.equal(out.value.at(-1).content[0].text, 'done', impl === pi ? 'pi' : 'ours');
  }
});

test('a hook, tool or listener that is a Proxy of a function is called as pi calls it, not looked up through its traps (it failed)', async () => {
  const wrapped = (f) => new Proxy(f, { get() { throw new Error('get trap'); } });
  for (const impl of [pi, ours]) {
    const events = [];
    const t = tool({ execute: wrapped(async () => ({ content: [{ type: 'text', text: 'proxied' }], details: {} })) });
    const out = await settle(() => impl.runAgentLoop([user()], { messages: [], tools: [t] }, { ...config, convertToLlm: wrapped((m) => m) }, wrapped((e) => { events.push(e.type); }), undefined, answers(impl, [A([call()], 'toolUse')])));
    assert.equal(out.value.find((m) => m.role === 'toolResult').content[0].text, 'proxied', impl === pi ? 'pi' : 'ours');
    assert.equal(events.at(-1), 'agent_end');
  }
});

test('a listener that returns null while a JS stream is read is not awaited, as in pi (it threw "reading \'then\'")', async () => {
  const streamFn = (impl) => () => {
    const s = impl.createAssistantMessageEventStream();
    const final = A([{ type: 'text', text: 'hi' }]);
    queueMicrotask(() => {
      s.push({ type: 'start', partial: { ...final, content: [] } });
      s.push({ type: 'text_start', contentIndex: 0, partial: final });
      s.push({ type: 'done', reason: 'stop', message: final });
    });
    return s;
  };
  for (const impl of [pi, ours]) {
    const out = await settle(() => impl.runAgentLoop([user()], { messages: [] }, config, () => null, undefined, streamFn(impl)));
    assert.equal(out.value.at(-1).content[0].text, 'hi', impl === pi ? 'pi' : 'ours');
  }
});

test('tool-call arguments that are not JSON (BigInt, cycle, throwing getter) from a JS stream: an error result for that call, the run goes on (it rejected)', async () => {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const cases = [
    [{ n: 10n }, /Do not know how to serialize a BigInt/],
    [cyclic, /circular structure/],
    [{ get g() { throw new Error('getter boom'); } }, /getter boom/],
  ];
  for (const [args, why] of cases) {
    const message = A([call('bad', args), call('good', { x: 1 })], 'toolUse');
    const events = [];
    const out = await settle(() => ours.runAgentLoop([user()], { messages: [], tools: [tool()] }, config, (e) => { events.push(e); }, undefined, answers(ours, [message])));
    const results = out.value.filter((m) => m.role === 'toolResult');
    assert.deepEqual(results.map((r) => [r.toolCallId, r.isError]), [['bad', true], ['good', false]]);
    assert.match(results[0].content[0].text, /^Invalid arguments for tool "t": the arguments are not JSON \(/);
    assert.match(results[0].content[0].text, why);
    // The transcript holds the caller's blocks, arguments included (on a copy of the message, L-173).
    assert.equal(out.value.find((m) => m.role === 'assistant').content, message.content);
    assert.equal(events.at(-1).type, 'agent_end');
  }
  // pi: the getter's throw is an error result too; BigInt and cycles run the tool on a
  // structured clone (the next request of a real provider then fails to serialise them).
  const piOut = await settle(() => pi.runAgentLoop([user()], { messages: [], tools: [tool()] }, config, () => {}, undefined, answers(pi, [A([call('bad', cases[2][0])], 'toolUse')])));
  assert.equal(piOut.value.find((m) => m.role === 'toolResult').isError, true);
});

test('a hook that is set but no function fails as pi\'s call of it does (it was ignored)', async () => {
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, { ...config, getApiKey: 'key' }, () => {}, undefined, answers(impl, [])), 'config.getApiKey is not a function');
  await bothReject((impl) => impl.runAgentLoop([user()], { messages: [] }, { ...config, finishTurn: 0 }, () => {}, undefined, answers(impl, [])), 'config.finishTurn is not a function');
  // Falsy is absent for the hooks pi tests with `if` (and nullish for those it calls with `?.()`).
  for (const impl of [pi, ours]) {
    const out = await settle(() => impl.runAgentLoop([user()], { messages: [] }, { ...config, transformContext: 0, getSteeringMessages: null }, () => {}, undefined, answers(impl, [])));
    assert.ok('value' in out);
  }
});

test('a tool without parameters, or with a name that is not JSON, rejects as pi does when it declares the tools (it ran)', async () => {
  const noSchema = await settle(() => ours.runAgentLoop([user()], { messages: [], tools: [tool({ parameters: undefined })] }, config, () => {}, undefined, answers(ours, [])));
  assert.equal(messageOf(noSchema.error), 'the parameters of tool t are missing');
  const piNoSchema = await settle(() => pi.runAgentLoop([user()], { messages: [], tools: [tool({ parameters: undefined })] }, config, () => {}, undefined, answers(pi, [])));
  assert.match(messageOf(piNoSchema.error), /is not valid JSON/);
  const bigName = (impl) => impl.runAgentLoop([user()], { messages: [], tools: [tool({ name: 10n })] }, config, () => {}, undefined, answers(impl, []));
  assert.equal(messageOf((await settle(() => bigName(ours))).error), 'a tool name cannot be converted to JSON: Do not know how to serialize a BigInt');
  assert.equal(messageOf((await settle(() => bigName(pi))).error), 'Do not know how to serialize a BigInt');
});

test('a tool that throws a value that cannot be read gets an error result; pi\'s own catch throws on it and the run rejects', async () => {
  const t = tool({ execute: async () => { throw revoked(); } });
  const out = await settle(() => ours.runAgentLoop([user()], { messages: [], tools: [t] }, config, () => {}, undefined, answers(ours, [A([call()], 'toolUse')])));
  const result = out.value.find((m) => m.role === 'toolResult');
  assert.equal(result.isError, true);
  assert.equal(result.content[0].text, '[unprintable value]');
  const piOut = await settle(() => pi.runAgentLoop([user()], { messages: [], tools: [t] }, config, () => {}, undefined, answers(pi, [A([call()], 'toolUse')])));
  assert.match(messageOf(piOut.error), /revoked/);
});

test('an array claiming 2^32 - 1 items is refused at once (it was read item by item, for ever)', async () => {
  const huge = new Proxy([], { get: (t, k) => (k === 'length' ? 2 ** 32 - 1 : tool()) });
  const out = await settle(() => ours.runAgentLoop([user()], { messages: [], tools: huge }, config, () => {}, undefined, answers(ours, [])));
  assert.equal(messageOf(out.error), 'context.tools has more than 16777216 items');
});

test('H2: with an uncaughtException handler installed, an Agent whose hook returns a throwing Proxy ends its run and stays usable (it stayed streaming)', async () => {
  for (const impl of [pi, ours]) {
    let poisoned = true;
    const agent = new impl.Agent({
      initialState: { model: config.model },
      streamFn: answers(impl, []),
      transformContext: (m) => (poisoned ? trapping([]) : m),
    });
    await settle(() => agent.prompt('hi'));
    assert.equal(agent.state.isStreaming, false);
    assert.equal(agent.state.errorMessage, 'get trap');
    poisoned = false;
    await settle(() => agent.prompt('again'));
    assert.equal(agent.state.messages.at(-1).content[0].text, 'done');
  }
});

test('an Agent run that fails with a value that cannot be read, or with a model that cannot be, still ends with its failure message and agent_end (pi\'s prompt rejects on the first)', async () => {
  const model = { id: 'm', provider: 'p', get api() { throw new Error('api getter'); } };
  const cases = [
    [config.model, () => { throw revoked(); }, 'The run failed with a thrown value that cannot be read', 'a'],
    [model, answers(ours, []), 'config.model cannot be converted to JSON: api getter', undefined],
  ];
  for (const [m, streamFn, errorMessage, api] of cases) {
    const seen = [];
    const agent = new ours.Agent({ initialState: { model: m }, streamFn });
    agent.subscribe((e) => { seen.push(e.type); });
    const out = await settle(() => agent.prompt('hi'));
    assert.ok('value' in out);
    assert.deepEqual(seen.slice(-4), ['message_start', 'message_end', 'turn_end', 'agent_end']);
    const failure = agent.state.messages.at(-1);
    assert.equal(failure.errorMessage, errorMessage);
    assert.equal(failure.api, api);
  }
  // pi builds its failure message from the thrown value with `instanceof` and `String()`.
  const piAgent = new pi.Agent({ initialState: { model: config.model }, streamFn: () => { throw revoked(); } });
  assert.match(messageOf((await settle(() => piAgent.prompt('hi'))).error), /revoked/);
});

test('streamProxy whose fetch throws a value that cannot be read ends its stream with an error event (it hung)', async () => {
  const out = await settle(async () => {
    const stream = ours.streamProxy(config.model, { messages: [] }, { proxyUrl: 'http://proxy.invalid', authToken: 't', fetch: () => { throw revoked(); } });
    const types = [];
    for await (const e of stream) types.push(e.type);
    return { types, result: await stream.result() };
  });
  assert.deepEqual(out.value.types, ['error']);
  assert.equal(out.value.result.stopReason, 'error');
  assert.equal(out.value.result.errorMessage, 'Unknown error');
});

test('the built-in stream: hostile headers, config getters, response headers and body chunks end the response or reject as pi (they hung)', async (t) => {
  const server = await startOpenAIServer(() => textChunks('hello'));
  t.after(() => server.close());
  const model = { id: 'local-model', name: 'l', api: 'openai-completions', provider: 'local', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };
  const run = (cfg, fetch) => ours.runAgentLoop([user()], { messages: [] }, { model, apiKey: 'k', convertToLlm: (m) => m, ...(fetch ? { fetch } : {}), ...cfg }, () => {}, undefined, ours.streamSimple);

  // Headers the request cannot read: the response ends as an error naming them.
  const headers = await settle(() => run({ headers: trapping({}) }));
  assert.equal(headers.value.at(-1).stopReason, 'error');
  assert.equal(headers.value.at(-1).errorMessage, 'headers cannot be converted to JSON: get trap');

  // pi spreads the config for the stream function: a getter that throws there rejects.
  const cfg = { get maxTokens() { throw new Error('maxTokens getter'); } };
  assert.equal(messageOf((await settle(() => run(cfg))).error), 'maxTokens getter');

  // A caller's fetch whose chunks and headers misbehave, over the real server's response:
  // `first` comes before the body's own chunks.
  const tampered = ({ first, headers: h }) => async (url, init) => {
    const response = await fetch(url, init);
    const reader = response.body.getReader();
    let sent = first === undefined;
    const read = async () => {
      if (sent) return reader.read();
      sent = true;
      return { done: false, value: first() };
    };
    return { status: response.status, ok: response.ok, headers: h ?? response.headers, body: { getReader: () => ({ read, cancel: () => reader.cancel() }) } };
  };
  // Its own `length` getter is not what is read: the bytes are (spaces before the first line).
  const ownLength = () => Object.defineProperty(new Uint8Array([32, 32, 32]), 'length', { get() { throw new Error('length getter'); } });
  const chunk = await settle(() => run({}, tampered({ first: ownLength })));
  assert.equal(chunk.value.at(-1).content[0].text, 'hello');
  const detached = () => {
    const bytes = new Uint8Array(8);
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] });
    return bytes;
  };
  const gone = await settle(() => run({}, tampered({ first: detached })));
  assert.equal(gone.value.at(-1).stopReason, 'error');
  assert.match(gone.value.at(-1).errorMessage, /^The response body gave a chunk that cannot be read \(/);
  // Response headers whose iteration throws are no headers for onResponse.
  const seen = [];
  const odd = await settle(() => run({ onResponse: (info) => { seen.push(info.headers); } }, tampered({ headers: { get: () => null, [Symbol.iterator]() { throw new Error('iterator'); } } })));
  assert.equal(odd.value.at(-1).content[0].text, 'hello');
  assert.deepEqual(seen, [{}]);
});

test('a retry wait over a signal whose removeEventListener getter throws ends, with nothing thrown from its timer (it hung)', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(500).end('busy');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const controller = new AbortController();
  const signal = new Proxy(controller.signal, {
    get(target, key) {
      if (key === 'removeEventListener') throw new Error('removeEventListener getter');
      const value = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const model = { id: 'm', api: 'openai-completions', provider: 'local', baseUrl: `http://127.0.0.1:${server.address().port}/v1` };
  const out = await settle(() => ours.runAgentLoop([user()], { messages: [] }, { model, apiKey: 'k', maxRetries: 1, maxRetryDelayMs: 10, convertToLlm: (m) => m }, () => {}, signal, ours.streamSimple));
  assert.equal(out.value.at(-1).errorMessage, '500 busy');
});

test('a stream function that gives no event stream: both reject with a TypeError; ours names what it gave (pi: "response is not async iterable")', async () => {
  for (const [given, got] of [[undefined, 'undefined'], [null, 'null'], [5, 'number'], [{}, 'object'], [[], 'an array'], [Promise.resolve('x'), 'string']]) {
    for (const impl of [pi, ours]) {
      const out = await settle(() => impl.runAgentLoop([user()], { messages: [] }, config, () => {}, undefined, () => given));
      assert.ok(out.error instanceof TypeError, `${impl === pi ? 'pi' : 'ours'}: ${out.error}`);
      if (impl === ours) assert.equal(out.error.message, `The stream function's result is not an event stream: got ${got}`);
    }
  }
});
