// Differential over generated wire streams (issue 13, point 4): well-formed streams of the
// OpenAI Chat Completions, OpenAI Responses, Anthropic Messages and Gemini APIs in their minimal shapes (optional
// fields left out: ids, usage, summaries, signatures, stop reasons, content parts) and in
// full ones, served in irregular chunks from 127.0.0.1 to the built-in stream and to pi-ai
// 1.6.0's streamSimple, inside an agent run with a tool. The events, messages and request
// bodies must be the same. The shapes where this package keeps text pi-ai loses (a
// Responses delta without output_index, a done item without content) are tested on their
// own in builtin-responses.test.mjs and are not drawn here.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { harness } from './shared/provider-diff.mjs';
import { rng } from './shared/scenario.mjs';

const COUNT = Number(process.env.PROVIDER_SHAPES ?? 150);
const ONLY = process.env.PROVIDER_SHAPES_SEED ? Number(process.env.PROVIDER_SHAPES_SEED) : undefined;
const KEY = 'sk-local-shapes-0123456789';

const sse = (name, data) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
const pieces = (r, s) => {
  const out = [];
  for (let i = 0; i < s.length;) {
    const n = 1 + r.int(6);
    out.push(s.slice(i, i + n));
    i += n;
  }
  return out.length ? out : [''];
};
const TEXTS = ['Hello there.', 'ünï 😀 ok', 'a', 'Line one\nline two'];
const ARGS = [{ path: 'a.txt' }, { path: 'dir/b', extra: [1, { x: null }] }, {}];

/** A Responses stream: items of each kind with or without their optional parts. */
function responses(r, noCalls = false) {
  const out = [];
  const opt = (p) => r.chance(p);
  if (opt(0.7)) out.push(sse('response.created', { type: 'response.created', response: opt(0.8) ? { id: 'resp_1', status: 'in_progress', output: [] } : { status: 'in_progress' } }));
  const n = 1 + r.int(3);
  let calls = 0;
  // Output indexes need not start at 0.
  const base = opt(0.2) ? 1 + r.int(3) : 0;
  for (let k = 0; k < n; k++) {
    const i = base + k;
    const kind = r.pick(noCalls ? ['message', 'reasoning', 'refusal'] : ['message', 'message', 'reasoning', 'function_call', 'refusal']);
    if (kind === 'refusal') {
      const text = r.pick(TEXTS);
      out.push(sse('response.output_item.added', { type: 'response.output_item.added', output_index: i, item: { id: `msg_${i}`, type: 'message', role: 'assistant' } }));
      for (const d of pieces(r, text)) out.push(sse('response.refusal.delta', { type: 'response.refusal.delta', item_id: `msg_${i}`, output_index: i, content_index: 0, delta: d }));
      out.push(sse('response.output_item.done', { type: 'response.output_item.done', output_index: i, item: { id: `msg_${i}`, type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: text }] } }));
    } else if (kind === 'message') {
      const text = r.pick(TEXTS);
      const item = { id: `msg_${i}`, type: 'message', role: 'assistant', ...(opt(0.5) ? { status: 'in_progress', content: [] } : {}) };
      out.push(sse('response.output_item.added', { type: 'response.output_item.added', output_index: i, item }));
      if (opt(0.5)) out.push(sse('response.content_part.added', { type: 'response.content_part.added', item_id: item.id, output_index: i, content_index: 0, part: { type: 'output_text', text: '' } }));
      for (const d of pieces(r, text)) out.push(sse('response.output_text.delta', { type: 'response.output_text.delta', item_id: item.id, output_index: i, content_index: 0, delta: d }));
      if (opt(0.5)) out.push(sse('response.output_text.done', { type: 'response.output_text.done', item_id: item.id, output_index: i, content_index: 0, text }));
      const done = { id: item.id, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, ...(opt(0.5) ? { annotations: [] } : {}) }] };
      if (opt(0.2)) done.phase = r.pick(['commentary', 'final_answer']);
      out.push(sse('response.output_item.done', { type: 'response.output_item.done', output_index: i, item: done }));
    } else if (kind === 'reasoning') {
      const text = r.pick(TEXTS);
      out.push(sse('response.output_item.added', { type: 'response.output_item.added', output_index: i, item: { id: `rs_${i}`, type: 'reasoning', ...(opt(0.5) ? { summary: [] } : {}) } }));
      for (const d of pieces(r, text)) out.push(sse('response.reasoning_summary_text.delta', { type: 'response.reasoning_summary_text.delta', item_id: `rs_${i}`, output_index: i, summary_index: 0, delta: d }));
      if (opt(0.3)) out.push(sse('response.reasoning_summary_part.done', { type: 'response.reasoning_summary_part.done', item_id: `rs_${i}`, output_index: i, summary_index: 0 }));
      const done = { id: `rs_${i}`, type: 'reasoning', summary: opt(0.6) ? [{ type: 'summary_text', text }] : [] };
      if (opt(0.3)) done.encrypted_content = 'enc';
      out.push(sse('response.output_item.done', { type: 'response.output_item.done', output_index: i, item: done }));
    } else {
      calls += 1;
      const args = JSON.stringify(r.pick(ARGS));
      const item = { id: `fc_${i}`, type: 'function_call', call_id: `call_${i}`, name: 'read', arguments: '', ...(opt(0.2) ? { namespace: 'files' } : {}) };
      out.push(sse('response.output_item.added', { type: 'response.output_item.added', output_index: i, item }));
      for (const d of pieces(r, args)) out.push(sse('response.function_call_arguments.delta', { type: 'response.function_call_arguments.delta', item_id: item.id, output_index: i, delta: d }));
      if (opt(0.5)) out.push(sse('response.function_call_arguments.done', { type: 'response.function_call_arguments.done', item_id: item.id, output_index: i, arguments: args }));
      out.push(sse('response.output_item.done', { type: 'response.output_item.done', output_index: i, item: { ...item, status: 'completed', arguments: opt(0.7) ? args : '' } }));
    }
  }
  const response = { status: r.pick(['completed', 'completed', 'incomplete']) };
  if (opt(0.7)) response.id = 'resp_1';
  if (response.status === 'incomplete' && opt(0.7)) response.incomplete_details = { reason: r.pick(['max_output_tokens', 'content_filter']) };
  if (opt(0.7)) response.usage = { input_tokens: 9, output_tokens: 4, total_tokens: 13, ...(opt(0.5) ? { input_tokens_details: { cached_tokens: 2 } } : {}) };
  out.push(sse(`response.${response.status}`, { type: `response.${response.status}`, response }));
  return { body: out.join(''), calls };
}

