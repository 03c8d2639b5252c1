// One owner per value (issue 32): a tool result's `content` and `details` stay the tool's own
// objects. The loop reads neither, so the tool-result message carries the very objects the
// tool returned, and fields JSON cannot hold (a BigInt, a cycle, a class instance) pass
// through untouched, as in pi 1.6.0 (L-120).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { answer, usage } from './shared/scripted-loop.mjs';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { startOpenAIServer, textChunks, toolCallChunks } from './shared/openai-server.mjs';

const IMPLS = {
  ours: { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream },
  pi: { run: pi.runAgentLoop, stream: piStream },
};
const model = { id: 'm', api: 'a', provider: 'p' };

class Stat {
  constructor(size) { this.size = size; }
}

async function run(impl) {
  const cycle = { name: 'cycle' };
  cycle.self = cycle;
  const returned = {
    content: [{ type: 'text', text: 'file body' }],
    details: { size: 10n, cycle, stat: new Stat(3) },
  };
  let calls = 0;
  const streamFn = () => (calls++ === 0
    ? answer(impl.stream, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' } }], 'toolUse')
    : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
  const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => returned };
  const ends = [];
  const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
    { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'tool_execution_end' || e.type === 'message_end') ends.push(e); }, undefined, streamFn);
  return { returned, messages, ends };
}

test('a tool result\'s content and details are the tool\'s own objects in the message and the events, as pi', async () => {
  for (const name of ['pi', 'ours']) {
    const { returned, messages, ends } = await run(IMPLS[name]);
    const message = messages.find((m) => m.role === 'toolResult');
    assert.equal(message.isError, false, name);
    assert.equal(message.content, returned.content, `${name}: content is the tool's array`);
    assert.equal(message.details, returned.details, `${name}: details is the tool's object`);
    assert.equal(message.details.size, 10n);
    assert.ok(message.details.stat instanceof Stat);
    const end = ends.find((e) => e.type === 'tool_execution_end');
    assert.equal(end.result, returned, `${name}: tool_execution_end carries the result object`);
    const messageEnd = ends.find((e) => e.type === 'message_end' && e.message.role === 'toolResult');
    assert.equal(messageEnd.message, message, `${name}: message_end and agent_end share the message`);
  }
});

test('a checkpointed run keeps every checkpoint JSON: a tool result JSON cannot hold is the call\'s error result, naming why', async () => {
  const impl = IMPLS.ours;
  for (const details of [{ size: 10n }, (() => { const c = {}; c.self = c; return { c }; })()]) {
    let calls = 0;
    const streamFn = () => (calls++ === 0
      ? answer(impl.stream, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: {} }], 'toolUse')
      : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
    const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'x' }], details }) };
    const saved = [];
    const onCheckpoint = (checkpoint) => { saved.push(JSON.stringify(checkpoint)); };
    const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
      { model, convertToLlm: (m) => m, onCheckpoint }, () => {}, undefined, streamFn);
    const result = messages.find((m) => m.role === 'toolResult');
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^a tool result cannot be converted to JSON: /);
    assert.ok(saved.length > 4, `${saved.length} checkpoints, each JSON`);
    assert.equal(messages.at(-1).content[0].text, 'done');
  }
  // The same tool in a run without checkpoints: the result passes through, as in pi.
  const { messages } = await run(impl);
  assert.equal(messages.find((m) => m.role === 'toolResult').isError, false);
});

