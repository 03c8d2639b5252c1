// Cases where the order of events, or which error wins, was once different from
// pi-agent-core 1.6.0 (issue 13, a–e). Each runs through this package and through pi side
// by side, and the reference decides: the order of what listeners, tools and hooks observe,
// and the outcome.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { assistant as message, scriptedStream } from './shared/scripted-loop.mjs';

const IMPLS = { ours, pi: { ...piCore, createAssistantMessageEventStream: piStream } };
const text = (t) => ({ type: 'text', text: t });
const call = (id, name, args = {}) => ({ type: 'toolCall', id, name, arguments: args });
const model = { id: 'm', api: 'a', provider: 'p' };
const user = { role: 'user', content: 'hi', timestamp: 1 };
const ok = { content: [text('ok')], details: {} };
const tool = (name, execute, extra = {}) => ({ name, label: name, description: '', parameters: { type: 'object' }, execute, ...extra });
// Stamped ahead, so that the stream always gives it `durationMs` (L-22: a message older than
// its stream gets none), whichever millisecond the stream starts in.
const assistant = (content, stopReason) => message(content, stopReason, Date.now() + 3_600_000);
const normalize = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'timestamp' || k === 'durationMs' ? 0 : x)));

/** Runs `scenario(impl)` through both and asserts the same record. */
async function same(scenario) {
  const a = normalize(await scenario(IMPLS.ours));
  const b = normalize(await scenario(IMPLS.pi));
  assert.deepEqual(a, b);
  return a;
}

test('a (L-105): a tool that calls onUpdate and then steers: Agent listeners see the update before the tool goes on', async () => {
  for (const sync of [true, false]) {
    const log = await same(async (impl) => {
      const log = [];
      let agent;
      const t = tool('t', async (id, args, signal, onUpdate) => {
        if (!sync) await null;
        onUpdate({ content: [text('25%')], details: {} });
        log.push('tool: after onUpdate');
        agent.steer({ role: 'user', content: 'steer', timestamp: 1 });
        agent.followUp({ role: 'user', content: 'later', timestamp: 1 });
        log.push('tool: after queue calls');
        return ok;
      });
      agent = new impl.Agent({ initialState: { model, tools: [t] }, streamFn: scriptedStream(impl, [assistant([call('c1', 't')], 'toolUse')]) });
      agent.subscribe((e) => { log.push(e.type); });
      await agent.prompt('hi');
      log.push(`messages ${agent.state.messages.length}`);
      return log;
    });
    assert.ok(log.indexOf('tool_execution_update') < log.indexOf('tool: after onUpdate'));
  }
});

test('a (L-105): with runAgentLoop, the sink gets the update inside the onUpdate call', async () => {
  await same(async (impl) => {
    const log = [];
    const t = tool('t', async (id, args, signal, onUpdate) => {
      onUpdate({ content: [text('1')], details: {} });
      log.push('tool: after first');
      onUpdate({ content: [text('2')], details: {} });
      return ok;
    });
    const messages = await impl.runAgentLoop([user], { messages: [], tools: [t] }, { model, convertToLlm: (m) => m },
      (e) => { log.push(e.type === 'tool_execution_update' ? `update ${e.partialResult.content[0].text}` : e.type); },
      undefined, scriptedStream(impl, [assistant([call('c1', 't')], 'toolUse')]));
    return { log, messages };
  });
});

test('L-106: a sink that throws synchronously on an update throws inside the tool, which may catch it', async () => {
  for (const catches of [false, true]) {
    await same(async (impl) => {
      const seen = [];
      const t = tool('t', async (id, args, signal, onUpdate) => {
        try {
          onUpdate({ content: [text('u')], details: {} });
        } catch (e) {
          seen.push(`tool caught: ${e.message}`);
          if (!catches) throw e;
        }
        return ok;
      });
      const emit = (e) => {
        seen.push(e.type);
        if (e.type === 'tool_execution_update') throw new Error('sink refused the update');
      };
      const messages = await impl.runAgentLoop([user], { messages: [], tools: [t] }, { model, convertToLlm: (m) => m }, emit, undefined,
        scriptedStream(impl, [assistant([call('c1', 't')], 'toolUse')])).catch((e) => `rejected: ${e.message}`);
      return { seen, messages };
    });
  }
});

test('b (L-92): in parallel mode a tool whose execute throws synchronously: every execute of the batch is called before the first end', async () => {
  for (const first of ['throw', 'value', 'promise']) {
    await same(async (impl) => {
      const log = [];
      const mk = (name, how) => tool(name, (id) => {
        log.push(`execute ${name}`);
        if (how === 'throw') throw new Error(`${name} failed synchronously`);
        if (how === 'value') return ok;
        return Promise.resolve(ok);
      }, { executionMode: 'parallel' });
      const context = { messages: [], tools: [mk('a', first), mk('b', 'promise'), mk('c', 'throw')] };
      const messages = await impl.runAgentLoop([user], context, { model, convertToLlm: (m) => m },
        (e) => { log.push(e.type + (e.toolName ? ` ${e.toolName}` : '')); }, undefined,
        scriptedStream(impl, [assistant([call('c1', 'a'), call('c2', 'b'), call('c3', 'c')], 'toolUse')]));
      return { log, messages };
    });
  }
});

