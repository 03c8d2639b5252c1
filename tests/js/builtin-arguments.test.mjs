// Streamed tool-call arguments of the built-in stream, as a sink sees them at each
// `toolcall_delta`, against pi-agent-core 1.6.0 with pi-ai 1.6.0's streamSimple. The glue
// parses each call's JSON text itself, as pi-ai does, so the partial arguments match pi's at
// every delta: unfinished numbers and literals (`12` of `123`, `tr` of `true`), escapes cut in
// half, keys without values. Each SSE event is its own network write with a pause between,
// so pi's provider cannot read ahead of its consumer and the snapshots compare one to one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';
import { faultServer } from './shared/four-apis.mjs';

const IMPLS = {
  ours: [ours.runAgentLoop, undefined],
  oursStreamSimple: [ours.runAgentLoop, ours.streamSimple],
  pi: [pi.runAgentLoop, piStreamSimple],
};

const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test' };
const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A Chat Completions answer that calls `read` with `pieces` as its argument deltas. */
function callBody(pieces) {
  const events = [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }] })];
  for (const p of pieces) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
  events.push(chunk({}, 'tool_calls'), 'data: [DONE]\n\n');
  return events;
}
const textBody = [chunk({ role: 'assistant', content: 'done' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];

const sse = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
/** A Responses answer whose call opens with `pieces[0]` as its `arguments` (as some servers
 * send) and streams the rest. */
function responsesCallBody([first, ...rest]) {
  const item = { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'read', arguments: first };
  const text = [first, ...rest].join('');
  return [
    sse('response.output_item.added', { output_index: 0, item }),
    ...rest.map((delta) => sse('response.function_call_arguments.delta', { output_index: 0, item_id: 'fc_0', delta })),
    sse('response.output_item.done', { output_index: 0, item: { ...item, arguments: text, status: 'completed' } }),
    sse('response.completed', { response: { id: 'resp_1', status: 'completed' } }),
  ];
}
const responsesTextBody = [
  sse('response.output_item.added', { output_index: 0, item: { type: 'message', id: 'msg_0', role: 'assistant', content: [] } }),
  sse('response.output_text.delta', { output_index: 0, item_id: 'msg_0', content_index: 0, delta: 'done' }),
  sse('response.output_item.done', { output_index: 0, item: { type: 'message', id: 'msg_0', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] } }),
  sse('response.completed', { response: { id: 'resp_2', status: 'completed' } }),
];

/** Serves `bodies[n]` to request n, one event per write, 3 ms apart. */
async function serve(bodies) {
  const server = await faultServer(async (_req, res, n) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of bodies[Math.min(n, bodies.length - 1)]) {
      res.write(e);
      await new Promise((r) => setTimeout(r, 3));
    }
    res.end();
  });
  return { baseUrl: `${server.origin}/v1`, close: server.close };
}

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

const tool = {
  name: 'read', label: 'Read', description: 'Reads',
  parameters: { type: 'object', additionalProperties: true },
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }),
};

/** The call's arguments as JSON at each toolcall_delta and at toolcall_end, and the final
 * message's call. */
async function argumentsSeen(impl, pieces, responses = false) {
  const server = await serve(responses ? [responsesCallBody(pieces), responsesTextBody] : [callBody(pieces), textBody]);
  servers.push(server);
  const model = responses
    ? { ...getModel('openai', 'gpt-5-mini'), baseUrl: server.baseUrl }
    : { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
  const seen = [];
  const [runAgentLoop, streamFn] = IMPLS[impl];
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
    { model, apiKey: 'sk-test', convertToLlm: (m) => m }, (e) => {
      const u = e.assistantMessageEvent;
      if (u?.type === 'toolcall_start' || u?.type === 'toolcall_delta' || u?.type === 'toolcall_end') {
        seen.push(`${u.type} ${JSON.stringify(u.partial.content[u.contentIndex].arguments)} ${JSON.stringify(e.message.content[u.contentIndex].arguments)}`);
      }
    }, undefined, streamFn);
  const call = messages.find((m) => m.role === 'assistant').content.find((c) => c.type === 'toolCall');
  return { seen, final: JSON.stringify(call) };
}

const CASES = [
  ['{"n": 12', '3, "b": tr', 'ue, "f": fal', 'se, "z": nu', 'll}'],
  ['{"s": "caf\\u00', 'e9 \\', 'n end", "e": 1e', '5, "neg": -', '0.5}'],
  ['{"a": [1, 2', ', {"k": "v', '"}], "o": {"x"', ': {"y": [', ']}}}'],
  ['{"key', '": "val', 'ue", "other":', ' "x"}'],
  ['  ', '{', '"p": "a.txt"', '}'],
  ['{"p": "😀', '", "q": "\\ud83d', '\\ude00"}'],
  ['{"bad": tru', 'x, "ok": 1}'],
];