test('an Agent whose tool returned a value JSON cannot hold goes on: the next prompt, and a built-in provider, never read `details` (outside tester, finding 1 and 2)', async () => {
  const { startOpenAIServer } = await import('./shared/openai-server.mjs');
  const { getModel } = await import('@earendil-works/pi-ai/compat');
  const cycle = {};
  cycle.self = cycle;
  for (const details of [{ size: 1n }, { cycle }]) {
    const execute = async () => ({ content: [{ type: 'text', text: 'ok' }], details });
    // A JS stream function, both implementations.
    const seen = {};
    for (const name of ['pi', 'ours']) {
      const impl = IMPLS[name];
      let calls = 0;
      const streamFn = () => (calls++ % 2 === 0
        ? answer(impl.stream, [{ type: 'toolCall', id: `c${calls}`, name: 'read', arguments: {} }], 'toolUse')
        : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
      const agent = new (name === 'pi' ? pi : ours).Agent({ initialState: { model, tools: [{ name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute }] }, streamFn });
      await agent.prompt('first');
      await agent.prompt('second');
      seen[name] = agent.state.messages.map((m) => m.stopReason ?? m.role);
      assert.equal(agent.state.messages.find((m) => m.role === 'toolResult').details, details, `${name}: the tool's own details`);
    }
    assert.deepEqual(seen.ours, seen.pi);
    assert.deepEqual(seen.ours.filter((r) => r !== 'system'), ['user', 'toolUse', 'toolResult', 'stop', 'user', 'toolUse', 'toolResult', 'stop']);
    // Ours over a local Chat Completions server: `details` is not sent, so nothing fails.
    const server = await startOpenAIServer((_body, n) => (n % 2 === 0
      ? [{ choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: `c${n}`, type: 'function', function: { name: 'read', arguments: '{}' } }] }, finish_reason: null }] },
        { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }]
      : [{ choices: [{ index: 0, delta: { role: 'assistant', content: 'done' }, finish_reason: null }] }, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }]));
    try {
      const builtin = { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
      const agent = new ours.Agent({ initialState: { model: builtin, tools: [{ name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute }] }, getApiKey: () => 'sk-local' });
      await agent.prompt('first');
      await agent.prompt('second');
      assert.deepEqual(agent.state.messages.map((m) => m.stopReason ?? m.role).filter((r) => r !== 'system'), ['user', 'toolUse', 'toolResult', 'stop', 'user', 'toolUse', 'toolResult', 'stop']);
      assert.equal(server.requests.length, 4);
    } finally {
      await server.close();
    }
  }
});

test('L-75/L-79: the list convertToLlm returns is the stream function\'s `context.messages` itself, unread, as pi (a message whose `role` getter throws included); a built-in provider reads it to build its request and rejects with invalid_input naming it, the thrown error as its cause (outside tester, finding 9; issue 32)', async () => {
  const message = { content: 'x', timestamp: 1 };
  Object.defineProperty(message, 'role', { enumerable: true, get() { throw new Error('getter failed'); } });
  const seen = {};
  for (const [name, impl] of Object.entries(IMPLS)) {
    let returned;
    const convertToLlm = (m) => (returned = [...m, message, 5]);
    const streamFn = (_model, context) => {
      seen[name] = context.messages === returned;
      return answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop');
    };
    const out = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm }, () => {}, undefined, streamFn);
    assert.deepEqual(out.map((m) => m.role), ['user', 'assistant'], name);
  }
  assert.deepEqual(seen, { ours: true, pi: true });
  // The built-in provider reads each message when it builds the request: nothing is sent.
  const server = await startOpenAIServer(() => textChunks('done'));
  try {
    const llm = { id: 'm', name: 'm', api: 'openai-completions', provider: 'p', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 1e4 };
    await assert.rejects(
      ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model: llm, apiKey: 'k', convertToLlm: (m) => [...m, message] }, () => {}),
      (e) => e.code === 'invalid_input' && /^convertToLlm: message 1 cannot be converted to JSON: getter failed/.test(e.message) && e.cause?.message === 'getter failed',
    );
    await assert.rejects(
      ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model: llm, apiKey: 'k', convertToLlm: (m) => [...m, 5] }, () => {}),
      (e) => e.code === 'invalid_input' && e.message === 'convertToLlm: item 1 is not a message (it has no string role)',
    );
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test('a transcript message whose `role` getter throws rejects with what it threw, as pi (one rule: a read pi makes too)', async () => {
  for (const [name, impl] of Object.entries(IMPLS)) {
    const thrown = new RangeError('role getter failed');
    const message = { content: 'x', timestamp: 1 };
    Object.defineProperty(message, 'role', { enumerable: true, get() { throw thrown; } });
    const streamFn = () => answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop');
    for (const [where, prompts, history] of [['history', [{ role: 'user', content: 'go', timestamp: 1 }], [message]], ['prompt', [message], []]]) {
      await assert.rejects(impl.run(prompts, { messages: history, tools: [] }, { model, convertToLlm: (m) => m }, () => {}, undefined, streamFn),
        (e) => e === thrown, `${name}: ${where}`);
    }
  }
});