test('c (L-99, L-101): the signal aborts inside beforeToolCall and the hook then fails: the hook\'s error is the result', async () => {
  for (const how of ['throw', 'reject', 'return']) {
    const record = await same(async (impl) => {
      const controller = new AbortController();
      const results = [];
      const beforeToolCall = async () => {
        controller.abort();
        if (how === 'throw') throw new Error('hook threw');
        if (how === 'reject') return Promise.reject(new Error('hook rejected'));
        return undefined;
      };
      await impl.runAgentLoop([user], { messages: [], tools: [tool('t', async () => ok)] }, { model, convertToLlm: (m) => m, beforeToolCall },
        (e) => { if (e.type === 'tool_execution_end') results.push(e.result); }, controller.signal,
        scriptedStream(impl, [assistant([call('c1', 't')], 'toolUse')]));
      const direct = new AbortController();
      const outcome = await impl.runToolCall(call('c9', 't'), {
        tools: [tool('t', async () => ok)], signal: direct.signal,
        beforeToolCall: async () => { direct.abort(); if (how === 'return') return undefined; throw new Error(`runToolCall hook ${how}`); },
      });
      return { results, outcome };
    });
    if (how !== 'return') assert.notEqual(record.results[0].content[0].text, 'Operation aborted');
  }
});

test('d (L-76): prepareRequest sees the caller\'s context keys: no tools key when the caller gave none', async () => {
  for (const context of [{ messages: [] }, { messages: [], tools: undefined }, { systemPrompt: 'x', messages: [], tools: [tool('t', async () => ok)] }]) {
    await same(async (impl) => {
      const seen = [];
      await impl.runAgentLoop([user], { ...context }, {
        model, convertToLlm: (m) => m,
        prepareRequest: async ({ context: c }) => { seen.push({ keys: Object.keys(c), tools: c.tools === context.tools, n: c.messages.length }); },
      }, () => {}, undefined, scriptedStream(impl, []));
      return seen;
    });
  }
});

test('e (L-38, L-106): runToolCall with an onUpdate that throws synchronously, or is no function: an error outcome, afterToolCall sees isError', async () => {
  for (const onUpdate of [() => { throw new Error('update threw'); }, 42, () => { throw 'a string'; }, undefined, () => Promise.resolve()]) {
    await same(async (impl) => {
      const after = [];
      const t = tool('t', async (id, args, signal, update) => {
        update({ content: [text('u')], details: {} });
        return ok;
      });
      return impl.runToolCall(call('c9', 't'), { tools: [t], onUpdate, afterToolCall: async (x) => { after.push([x.isError, x.result]); } })
        .then((outcome) => ({ outcome, after }), (e) => ({ rejected: String(e?.message ?? e), after }));
    });
  }
});

test('L-31: an agentLoop consumer that aborts on an event is in time for the next step, as in pi (each event is awaited)', async () => {
  for (const at of ['agent_start', 'turn_start', 'tool_execution_start']) {
    await same(async (impl) => {
      const controller = new AbortController();
      const seen = { prepareRequest: [], results: [] };
      const t = (name) => tool(name, async () => ok);
      const config = {
        model, convertToLlm: (m) => m,
        prepareRequest: (_request, signal) => { seen.prepareRequest.push(signal.aborted); },
      };
      const stream = impl.agentLoop([user], { messages: [], tools: [t('a'), t('b')] }, config, controller.signal,
        scriptedStream(impl, [assistant([call('c1', 'a'), call('c2', 'b')], 'toolUse')]));
      for await (const e of stream) {
        if (e.type === at) controller.abort();
        if (e.type === 'tool_execution_end') seen.results.push(e.result.content[0]?.text);
      }
      const messages = await stream.result();
      return { ...seen, stopReason: messages.at(-1).stopReason };
    });
  }
});

test('L-92, L-106: in a parallel batch a tool that sent updates ends after the pending update emits, as pi awaits them', async () => {
  const shapes = {
    plain: () => ok,
    syncThrow: () => { throw new Error('sync'); },
    updThenAsync: async (id, args, signal, u) => { u({ content: [text('p')], details: {} }); return ok; },
    updThenPlain: (id, args, signal, u) => { u({ content: [text('p')], details: {} }); return ok; },
    updThenThrow: (id, args, signal, u) => { u({ content: [text('p')], details: {} }); throw new Error('after update'); },
  };
  const names = Object.keys(shapes);
  for (const first of names) {
    for (const second of names) {
      await same(async (impl) => {
        const ends = [];
        const tools = [tool('a', shapes[first]), tool('b', shapes[second])];
        await impl.runAgentLoop([user], { messages: [], tools }, { model, convertToLlm: (m) => m },
          (e) => { if (e.type === 'tool_execution_end') ends.push(`${e.toolName}:${e.result.content[0]?.text}`); },
          undefined, scriptedStream(impl, [assistant([call('c1', 'a'), call('c2', 'b')], 'toolUse')]));
        return { first, second, ends };
      });
    }
  }
});

test('L-38: runToolCall without options.tools looks the tool up in options.context.tools, as pi\'s default does', async () => {
  const t = tool('a', async () => ok);
  for (const options of [{ context: { messages: [], tools: [t] } }, { context: { messages: [] } }, { context: { messages: [], tools: null } }, {}, { context: null }, { tools: undefined, context: { tools: [t] } }]) {
    await same(async (impl) => impl.runToolCall(call('c1', 'a'), options).then(
      (outcome) => ({ isError: outcome.isError, text: outcome.result.content[0]?.text }),
      (e) => ({ rejected: `${e?.constructor?.name}: ${e?.message}` }),
    ));
  }
});

test('L-39: a convertToLlm that is missing or no function rejects the run with pi\'s TypeError', async () => {
  for (const convertToLlm of [undefined, 5, 'x', null]) {
    await same(async (impl) => impl.runAgentLoop([user], { messages: [] }, { model, convertToLlm }, () => {}, undefined, scriptedStream(impl, []))
      .then(() => 'resolved', (e) => `${e?.constructor?.name}: ${e?.message}`));
  }
});
