// The reference run of tests/js/cassette.test.mjs (and bench/loop.mjs's recording figure): a
// scripted model whose answers depend on the request's transcript only, two tools that finish
// out of call order, and an Agent that records a 20-turn run with steering, a follow-up and an
// abort.
import assert from 'node:assert/strict';
import { Agent, createAssistantMessageEventStream } from 'pi-agent-wasm';
import { Recorder } from 'pi-agent-wasm/cassette';

export const usage = (n) => ({ input: n, output: n, cacheRead: 0, cacheWrite: 0, totalTokens: 2 * n, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
export const model = { id: 'scripted', name: 'scripted', api: 'scripted', provider: 'scripted', baseUrl: '', reasoning: false, input: ['text'], cost: usage(0).cost, contextWindow: 1e6, maxTokens: 1e5 };
export const TURNS = 20;

/** The scripted model: what it answers depends on the request's transcript only (how many
 * assistant messages it holds), so a forked run asking again gets the same answers. It streams
 * text in deltas, then (but on the last turn) two tool calls with streamed arguments. */
export function scriptedStream(_model, context, options) {
  const n = context.messages.filter((m) => m.role === 'assistant').length;
  const s = createAssistantMessageEventStream();
  (async () => {
    await new Promise((r) => setTimeout(r, 1));
    const partial = { role: 'assistant', api: 'scripted', provider: 'scripted', model: 'scripted', usage: usage(n + 1), content: [], stopReason: 'stop', timestamp: Date.now() };
    s.push({ type: 'start', partial });
    partial.content.push({ type: 'text', text: '' });
    s.push({ type: 'text_start', contentIndex: 0, partial });
    for (const word of ['turn ', String(n), ' of ', String(TURNS)]) {
      partial.content[0].text += word;
      s.push({ type: 'text_delta', contentIndex: 0, delta: word, partial });
      // Most turns' deltas are pushed ahead of the loop's reads; the last turn's come slowly,
      // so that the abort finds the response still streaming.
      await (n >= TURNS ? new Promise((r) => setImmediate(r)) : Promise.resolve());
      if (options?.signal?.aborted) {
        // As pi-ai's streams end an aborted response.
        partial.stopReason = 'aborted';
        partial.errorMessage = 'Request was aborted';
        s.push({ type: 'error', reason: 'aborted', error: partial });
        return;
      }
    }
    s.push({ type: 'text_end', contentIndex: 0, content: partial.content[0].text, partial });
    if (n < TURNS - 1) {
      for (const [i, name] of [[1, 'slow'], [2, 'fast']]) {
        const call = { type: 'toolCall', id: `call-${n}-${i}`, name, arguments: {} };
        partial.content.push(call);
        s.push({ type: 'toolcall_start', contentIndex: i, partial });
        const json = JSON.stringify({ turn: n, note: `step ${i}` });
        for (let k = 0; k < json.length; k += 7) {
          call.arguments = JSON.parse(json.length <= k + 7 ? json : '{}');
          s.push({ type: 'toolcall_delta', contentIndex: i, delta: json.slice(k, k + 7), partial });
        }
        call.arguments = JSON.parse(json);
        s.push({ type: 'toolcall_end', contentIndex: i, toolCall: call, partial });
      }
      partial.stopReason = 'toolUse';
    }
    partial.usage = usage(n + 2);
    s.push({ type: 'done', reason: partial.stopReason, message: partial });
  })();
  return s;
}

const parameters = { type: 'object', properties: { turn: { type: 'number' }, note: { type: 'string' } }, required: ['turn'] };
/** Two tools: `slow` reports progress and ends after `fast`, so results come out of call order. */
export function tools(log = []) {
  return [
    { name: 'slow', label: 'slow', description: 'slow work', parameters, execute: async (id, args, signal, onUpdate) => {
      log.push(id);
      onUpdate?.({ content: [{ type: 'text', text: `half of ${args.turn}` }], details: { half: true } });
      await new Promise((r) => setTimeout(r, 8));
      if (signal?.aborted) throw new Error('slow work aborted');
      return { content: [{ type: 'text', text: `slow ${args.turn}` }], details: { turn: args.turn } };
    } },
    { name: 'fast', label: 'fast', description: 'fast work', parameters, execute: async (id, args) => {
      log.push(id);
      await new Promise((r) => setTimeout(r, 2));
      if (args.turn === 3) throw new Error('fast work failed on turn 3');
      return { content: [{ type: 'text', text: `fast ${args.turn}` }], details: {} };
    } },
  ];
}

/** Tools that fail the test if a replay runs them. */
export const untouchable = tools().map((t) => ({ ...t, execute: () => assert.fail(`replay ran tool ${t.name}`) }));
export const noModel = () => assert.fail('replay asked the model');

/** Events as plain data, in order (what a listener saw). */
export const plain = (events) => events.map((e) => JSON.parse(JSON.stringify(e)));

/** Records the reference run; resolves with the recorder, the events and the messages. */
export async function recordReference(extra = {}) {
  const recorder = new Recorder();
  const agent = new Agent({ initialState: { model, tools: tools(), systemPrompt: 'You are scripted.' }, streamFn: scriptedStream, record: recorder, ...extra });
  const events = [];
  let turnStarts = 0;
  agent.subscribe((event) => {
    events.push(JSON.parse(JSON.stringify(event)));
    if (event.type === 'turn_start') turnStarts += 1;
    // Steering while the turn's tools run; a follow-up later; an abort in the last turn.
    if (event.type === 'tool_execution_start' && turnStarts === 5 && event.toolName === 'slow') agent.steer({ role: 'user', content: 'steer: hurry', timestamp: 5 });
    if (event.type === 'turn_start' && turnStarts === 8) agent.followUp({ role: 'user', content: 'follow-up: and then?', timestamp: 8 });
    if (event.type === 'message_update' && turnStarts === TURNS + 1 && event.assistantMessageEvent.type === 'text_delta') agent.abort();
  });
  await agent.prompt('Work for 20 turns.');
  return { recorder, events, messages: agent.state.messages };
}


/** A stream function answering each request at once with the content `contentOf(context)`
 * gives (a `toolUse` answer when it holds a call); with `delta`, its first text streams as a
 * delta too. */
export function answering(contentOf, { delta = false } = {}) {
  return (_model, context) => {
    const s = createAssistantMessageEventStream();
    queueMicrotask(() => {
      const content = contentOf(context);
      const stopReason = content.some((b) => b.type === 'toolCall') ? 'toolUse' : 'stop';
      const partial = { role: 'assistant', api: 'scripted', provider: 'scripted', model: 'scripted', usage: usage(1), content, stopReason, timestamp: 1 };
      s.push({ type: 'start', partial });
      if (delta && content[0]?.type === 'text') s.push({ type: 'text_delta', contentIndex: 0, delta: content[0].text, partial });
      s.push({ type: 'done', reason: stopReason, message: partial });
    });
    return s;
  };
}

/** How many answers a request's transcript already holds. */
export const answered = (context) => context.messages.filter((m) => m.role === 'assistant').length;

/** Whether a request comes before any tool result. */
export const firstRequest = (context) => !context.messages.some((m) => m.role === 'toolResult');