/** An Anthropic Messages stream: blocks of each kind, usage and stop reason optional. */
function anthropic(r, noCalls = false) {
  const out = [];
  const opt = (p) => r.chance(p);
  const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null };
  // Always with usage: without it pi-ai fails the stream, where this package goes on (a test
  // of its own below).
  message.usage = { input_tokens: 12, output_tokens: 1, ...(opt(0.5) ? { cache_read_input_tokens: 3, cache_creation_input_tokens: 0 } : {}) };
  out.push(sse('message_start', { type: 'message_start', message }));
  const n = 1 + r.int(3);
  let calls = 0;
  for (let i = 0; i < n; i++) {
    const kind = r.pick(noCalls ? ['text', 'thinking', 'redacted'] : ['text', 'text', 'thinking', 'tool_use', 'redacted']);
    if (kind === 'redacted') {
      out.push(sse('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'redacted_thinking', data: 'opaque' } }));
    } else if (kind === 'text') {
      if (opt(0.2)) out.push(sse('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: '' } }));
      out.push(sse('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'text', text: '' } }));
      for (const d of pieces(r, r.pick(TEXTS))) out.push(sse('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'text_delta', text: d } }));
    } else if (kind === 'thinking') {
      out.push(sse('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'thinking', thinking: '', ...(opt(0.5) ? { signature: '' } : {}) } }));
      for (const d of pieces(r, r.pick(TEXTS))) out.push(sse('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'thinking_delta', thinking: d } }));
      if (opt(0.6)) out.push(sse('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'signature_delta', signature: 'sig' } }));
    } else {
      calls += 1;
      out.push(sse('content_block_start', { type: 'content_block_start', index: i, content_block: { type: 'tool_use', id: `toolu_${i}`, name: 'read', input: {} } }));
      for (const d of pieces(r, JSON.stringify(r.pick(ARGS)))) out.push(sse('content_block_delta', { type: 'content_block_delta', index: i, delta: { type: 'input_json_delta', partial_json: d } }));
    }
    if (opt(0.3)) out.push(sse('ping', { type: 'ping' }));
    out.push(sse('content_block_stop', { type: 'content_block_stop', index: i }));
  }
  const delta = { type: 'message_delta', delta: { stop_reason: calls > 0 ? 'tool_use' : r.pick(['end_turn', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal']), stop_sequence: null } };
  if (opt(0.8)) delta.usage = { output_tokens: 7 };
  out.push(sse('message_delta', delta));
  out.push(sse('message_stop', { type: 'message_stop' }));
  return { body: out.join(''), calls };
}

/** A Gemini stream: chunks of parts, finish reason and usage on the last or left out. */
function gemini(r, noCalls = false) {
  const out = [];
  const opt = (p) => r.chance(p);
  const parts = [];
  let calls = 0;
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const kind = r.pick(noCalls ? ['text', 'thought'] : ['text', 'text', 'thought', 'call']);
    if (kind === 'call') {
      calls += 1;
      parts.push([{ functionCall: { ...(opt(0.6) ? { id: `fc_${i}` } : {}), name: 'read', args: r.pick(ARGS) }, ...(opt(0.3) ? { thoughtSignature: 'c2ln' } : {}) }]);
    } else {
      parts.push(pieces(r, r.pick(TEXTS)).map((t) => ({ text: t, ...(kind === 'thought' ? { thought: true } : {}), ...(opt(0.1) ? { thoughtSignature: 'dHh0' } : {}) })));
    }
  }
  // One part per chunk, or several.
  const flat = parts.flat();
  const chunks = [];
  for (let i = 0; i < flat.length;) {
    const k = opt(0.3) ? 1 + r.int(3) : 1;
    chunks.push(flat.slice(i, i + k));
    i += k;
  }
  chunks.forEach((ps, i) => {
    const last = i === chunks.length - 1;
    const candidate = { content: { parts: ps, role: 'model' }, ...(opt(0.3) ? { index: 0 } : {}) };
    if (last && opt(0.85)) candidate.finishReason = r.pick(['STOP', 'STOP', 'MAX_TOKENS', 'SAFETY', 'MALFORMED_FUNCTION_CALL']);
    const chunk = { candidates: [candidate] };
    if ((last || opt(0.2)) && opt(0.7)) chunk.usageMetadata = { promptTokenCount: 8, candidatesTokenCount: 3, totalTokenCount: 11, ...(opt(0.4) ? { thoughtsTokenCount: 2 } : {}) };
    if (opt(0.3)) chunk.modelVersion = 'gemini-2.5-flash';
    out.push(sse(undefined, chunk));
  });
  return { body: out.join(''), calls };
}

/** A Chat Completions stream: text, reasoning (under each field name servers use) and
 * parallel tool calls with interleaved argument pieces; the chunk envelope, the role chunk,
 * the usage chunk and `[DONE]` each optional. */
function completions(r, noCalls = false, details = false) {
  const out = [];
  const opt = (p) => r.chance(p);
  const head = () => (opt(0.6) ? { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' } : {});
  const chunk = (delta, extra = {}) => out.push(`data: ${JSON.stringify({ ...head(), choices: [{ index: 0, delta, ...(opt(0.5) ? { finish_reason: null } : {}), ...extra }] })}\n\n`);
  if (opt(0.7)) chunk({ role: 'assistant', ...(opt(0.5) ? { content: opt(0.5) ? '' : null } : {}) });
  let calls = 0;
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const kind = r.pick([...(noCalls ? ['text', 'reasoning'] : ['text', 'text', 'reasoning', 'calls']), ...(details ? ['details', 'details'] : [])]);
    if (kind === 'details') {
      // OpenRouter's reasoning_details: text and summary pieces (merged by type), encrypted
      // entries, optional common fields, malformed entries (skipped), the reasoning text
      // beside them or not.
      for (let j = 0, m = 1 + r.int(4); j < m; j++) {
        const common = () => ({ ...(opt(0.4) ? { id: r.pick([null, 'rd_1', 'rd_2']) } : {}), ...(opt(0.4) ? { format: r.pick(['openai-responses-v1', '', 'anthropic-claude-v1']) } : {}), ...(opt(0.4) ? { index: r.pick([0, 1]) } : {}) });
        const text = r.pick(TEXTS).slice(0, 1 + r.int(6));
        const detail = r.pick([
          () => ({ type: 'reasoning.text', text, ...(opt(0.4) ? { signature: r.pick([null, '', 'sig_a', 'sig_b']) } : {}), ...common() }),
          () => ({ type: 'reasoning.text', text, ...common() }),
          () => ({ type: 'reasoning.summary', summary: text, ...common() }),
          () => ({ type: 'reasoning.encrypted', data: 'ZW5jcnlwdGVk', ...common() }),
          () => r.pick([{ type: 'reasoning.text', text: 5 }, { type: 'reasoning.other', text: 'x' }, { type: 'reasoning.summary', summary: 'x', format: null }, { type: 'reasoning.text', text: 'x', id: 7 }, 'str', null, [1]]),
        ])();
        chunk({ ...(opt(0.4) ? { reasoning: text } : {}), reasoning_details: opt(0.2) ? [detail, detail] : [detail] });
      }
    } else if (kind === 'text') {
      for (const d of pieces(r, r.pick(TEXTS))) chunk({ content: d });
      if (opt(0.1)) chunk({ content: '' });
    } else if (kind === 'reasoning') {
      const field = r.pick(['reasoning_content', 'reasoning', 'reasoning_text']);
      for (const d of pieces(r, r.pick(TEXTS))) chunk({ [field]: d });
    } else {
      const repeatHead = opt(0.3);
      const streams = [];
      for (let j = 0, k = 1 + r.int(2); j < k; j++, calls++) {
        streams.push({ index: calls, rest: pieces(r, JSON.stringify(r.pick(ARGS))), started: false });
      }
      if (opt(0.15)) {
        // Every call whole in one chunk (some servers), without an index when alone.
        const noIndex = streams.length === 1 && opt(0.5);
        chunk({ tool_calls: streams.map((c) => ({ ...(noIndex ? {} : { index: c.index }), id: `call_${c.index}`, type: 'function', function: { name: 'read', arguments: c.rest.join('') } })) });
        continue;
      }
      for (let live = streams; live.length > 0; live = streams.filter((x) => !x.started || x.rest.length > 0)) {
        const c = r.pick(live);
        if (!c.started) {
          c.started = true;
          const args = opt(0.3) ? c.rest.shift() ?? '' : '';
          chunk({ ...(opt(0.3) ? { content: null } : {}), tool_calls: [{ index: c.index, id: `call_${c.index}`, type: 'function', function: { name: 'read', arguments: args } }] });
        } else if (repeatHead) {
          // Some servers repeat the call's id, type and name in every piece.
          chunk({ tool_calls: [{ index: c.index, id: `call_${c.index}`, type: 'function', function: { name: 'read', arguments: c.rest.shift() } }] });
        } else {
          chunk({ tool_calls: [{ index: c.index, function: { arguments: c.rest.shift() } }] });
        }
        if (opt(0.1)) out.push(`data: ${JSON.stringify({ ...head(), choices: [] })}\n\n`);
      }
    }
  }
  const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13, ...(opt(0.4) ? { prompt_tokens_details: { cached_tokens: 2 } } : {}), ...(opt(0.3) ? { completion_tokens_details: { reasoning_tokens: 1 } } : {}) };
  const finish = calls > 0 ? r.pick(['tool_calls', 'tool_calls', 'stop', 'function_call']) : r.pick(['stop', 'stop', 'length', 'content_filter', 'eos']);
  // The finish reason with a last piece of text, with the usage, or alone.
  const last = opt(0.2) && !calls ? { content: '.' } : {};
  const withUsage = opt(0.2);
  if (withUsage) out.push(`data: ${JSON.stringify({ ...head(), choices: [{ index: 0, delta: last, finish_reason: finish }], usage })}\n\n`);
  else chunk(last, { finish_reason: finish });
  if (!withUsage && opt(0.6)) out.push(`data: ${JSON.stringify({ ...head(), choices: [], usage })}\n\n`);
  if (opt(0.8)) out.push('data: [DONE]\n\n');
  return { body: out.join(''), calls };
}

/** Tool call ids Gemini left out are made from the clock by both; compared by shape. */
const GENERATED = /^[a-z_]*_\d{13}_\d+$/;
const generatedIds = (v) => JSON.parse(JSON.stringify(v, (k, x) => (typeof x === 'string' && GENERATED.test(x) ? 'GENERATED-ID' : x)));

/** The path of the first difference between two JSON values, with both sides there. */
function firstDifference(a, b, path = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: ours ${JSON.stringify(a)?.slice(0, 400)} | pi ${JSON.stringify(b)?.slice(0, 400)}`;
}

const APIS = [
  { name: 'completions-openrouter', make: (r, noCalls) => completions(r, noCalls, true), h: harness({ fixtures: new URL('../fixtures/openai-completions/', import.meta.url), provider: 'openrouter', key: KEY, basePath: '/api/v1' }), model: 'openai/gpt-4o-mini' },
  { name: 'completions', make: completions, h: harness({ fixtures: new URL('../fixtures/openai-completions/', import.meta.url), provider: 'groq', key: KEY, basePath: '/openai/v1' }), model: 'llama-3.3-70b-versatile' },
  { name: 'responses', make: responses, h: harness({ fixtures: new URL('../fixtures/openai-responses/', import.meta.url), provider: 'openai', key: KEY, basePath: '/v1' }), model: 'gpt-5-mini' },
  { name: 'anthropic', make: anthropic, h: harness({ fixtures: new URL('../fixtures/anthropic/', import.meta.url), provider: 'anthropic', key: KEY, basePath: '' }), model: 'claude-sonnet-4-5' },
  { name: 'gemini', make: gemini, h: harness({ fixtures: new URL('../fixtures/google/', import.meta.url), provider: 'google', key: KEY, basePath: '/v1beta' }), model: 'gemini-2.5-flash' },
];
after(() => Promise.all(APIS.map((a) => a.h.close())));

for (const api of APIS) {
  test(`provider shapes: ${COUNT} generated ${api.name} streams, minimal and full, give pi-ai's events, messages and requests`, async () => {
    const failures = [];
    let calls = 0;
    for (let seed = ONLY ?? 1; seed <= (ONLY ?? COUNT) && failures.length < 3; seed++) {
      const r = rng(seed * 7919 + api.name.length);
      const first = api.make(r);
      // The answer after the tool results has no calls, so the run ends.
      const second = api.make(r, true);
      calls += first.calls;
      const bodies = [first.body, second.body];
      const theirs = generatedIds(await api.h.runWith(piStreamSimple, bodies, { modelId: api.model }));
      // Ours as a stream function, and as the loop's default stream (the built-in provider
      // inside the loop, whose updates reach the sink a network chunk at a time).
      for (const [how, streamFn] of [['streamSimple', streamSimple], ['default stream', undefined]]) {
        const ours = generatedIds(await api.h.runWith(streamFn, bodies, { modelId: api.model }));
        try {
          assert.deepEqual(ours.events, theirs.events);
          // As JSON text: key order counts (a message is stored and replayed as it serialises).
          assert.equal(JSON.stringify(ours.messages), JSON.stringify(theirs.messages));
          assert.equal(JSON.stringify(ours.requests.map((q) => q.body)), JSON.stringify(theirs.requests.map((q) => q.body)));
        } catch {
          if (ONLY) console.log(JSON.stringify({ body: first.body, ours: ours.messages, pi: theirs.messages }, null, 1));
          failures.push(`seed ${seed} (${how}): ${firstDifference(ours, theirs)}`);
        }
      }
    }
    console.log(`provider shapes ${api.name}: ${COUNT} streams, ${calls} tool calls in first responses`);
    assert.deepEqual(failures, []);
  });
}

test('provider shapes: an Anthropic message_start without usage (some compatible servers) streams on; pi-ai fails the stream reading it', async () => {
  const h = APIS.find((a) => a.name === 'anthropic').h;
  const body = [
    sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Still here.' } }),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
    sse('message_stop', { type: 'message_stop' }),
  ].join('');
  const ours = await h.runWith(streamSimple, [body], { modelId: 'claude-sonnet-4-5' });
  const theirs = await h.runWith(piStreamSimple, [body], { modelId: 'claude-sonnet-4-5' });
  const answer = (r) => r.messages.find((m) => m.role === 'assistant');
  assert.equal(answer(ours).stopReason, 'stop');
  assert.deepEqual(answer(ours).content, [{ type: 'text', text: 'Still here.' }]);
  assert.equal(answer(ours).usage.output, 3);
  assert.equal(answer(theirs).stopReason, 'error');
  assert.match(answer(theirs).errorMessage, /input_tokens/);
});