test('a JS stream\'s final message passes a value JSON cannot hold through, as pi; a checkpointed run rejects with invalid_input, the reading\'s error as its cause (outside tester, finding 6; issue 32)', async () => {
  const usage5n = { ...usage, input: 5n };
  const streamFn = (impl) => () => {
    const s = IMPLS[impl].stream();
    const message = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage: usage5n, content: [{ type: 'text', text: 'done' }], stopReason: 'stop', timestamp: 1 };
    s.push({ type: 'start', partial: message });
    s.push({ type: 'done', reason: 'stop', message });
    return s;
  };
  for (const impl of ['ours', 'pi']) {
    const core = impl === 'ours' ? ours : pi;
    const ends = [];
    const messages = await core.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'message_end') ends.push(e.message); }, undefined, streamFn(impl));
    assert.equal(messages.at(-1).usage, usage5n, `${impl}: the stream's own usage object`);
    assert.equal(ends.at(-1), messages.at(-1), `${impl}: message_end carries the transcript's object`);
  }
  await assert.rejects(
    ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m, onCheckpoint: () => {} }, () => {}, undefined, streamFn('ours')),
    (e) => e.code === 'invalid_input' && /^the stream's result cannot be converted to JSON: /.test(e.message) && e.cause instanceof TypeError,
  );
});

test('what afterToolCall returns stays the hook\'s own objects: its content and details, a Map, a BigInt, or the result it got, as pi (L-108, issue 32)', async () => {
  const cases = {
    'new objects': ({ result }) => ({ content: [{ type: 'text', text: 'changed' }], details: { when: new Map([['a', 1]]), n: 5n } }),
    'the result it got': ({ result }) => ({ content: result.content, details: result.details }),
    'details alone': () => ({ details: new Date(0) }),
  };
  for (const [label, hook] of Object.entries(cases)) {
    const seen = {};
    for (const name of ['pi', 'ours']) {
      const impl = IMPLS[name];
      const toolReturned = { content: [{ type: 'text', text: 'file body' }], details: { size: 1 } };
      let hookReturned;
      let calls = 0;
      const streamFn = () => (calls++ === 0
        ? answer(impl.stream, [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' } }], 'toolUse')
        : answer(impl.stream, [{ type: 'text', text: 'done' }], 'stop'));
      const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => toolReturned };
      const afterToolCall = async (ctx) => (hookReturned = hook(ctx));
      const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
        { model, convertToLlm: (m) => m, afterToolCall }, () => {}, undefined, streamFn);
      const message = messages.find((m) => m.role === 'toolResult');
      const content = hookReturned.content ?? toolReturned.content;
      const details = 'details' in hookReturned ? hookReturned.details : toolReturned.details;
      seen[name] = [message.content === content, message.details === details, message.content === toolReturned.content];
      assert.equal(message.content, content, `${label}, ${name}: the content object`);
      assert.equal(message.details, details, `${label}, ${name}: the details object`);
    }
    assert.deepEqual(seen.ours, seen.pi, label);
  }
});