test('partial tool-call arguments at every delta are pi-ai\'s (unfinished numbers, literals and escapes included)', async () => {
  for (const pieces of CASES) {
    const b = await argumentsSeen('pi', pieces);
    for (const impl of ['ours', 'oursStreamSimple']) {
      const a = await argumentsSeen(impl, pieces);
      assert.deepEqual(a.seen, b.seen, `${impl}: ${pieces.join(' | ')}`);
      // A final parse error's wording is the JSON parser's own (V8's in pi): compared without it.
      const plain = (f) => JSON.stringify({ ...JSON.parse(f), argumentsError: 'argumentsError' in JSON.parse(f) });
      assert.equal(plain(a.final), plain(b.final), `${impl}: ${pieces.join(' | ')}`);
    }
  }
});

test('a Responses call that opens with argument text shows it from its start, and streams on from it, as pi-ai', async () => {
  for (const pieces of [['{"a": 1', ', "c": 3', ', "b": 2}'], ['{"p": "a.t', 'xt"}'], ['{', '}']]) {
    const b = await argumentsSeen('pi', pieces, true);
    for (const impl of ['ours', 'oursStreamSimple']) {
      const a = await argumentsSeen(impl, pieces, true);
      assert.deepEqual(a, b, `${impl}: ${pieces.join(' | ')}`);
    }
  }
});

test('a -0 in streamed tool arguments reaches execute and the final call as -0, as JSON.parse gives it in pi', async () => {
  const seen = {};
  for (const impl of ['pi', 'ours', 'oursStreamSimple']) {
    const server = await serve([callBody(['{"x": -0, "y": [-0.0, 0', ', 1], "z": -1e-400}']), textBody]);
    servers.push(server);
    const model = { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
    let params;
    const recorder = { ...tool, execute: async (_id, a) => { params = a; return { content: [{ type: 'text', text: 'ok' }], details: {} }; } };
    const [runAgentLoop, streamFn] = IMPLS[impl];
    const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [recorder] },
      { model, apiKey: 'sk-test', convertToLlm: (m) => m }, () => {}, undefined, streamFn);
    const call = messages.find((m) => m.role === 'assistant').content.find((c) => c.type === 'toolCall');
    seen[impl] = [params.x, params.y[0], params.y[1], params.z, call.arguments.x, call.arguments.z].map((v) => Object.is(v, -0));
  }
  assert.deepEqual(seen.pi, [true, true, false, true, true, true]);
  assert.deepEqual(seen.ours, seen.pi);
  assert.deepEqual(seen.oursStreamSimple, seen.pi);
});

test('a call cut before it ends gets the final arguments pi-ai gives it (the partial parse lives in JS alone)', async () => {
  const pieces = ['{"path": "src/ma', 'in.rs", "n": 12', '3, "flag": tr'];
  const call = { type: 'function_call', id: 'fc_0', call_id: 'call_1', name: 'read', arguments: '' };
  const bodies = {
    // Chat Completions: the connection closes mid-arguments.
    completions: [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }] }),
      ...pieces.map((p) => chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }))],
    // Responses: the response completes with the call never done.
    responses: [sse('response.output_item.added', { output_index: 0, item: call }),
      ...pieces.map((delta) => sse('response.function_call_arguments.delta', { output_index: 0, item_id: 'fc_0', delta })),
      sse('response.completed', { response: { id: 'resp_1', status: 'completed' } })],
  };
  for (const [api, body] of Object.entries(bodies)) {
    const finals = {};
    for (const impl of ['pi', 'ours', 'oursStreamSimple']) {
      const server = await serve([body, api === 'responses' ? responsesTextBody : textBody]);
      servers.push(server);
      const model = api === 'responses'
        ? { ...getModel('openai', 'gpt-5-mini'), baseUrl: server.baseUrl }
        : { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
      const [runAgentLoop, streamFn] = IMPLS[impl];
      const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
        { model, apiKey: 'sk-test', convertToLlm: (m) => m }, () => {}, undefined, streamFn);
      const assistant = messages.find((m) => m.role === 'assistant');
      const { argumentsError, ...call } = assistant.content.find((c) => c.type === 'toolCall');
      // A final parse error's wording is the JSON parser's own (V8's in pi): compared by what it quotes.
      finals[impl] = { stopReason: assistant.stopReason, call, quoted: argumentsError?.split('\n\nReceived arguments:\n')[1] };
    }
    assert.deepEqual(finals.ours, finals.pi, `${api}: ours`);
    assert.deepEqual(finals.oursStreamSimple, finals.pi, `${api}: ours through streamSimple`);
  }
});
