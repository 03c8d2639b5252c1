// Untrusted bytes from the network (brief: "everything from outside is untrusted"): the
// built-in stream is fed seeded bodies (300 Chat Completions, 200 Responses, 200 Anthropic) of valid chunks mixed with wrong types, cut JSON,
// random bytes and bad UTF-8, served in random splits, some under a content type that is not
// an event stream's. Every run must resolve (never reject,
// never hang), end with turn_end/agent_end, hold every new message in agent_end, and give
// every tool call of a non-error message exactly one result.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';

function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const head = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
const chunk = (choice, extra = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;

const ev = (name, fields, named = true) => `${named ? `event: ${name}\n` : ''}data: ${JSON.stringify({ type: name, ...fields })}\n\n`;

/** Hostile OpenAI Responses events. */
function responsesPart(r) {
  const index = () => pick(r, [0, 1, undefined, 'x']);
  const item = () => pick(r, [
    { type: 'message', id: 'm', content: pick(r, [[{ type: 'output_text', text: 'hi' }], 'x', null]) },
    { type: 'function_call', id: pick(r, ['fc', undefined]), call_id: pick(r, ['c', undefined]), name: pick(r, ['echo', 'nope', undefined]), arguments: pick(r, ['', '{"x":1}', 5, '{"x":']) },
    { type: 'reasoning', id: 'rs', summary: pick(r, [[{ text: 's' }], 'x', [null]]) },
    null, 'x', 7,
  ]);
  return pick(r, [
    () => ev('response.created', { response: pick(r, [{ id: 'r' }, null, 5]) }),
    () => ev('response.output_item.added', { output_index: index(), item: item() }),
    () => ev('response.output_text.delta', { output_index: index(), item_id: pick(r, ['m', undefined, 3]), delta: pick(r, ['hi', 'ünï 😀', 5, null]) }),
    () => ev('response.reasoning_summary_text.delta', { output_index: index(), delta: pick(r, ['t', null]) }),
    () => ev('response.function_call_arguments.delta', { output_index: index(), delta: pick(r, ['{"x":', '1}', '"', 7]) }),
    () => ev('response.function_call_arguments.done', { output_index: index(), arguments: pick(r, ['{"x":2}', 'zz', null]) }),
    () => ev('response.output_item.done', { output_index: index(), item: item() }),
    () => ev(pick(r, ['response.completed', 'response.incomplete']), { response: pick(r, [
      { status: 'completed', usage: { input_tokens: 5, output_tokens: pick(r, [2, 'x']) } },
      { status: 'incomplete', incomplete_details: { reason: pick(r, ['max_output_tokens', 'content_filter', 3]) } },
      { status: 'weird' }, { status: 'completed', output: pick(r, ['x', [null], [{ type: 'reasoning', id: 'rs', encrypted_content: 'e' }]]) }, null, 7,
    ]) }),
    () => ev('response.failed', { response: pick(r, [{ error: { code: 'x', message: 'y' } }, null, { incomplete_details: { reason: 9 } }]) }),
    () => ev('error', { code: 'e', message: pick(r, ['boom', 5]) }, r() < 0.5),
    () => 'data: {"type": "response.out\n\n',
    () => 'data: [DONE]\n\n',
    () => ': keep-alive\n\n',
  ])();
}

/** Hostile Anthropic Messages events, sometimes without their `event:` line. */
function anthropicPart(r) {
  const named = r() < 0.8;
  const index = () => pick(r, [0, 1, 'x']);
  return pick(r, [
    () => ev('message_start', { message: pick(r, [{ id: 'm', model: 'x', usage: { input_tokens: 3 } }, { usage: 'x' }, null]) }, named),
    () => ev('content_block_start', { index: index(), content_block: pick(r, [
      { type: 'text', text: pick(r, ['', 5]) },
      { type: 'tool_use', id: pick(r, ['t1', 't2', undefined]), name: pick(r, ['echo', 'nope', undefined]), input: pick(r, [{}, { x: 1 }, null, 5]) },
      { type: 'thinking', thinking: '' }, { type: 'redacted_thinking', data: 'd' }, { type: 'fallback' }, null,
    ]) }, named),
    () => ev('content_block_delta', { index: index(), delta: pick(r, [
      { type: 'text_delta', text: pick(r, ['hi', '😀', 5]) },
      { type: 'input_json_delta', partial_json: pick(r, ['{"x":', '1}', '"', null]) },
      { type: 'thinking_delta', thinking: 'h' }, { type: 'signature_delta', signature: pick(r, ['s', 3]) }, null, 'x',
    ]) }, named),
    () => ev('content_block_stop', { index: index() }, named),
    () => ev('message_delta', { delta: pick(r, [{ stop_reason: pick(r, ['end_turn', 'tool_use', 'max_tokens', 'weird', 'refusal', 7]) }, null]), usage: pick(r, [{ output_tokens: 3 }, 'x', null]) }, named),
    () => ev('message_stop', {}, named),
    () => 'event: error\ndata: {"type":"error","error":{"message":"overloaded"}}\n\n',
    () => 'event: content_block_delta\ndata: {"type": tr\n\n',
    () => 'event: ping\ndata: {"type": "ping"}\n\n',
  ])();
}

function body(seed, dialect = 'openai') {
  const r = rng(seed);
  const parts = [];
  const n = 1 + Math.floor(r() * 12);
  for (let i = 0; i < n; i++) {
    if (dialect === 'responses') { parts.push(responsesPart(r)); continue; }
    if (dialect === 'anthropic') { parts.push(anthropicPart(r)); continue; }
    parts.push(pick(r, [
      () => chunk({ delta: { content: pick(r, ['hi', 'ünï 😀', '', ' ']) } }),
      () => chunk({ delta: { reasoning_content: 'hmm' } }),
      () => chunk({ delta: { tool_calls: [{ index: Math.floor(r() * 2), id: pick(r, ['a', 'b', undefined]), function: { name: pick(r, ['echo', 'nope', undefined]), arguments: pick(r, ['{"x":', '1}', '"', '{}', 'null', ']']) } }] } }),
      () => chunk({ delta: { tool_calls: pick(r, [null, 3, 'x', [null], [{ function: 7 }], [{ index: 'z' }]]) } }),
      () => chunk({ delta: pick(r, [5, 'x', null, [], { content: { nested: true } }, { content: [1, { text: 2 }] }]) }),
      () => `data: ${JSON.stringify({ ...head, choices: pick(r, ['x', 3, null, [], [null], [7]]) })}\n\n`,
      () => `data: ${JSON.stringify({ ...head, choices: [], usage: pick(r, ['abc', { prompt_tokens: 'x' }, { prompt_tokens: 5, completion_tokens: 2 }, null]) })}\n\n`,
      () => chunk({ delta: {}, finish_reason: pick(r, ['stop', 'tool_calls', 'length', 'weird', 7, null]) }),
      () => `data: {"choices": [tru\n\n`,
      () => 'data: [DONE]\n\n',
      () => ': keep-alive\n\n',
      () => 'event: ping\ndata: 1\n\n',
      () => '\r\n\r\n',
    ])());
  }
  let bytes = Buffer.from(parts.join(''));
  if (r() < 0.2) bytes = Buffer.concat([bytes, Buffer.from([0xff, 0xfe, 0xc3])]);
  if (r() < 0.2) bytes = bytes.subarray(0, Math.floor(r() * bytes.length));
  return { bytes, r };
}

/** The content type seed `seed`'s body is served under (its own generator, so the body and
 * its splits are the same under any label), and what leads a body labelled wrong. */
const labelOf = (seed) => pick(rng(seed * 7919), ['text/event-stream', 'text/event-stream', 'text/event-stream', 'application/json', 'text/html']);
const LEADS = ['', '\n', '\uFEFF', ' \r\n'];

const server = createServer((req, res) => {
  const seed = Number(new URL(req.url, 'http://x').searchParams.get('seed') ?? req.headers['x-seed']);
  req.resume();
  req.on('end', async () => {
    const { bytes, r } = body(seed, req.headers['x-dialect']);
    // Mostly labelled right; else as a gateway may label a stream (application/json,
    // text/html), sometimes after a BOM or blank lines: the body, not the label, decides.
    const type = req.headers['x-type'] ?? labelOf(seed);
    res.writeHead(200, { 'content-type': type });
    if (type !== 'text/event-stream') res.write(LEADS[seed % LEADS.length]);
    for (let i = 0; i < bytes.length;) {
      const step = 1 + Math.floor(r() * 40);
      res.write(bytes.subarray(i, i + step));
      i += step;
      if (r() < 0.3) await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
after(() => new Promise((resolve) => server.close(resolve)));

const echo = {
  name: 'echo', label: 'echo', description: 'echo', parameters: { type: 'object', properties: { x: { type: 'number' } } },
  execute: async (_id, args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }], details: {} }),
};

const ONLY = process.env.SEED ? Number(process.env.SEED) : undefined;
const DIALECTS = [['openai-completions', 'openai', 300], ['openai-responses', 'responses', 200], ['anthropic-messages', 'anthropic', 200]];
for (const [api, dialect, count] of DIALECTS) test(`${count} seeded hostile ${api} bodies: every run ends cleanly, every executed tool call has one result (L-48)`, async () => {
  const baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
  const stopReasons = new Set();
  let relabelled = 0;
  for (let seed = ONLY ?? 1; seed <= (ONLY ?? count); seed++) {
    const events = [];
    const model = {
      id: 'm', name: 'm', api, provider: 'fuzz', baseUrl, reasoning: false, input: ['text'],
      cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100,
      headers: { 'x-seed': String(seed), 'x-dialect': dialect },
    };
    // The loop would continue while the model keeps calling tools; the same body answers every turn.
    const run = (m, sink) => {
      let turns = 0;
      return runAgentLoop(
        [{ role: 'user', content: 'go', timestamp: 1 }],
        { messages: [], tools: [echo] },
        { model: m, apiKey: 'k', convertToLlm: (x) => x, finishTurn: () => (++turns >= 3 ? { action: 'end' } : undefined) },
        sink,
        undefined,
        streamSimple,
      );
    };
    const messages = await run(model, (e) => { events.push(e); });
    // Labelled wrong, a body that starts as an event stream is read as one, as pi-ai reads
    // any 200: the same answers as under its right label. (One that starts as JSON or HTML is
    // named instead.)
    const start = body(seed, dialect).bytes.toString().trimStart()[0];
    if (labelOf(seed) !== 'text/event-stream' && !['{', '[', '<'].includes(start)) {
      const right = await run({ ...model, headers: { ...model.headers, 'x-type': 'text/event-stream' } }, () => {});
      const shape = (list) => list.map((m) => [m.role, m.stopReason, m.errorMessage, JSON.stringify(m.content)]);
      assert.deepEqual(shape(messages), shape(right), `seed ${seed}: labelled ${labelOf(seed)}`);
      relabelled += 1;
    }
    if (ONLY) console.log(JSON.stringify(messages, null, 1).slice(0, 4000), body(seed, dialect).bytes.toString());
    const types = events.map((e) => e.type);
    assert.equal(types.at(-1), 'agent_end', `seed ${seed}`);
    assert.equal(types.at(-2), 'turn_end', `seed ${seed}`);
    assert.deepEqual(events.at(-1).messages, messages, `seed ${seed}`);
    // Each assistant message's tool calls are answered by the results that follow it, one
    // each, unless the message ended as an error (L-48: the run exits without executing).
    messages.forEach((m, i) => {
      if (m.role !== 'assistant') return;
      const calls = m.content.filter((b) => b.type === 'toolCall');
      const next = messages.slice(i + 1);
      const end = next.findIndex((x) => x.role !== 'toolResult');
      const results = end < 0 ? next : next.slice(0, end);
      if (m.stopReason === 'error' || m.stopReason === 'aborted') {
        assert.equal(results.length, 0, `seed ${seed}: L-48`);
        return;
      }
      assert.deepEqual(results.map((t) => t.toolCallId), calls.map((c) => c.id), `seed ${seed}: one result per call, in order`);
    });
    for (const m of messages.filter((x) => x.role === 'assistant')) {
      stopReasons.add(m.stopReason);
      if (m.stopReason === 'error') assert.ok(typeof m.errorMessage === 'string' && m.errorMessage.length > 0, `seed ${seed}`);
    }
  }
  // The corpus reaches both clean and failed endings, and bodies labelled wrong.
  assert.ok(stopReasons.has('error'));
  if (ONLY === undefined) assert.ok(relabelled > count / 10, `${relabelled} bodies labelled wrong`);
  assert.ok(stopReasons.has('stop') || stopReasons.has('toolUse'));
});