test('a JS stream\'s final content blocks JSON cannot hold pass through, as pi: the run ends normally and a tool call among them alone gets an error result (outside tester, round 3)', async () => {
  const cycle = {};
  cycle.self = cycle;
  const blocks = {
    'a BigInt in a text block': [{ type: 'text', text: 'yo', meta: 1n }],
    'a cycle in a thinking block': [{ type: 'thinking', thinking: 'hm', cycle }, { type: 'text', text: 'yo' }],
    'a getter that throws in a text block': [{ type: 'text', get text() { throw new Error('no'); } }],
    'an extra BigInt on a tool call': [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a' }, meta: 2n }],
    'a BigInt in a tool call\'s arguments': [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { n: 3n } }],
  };
  for (const [label, content] of Object.entries(blocks)) {
    const seen = {};
    for (const name of ['pi', 'ours']) {
      const impl = IMPLS[name];
      let calls = 0;
      const streamFn = () => {
        const s = impl.stream();
        const last = calls++ > 0;
        const message = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content: last ? [{ type: 'text', text: 'done' }] : content, stopReason: last || !content.some((b) => b.type === 'toolCall') ? 'stop' : 'toolUse', timestamp: 1 };
        queueMicrotask(() => { s.push({ type: 'start', partial: { ...message, content: [] } }); s.push({ type: 'done', reason: message.stopReason, message }); });
        return s;
      };
      const tool = { name: 'read', label: 'read', description: 'read', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'body' }], details: {} }) };
      const ends = [];
      const messages = await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
        { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'message_end') ends.push(e.message); }, undefined, streamFn);
      const first = messages.find((m) => m.role === 'assistant');
      assert.equal(first.content, content, `${label}, ${name}: the stream's own content array`);
      assert.ok(ends.includes(first), `${label}, ${name}: message_end carries it`);
      const results = messages.filter((m) => m.role === 'toolResult');
      seen[name] = { roles: messages.map((m) => m.role), results: results.length };
    }
    assert.deepEqual(seen.ours, seen.pi, label);
  }
});

test('a stream result that is no message object ends the run with an error message, never a message without a role (outside tester, round 3)', async () => {
  for (const result of [null, 0, 'str']) {
    const streamFn = () => ({
      async* [Symbol.asyncIterator]() { yield { type: 'done', reason: 'stop', message: result }; },
      result: async () => result,
    });
    const ends = [];
    const messages = await ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] },
      { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'message_end') ends.push(e.message); }, undefined, streamFn);
    const last = messages.at(-1);
    assert.equal(last.role, 'assistant', String(result));
    assert.equal(last.stopReason, 'error');
    assert.match(last.errorMessage, /not a message object/);
    assert.equal(ends.at(-1), last);
  }
});

/** A stream function of `stream`'s kind: `first` (content blocks) as the first answer, with
 * `toolUse`, then a text answer; `onFirst` gets the first content array. */
function twoAnswers(stream, first, onFirst = () => {}) {
  let n = 0;
  return () => {
    const s = stream();
    const isFirst = n++ === 0;
    const content = isFirst ? first : [{ type: 'text', text: 'ok' }];
    if (isFirst) onFirst(content);
    const m = { role: 'assistant', api: 'a', provider: 'p', model: 'm', usage, content, stopReason: isFirst ? 'toolUse' : 'stop', timestamp: 1 };
    queueMicrotask(() => {
      s.push({ type: 'start', partial: m });
      s.push({ type: 'done', reason: m.stopReason, message: m });
    });
    return s;
  };
}

test('a tool call\'s own objects, as pi: tool_execution_start and _update carry its block\'s `arguments`, and beforeToolCall, afterToolCall get the block itself as `toolCall` (parallel and sequential, ids used twice)', async () => {
  const seen = async (name, mode, ids) => {
    const { run: runLoop, stream } = IMPLS[name];
    let blocks;
    const streamFn = twoAnswers(stream, ids.map((id, i) => ({ type: 'toolCall', id, name: 't', arguments: { i } })), (c) => { blocks = c; });
    const out = [];
    const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, executionMode: mode,
      execute: async (_id, _args, _signal, onUpdate) => { onUpdate({ content: [], details: {} }); return { content: [{ type: 'text', text: 'r' }], details: {} }; } };
    const index = (v) => blocks.findIndex((b) => b === v || b.arguments === v);
    await runLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, {
      model, convertToLlm: (m) => m,
      beforeToolCall: (ctx) => { out.push(['before', ctx.toolCall.id, index(ctx.toolCall), ctx.args === ctx.toolCall.arguments]); },
      afterToolCall: (ctx) => { out.push(['after', ctx.toolCall.id, index(ctx.toolCall)]); },
    }, (e) => {
      if (e.type === 'tool_execution_start' || e.type === 'tool_execution_update') out.push([e.type, e.toolCallId, index(e.args)]);
    }, undefined, streamFn);
    return out;
  };
  for (const mode of ['parallel', 'sequential']) {
    for (const ids of [['c1', 'c2'], ['c1', 'c1']]) {
      const [o, p] = [await seen('ours', mode, ids), await seen('pi', mode, ids)];
      if (ids[0] !== ids[1]) {
        assert.deepEqual(o, p, `${mode} ${ids}`);
        assert.ok(p.some(([kind, , at]) => kind === 'tool_execution_start' && at >= 0), 'pi gives the block\'s own arguments');
      } else {
        // Two calls with one id: pi gives each its own block; ours cannot tell them apart by
        // id and gives copies (index -1) rather than the wrong one.
        assert.ok(o.every(([, , at]) => at === -1 || at === undefined), `${mode} ${JSON.stringify(o)}`);
      }
    }
  }
});

test('L-97: prepareArguments gets the call\'s own arguments object, and a change it makes in place counts, as pi (in a run, and in runToolCall)', async () => {
  for (const name of ['ours', 'pi']) {
    const core = name === 'ours' ? ours : pi;
    const { run: runLoop, stream } = IMPLS[name];
    let block;
    const streamFn = twoAnswers(stream, [{ type: 'toolCall', id: 'c1', name: 't', arguments: { x: '1' } }], (c) => { block = c[0]; });
    const got = [];
    const tool = {
      name: 't', label: 't', description: 't',
      parameters: { type: 'object', properties: { x: { type: 'string' }, y: { type: 'number' } }, required: ['y'] },
      prepareArguments(a) { got.push(a === (block ?? call).arguments); a.y = 5; return a; },
      execute: async (_id, args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }], details: {} }),
    };
    const messages = await runLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, { model, convertToLlm: (m) => m }, () => {}, undefined, streamFn);
    assert.equal(messages.find((m) => m.role === 'toolResult').content[0].text, '{"x":"1","y":5}', name);
    // runToolCall: the toolCall object the caller gave.
    block = undefined;
    const call = { type: 'toolCall', id: 'c2', name: 't', arguments: { x: '2' } };
    const out = await core.runToolCall(call, { assistantMessage: { role: 'assistant', content: [call] }, context: { messages: [], tools: [tool] }, tools: [tool] });
    assert.equal(out.result.content[0].text, '{"x":"2","y":5}', name);
    assert.deepEqual(got, [true, true], name);
  }
});

test('with a built-in provider too, tool_execution_start carries the block\'s own `arguments` of the message listeners got, and beforeToolCall the block, as pi with pi-ai', async () => {
  const server = await startOpenAIServer((body) => (body.messages.some((m) => m.role === 'tool') ? textChunks('done') : toolCallChunks('call_1', 't', { x: 1 })));
  try {
    const llm = { id: 'm', name: 'm', api: 'openai-completions', provider: 'p', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 1e4, compat: { supportsStore: false } };
    for (const [name, core, streamFn] of [['ours', ours, undefined], ['pi', pi, piStreamSimple]]) {
      const seen = {};
      const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'r' }], details: {} }) };
      await core.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, {
        model: llm, apiKey: 'k', convertToLlm: (m) => m, beforeToolCall: (ctx) => { seen.before = ctx.toolCall; },
      }, (e) => {
        if (e.type === 'tool_execution_start') seen.start = e.args;
        if (e.type === 'message_end' && e.message.role === 'assistant') seen.end ??= e.message;
      }, undefined, streamFn);
      const block = seen.end.content.find((b) => b.type === 'toolCall');
      assert.equal(seen.start, block.arguments, name);
      assert.equal(seen.before, block, name);
    }
  } finally {
    await server.close();
  }
});

test('the objects the loop makes have pi\'s own keys in pi\'s order: a toolResult message (details and usage even when undefined), the tool hooks\' contexts; a prepareArguments that returns a Promise fails the call, as pi', async () => {
  const record = async (name) => {
    const { run: runLoop, stream } = IMPLS[name];
    const streamFn = twoAnswers(stream, [{ type: 'toolCall', id: 'c1', name: 't', arguments: {} }, { type: 'toolCall', id: 'c2', name: 'nope', arguments: {} }, { type: 'toolCall', id: 'c3', name: 'a', arguments: {} }]);
    const tools = [
      { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'r' }], details: {} }) },
      { name: 'a', label: 'a', description: 'a', parameters: { type: 'object' }, prepareArguments: async (x) => x, execute: async () => ({ content: [{ type: 'text', text: 'ran' }], details: {} }) },
    ];
    const keys = new Set();
    const messages = await runLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools }, {
      model, convertToLlm: (m) => m,
      beforeToolCall: (c) => { keys.add(`before ${Object.keys(c)}`); },
      afterToolCall: (c) => { keys.add(`after ${Object.keys(c)}`); },
    }, () => {}, undefined, streamFn);
    const results = messages.filter((m) => m.role === 'toolResult').map((m) => [m.toolCallId, Object.keys(m).filter((k) => k !== 'durationMs').join(), m.isError]);
    const promised = messages.find((m) => m.toolCallId === 'c3').content[0].text;
    return { keys: [...keys], results, promised };
  };
  const [o, p] = [await record('ours'), await record('pi')];
  assert.deepEqual(o.keys, p.keys);
  assert.deepEqual(o.results, p.results);
  assert.equal(p.promised, '#<Promise> could not be cloned.');
  assert.match(o.promised, /^prepareArguments returned a Promise/);
});

test('an error result the loop makes: the toolResult message shares tool_execution_end\'s result content and details, so a listener\'s edit there reaches the transcript, as pi (ids used twice keep copies)', async () => {
  for (const name of ['ours', 'pi']) {
    const { run: runLoop, stream } = IMPLS[name];
    const ends = new Map();
    const tool = { name: 't', label: 't', description: 't', parameters: { type: 'object' }, execute: async () => ({ content: [{ type: 'text', text: 'r' }], details: { d: 1 } }) };
    const streamFn = twoAnswers(stream, [{ type: 'toolCall', id: 'c1', name: 'nope', arguments: {} }, { type: 'toolCall', id: 'c2', name: 't', arguments: {} }]);
    const messages = await runLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, { model, convertToLlm: (m) => m }, (e) => {
      if (e.type !== 'tool_execution_end') return;
      ends.set(e.toolCallId, e.result);
      if (e.toolCallId === 'c1') e.result.content[0].text = 'REDACTED';
    }, undefined, streamFn);
    for (const m of messages.filter((x) => x.role === 'toolResult')) {
      assert.equal(m.content, ends.get(m.toolCallId).content, `${name} ${m.toolCallId}`);
      assert.equal(m.details, ends.get(m.toolCallId).details, `${name} ${m.toolCallId}`);
    }
    assert.equal(messages.find((x) => x.toolCallId === 'c1').content[0].text, 'REDACTED', name);
  }
  // Two unknown calls with one id: each message keeps its own copy (which end is whose cannot be told).
  const streamFn = twoAnswers(ours.createAssistantMessageEventStream, [{ type: 'toolCall', id: 'c1', name: 'nope', arguments: {} }, { type: 'toolCall', id: 'c1', name: 'nada', arguments: {} }]);
  const messages = await ours.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] }, { model, convertToLlm: (m) => m }, () => {}, undefined, streamFn);
  assert.deepEqual(messages.filter((x) => x.role === 'toolResult').map((m) => m.content[0].text), ['Tool nope not found', 'Tool nada not found']);
});

test('L-97/L-98: a listener\'s in-place change to a tool call\'s arguments (at message_end, or at the call\'s tool_execution_start) is what is validated, passed to beforeToolCall and executed, as pi (a JS stream function and a built-in provider, parallel and sequential)', async () => {
  const schema = { type: 'object', properties: { path: { type: 'string' }, n: { type: 'number' } }, required: ['path'] };
  // What each listener does to the block's arguments; the last breaks validation after the fact.
  const edits = {
    messageEnd: (e) => { if (e.type === 'message_end' && e.message.role === 'assistant') for (const b of e.message.content) if (b.type === 'toolCall') b.arguments.path = `${b.arguments.path}+end`; },
    start: (e) => { if (e.type === 'tool_execution_start') e.args.n = '7'; },
    invalid: (e) => { if (e.type === 'tool_execution_start') delete e.args.path; },
  };
  const seen = async (core, streamFn, model, mode, edit) => {
    const out = [];
    const tool = { name: 't', label: 't', description: 't', parameters: schema, executionMode: mode,
      execute: async (id, args) => { out.push(['execute', id, JSON.stringify(args)]); return { content: [{ type: 'text', text: 'r' }], details: {} }; } };
    const messages = await core.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] }, {
      model, apiKey: 'k', convertToLlm: (m) => m, beforeToolCall: ({ toolCall, args }) => { out.push(['before', toolCall.id, JSON.stringify(args)]); },
    }, edit, undefined, streamFn);
    for (const m of messages) if (m.role === 'toolResult') out.push(['result', m.toolCallId, m.isError, m.content[0]?.text]);
    return out;
  };
  for (const mode of ['parallel', 'sequential']) {
    for (const [kind, edit] of Object.entries(edits)) {
      const calls = [{ type: 'toolCall', id: 'c1', name: 't', arguments: { path: 'a' } }, { type: 'toolCall', id: 'c2', name: 't', arguments: { path: 'b', n: 1 } }];
      const [o, p] = [
        await seen(ours, twoAnswers(IMPLS.ours.stream, structuredClone(calls)), model, mode, edit),
        await seen(pi, twoAnswers(IMPLS.pi.stream, structuredClone(calls)), model, mode, edit),
      ];
      assert.deepEqual(o, p, `JS stream function, ${mode}, ${kind}`);
      assert.ok(p.some(([what, , , text]) => what === 'result' && typeof text === 'string'), kind);
    }
  }
  const server = await startOpenAIServer((body) => (body.messages.some((m) => m.role === 'tool') ? textChunks('done') : toolCallChunks('call_1', 't', { path: 'a' })));
  try {
    const llm = { id: 'm', name: 'm', api: 'openai-completions', provider: 'p', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e6, maxTokens: 1e4, compat: { supportsStore: false } };
    for (const [kind, edit] of Object.entries(edits)) {
      const [o, p] = [await seen(ours, undefined, llm, 'parallel', edit), await seen(pi, piStreamSimple, llm, 'parallel', edit)];
      assert.deepEqual(o, p, `built-in provider, ${kind}`);
    }
  } finally {
    await server.close();
  }
});
