// Seeded streamProxy bodies for the fuzz suite: a random well-formed proxy event stream
// (text, thinking and tool-call blocks with Unicode deltas and JSON arguments split
// anywhere), optionally damaged by one hostile mutation, cut into random byte chunks.
// `invariants()` lists what must hold for any body; pi-agent-core breaks some of them.
import { rng } from './scenario.mjs';

/** An integer in [lo, hi]. */
const between = (r, lo, hi) => lo + r.int(hi - lo + 1);

const TEXTS = ['Hello', ' wörld', ' 你好', ' 😀🎉', ' "quoted"', ' back\\slash', ' tab\tand\nnewline', ' ∑x²', '', ' e\u0301'];
const VALUES = [0, -1.5, 1e21, 'Zürich', '😀', 'line\nbreak', true, false, null, [], {}, [1, [2, { deep: '東京' }]], { a: { b: { c: 'd' } } }];

export const USAGE = { input: 12, output: 7, cacheRead: 0, cacheWrite: 0, totalTokens: 19, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } };

/** Splits `text` into 1..4 random pieces (some empty). */
function split(r, text) {
  const out = [];
  let rest = text;
  while (rest.length > 0) {
    const n = between(r, 0, Math.min(rest.length, 12));
    out.push(rest.slice(0, n));
    rest = rest.slice(n);
  }
  return out.length === 0 ? [''] : out;
}

/** A well-formed event list with `partial` stripped, as pi's proxy server sends it. */
export function wellFormed(r) {
  const events = [{ type: 'start' }];
  const blocks = between(r, 0, 4);
  let calls = 0;
  for (let i = 0; i < blocks; i++) {
    const kind = r.pick(['text', 'thinking', 'toolcall']);
    if (kind === 'toolcall') {
      calls += 1;
      const args = {};
      for (let k = between(r, 0, 4); k > 0; k--) {
        // An own `__proto__` member too, as JSON.parse makes one.
        Object.defineProperty(args, r.pick(['city', 'n', 'q', 'nested', '__proto__', '']), { value: r.pick(VALUES), enumerable: true, writable: true, configurable: true });
      }
      const id = `call_${i}`;
      const name = r.pick(['lookup', 'calc']);
      events.push({ type: 'toolcall_start', contentIndex: i, id, toolName: name });
      for (const delta of split(r, JSON.stringify(args))) events.push({ type: 'toolcall_delta', contentIndex: i, delta });
      events.push({ type: 'toolcall_end', contentIndex: i, toolCall: { type: 'toolCall', id, name, arguments: args } });
    } else {
      events.push({ type: `${kind}_start`, contentIndex: i });
      for (let k = between(r, 0, 4); k > 0; k--) events.push({ type: `${kind}_delta`, contentIndex: i, delta: r.pick(TEXTS) });
      events.push({ type: `${kind}_end`, contentIndex: i, ...(r.chance(0.5) ? { contentSignature: `sig_${i}` } : {}) });
    }
  }
  if (r.chance(0.15)) events.push({ type: 'error', reason: r.pick(['error', 'aborted']), errorMessage: 'upstream said no', usage: USAGE });
  else events.push({ type: 'done', reason: calls > 0 ? 'toolUse' : r.pick(['stop', 'length']), usage: USAGE, ...(r.chance(0.3) ? { providerThinkingLevel: 'low' } : {}) });
  return events;
}

const lines = (events, { eol = '\n', prefix = 'data: ' } = {}) => events.map((e) => `${prefix}${typeof e === 'string' ? e : JSON.stringify(e)}${eol}${eol}`).join('');

/**
 * Mutations. `piSane`: pi's events must equal ours exactly. `same`: ours must equal ours on
 * the undamaged body (a form pi does not read).
 */
export const MUTATIONS = {
  none: { piSane: true, make: (r, ev) => lines(ev) },
  crlf: { piSane: true, make: (r, ev) => lines(ev, { eol: '\r\n' }) },
  comments: {
    piSane: true,
    make: (r, ev) => ev.map((e) => `${r.pick([': keep-alive\n', 'event: message\n', 'id: 7\n', '\n', ''])}data: ${JSON.stringify(e)}\n\n`).join(''),
  },
  crOnly: { same: true, make: (r, ev) => lines(ev, { eol: '\r' }) },
  noSpace: { same: true, make: (r, ev) => lines(ev, { prefix: 'data:' }) },
  truncate: { make: (r, ev) => { const t = lines(ev); return t.slice(0, between(r, 0, t.length - 1)); } },
  garbage: { make: (r, ev) => { const c = ev.slice(); c.splice(between(r, 1, c.length - 1), 0, r.pick(['{"type":', 'not json', '[1,2', '{"type":"text_delta"}}'])); return lines(c); } },
  dropLine: { make: (r, ev) => { const c = ev.slice(); c.splice(between(r, 0, c.length - 1), 1); return lines(c); } },
  duplicate: { make: (r, ev) => { const c = ev.slice(); const i = between(r, 0, c.length - 1); c.splice(i, 0, c[i]); return lines(c); } },
  badIndex: {
    make: (r, ev) => {
      const indexed = ev.flatMap((e, i) => ('contentIndex' in e ? [i] : []));
      if (indexed.length === 0) return lines(ev);
      const c = ev.slice();
      const j = r.pick(indexed);
      c[j] = { ...c[j], contentIndex: c[j].contentIndex + r.pick([1, 3, -1, 0.5]) };
      return lines(c);
    },
  },
  noUsage: { make: (r, ev) => lines(ev.map((e) => (e.type === 'done' || e.type === 'error' ? { ...e, usage: undefined } : e))) },
  badDelta: { make: (r, ev) => lines(ev.map((e) => (e.type?.endsWith('_delta') && r.chance(0.5) ? { ...e, delta: r.pick([42, null, undefined, { a: 1 }]) } : e))) },
  afterDone: { make: (r, ev) => lines(ev) + r.pick(['data: garbage\n\n', `data: ${JSON.stringify({ type: 'text_delta', contentIndex: 0, delta: 'late' })}\n\n`, `data: ${JSON.stringify({ type: 'error', reason: 'error', errorMessage: 'late' })}\n\n`]) },
  notObject: { make: (r, ev) => { const c = ev.slice(); c.splice(between(r, 1, c.length - 1), 0, r.pick(['null', '42', '"str"', '[]'])); return lines(c); } },
  noTerminal: { make: (r, ev) => lines(ev.slice(0, -1)) },
};

/** Random chunking of `bytes`: sizes 1..40, or one chunk, or every byte alone. */
export function chunk(r, bytes) {
  const mode = between(r, 0, 5);
  if (mode === 0) return [bytes];
  const out = [];
  for (let i = 0; i < bytes.length;) {
    const n = mode === 1 ? 1 : between(r, 1, 40);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

export function fuzzCase(seed) {
  const r = rng(seed);
  const events = wellFormed(r);
  const name = r.chance(0.35) ? 'none' : r.pick(Object.keys(MUTATIONS));
  const text = MUTATIONS[name].make(r, events);
  const bytes = new TextEncoder().encode(text);
  const chunks = chunk(r, bytes);
  // A transport fault for a third run: the body fails or stalls at a chunk, or the
  // consumer aborts at an event.
  const kind = r.pick(['error', 'stall', 'abort']);
  const fault = { kind, at: kind === 'abort' ? r.int(events.length + 1) : r.int(chunks.length + 1) };
  return { seed, name, mutation: MUTATIONS[name], events, text, chunks, otherChunks: chunk(r, bytes), fault };
}

const BLOCK_OK = {
  text: (b) => typeof b.text === 'string',
  thinking: (b) => typeof b.thinking === 'string',
  toolCall: (b) => b.arguments !== null && typeof b.arguments === 'object' && !Array.isArray(b.arguments),
};

/**
 * What must hold whatever the body: one terminal event, last; a final message that is the
 * terminal event's and is not changed afterwards; a valid stopReason and an errorMessage on
 * failure; no holes or malformed blocks; usage present; the token nowhere. Returns the
 * broken rules (empty when all hold).
 */
export function invariants(run, token) {
  const broken = [];
  if (run.threw) return [`threw: ${run.threw}`];
  if (run.hung) return ['hung'];
  const terminal = run.pushed.filter((e) => e.type === 'done' || e.type === 'error');
  if (terminal.length !== 1) broken.push(`${terminal.length} terminal events`);
  const last = run.pushed.at(-1);
  if (last?.type !== 'done' && last?.type !== 'error') broken.push('the last event is not terminal');
  const message = run.result;
  const atEnd = last?.type === 'done' ? last.message : last?.error;
  if (JSON.stringify(message) !== JSON.stringify(atEnd)) broken.push('the final message changed after its terminal event');
  if (last?.type === 'done' && !['stop', 'length', 'toolUse'].includes(message?.stopReason)) broken.push(`done with stopReason ${message?.stopReason}`);
  if (last?.type === 'error') {
    if (!['error', 'aborted'].includes(message?.stopReason)) broken.push(`error with stopReason ${message?.stopReason}`);
    if (typeof message?.errorMessage !== 'string' || message.errorMessage === '') broken.push('error without errorMessage');
  }
  const content = message?.content ?? [];
  for (let i = 0; i < content.length; i++) {
    const b = content[i];
    if (b === undefined || b === null) broken.push(`hole at content[${i}]`);
    else if (!BLOCK_OK[b.type]?.(b)) broken.push(`malformed block ${JSON.stringify(b).slice(0, 80)}`);
  }
  if (typeof message?.usage?.input !== 'number' || typeof message?.usage?.cost?.total !== 'number') broken.push('usage missing');
  if (JSON.stringify(run.pushed).includes(token)) broken.push('token leaked');
  if (run.consumed.length !== run.pushed.length) broken.push('the consumer saw a different number of events');
  if (run.pushed.some((e) => e.type.endsWith('_delta') && typeof e.delta !== 'string')) broken.push('a delta that is not a string');
  return broken;
}

/** Random tool-argument JSON text, sometimes damaged (stray or missing characters, bad
 * escapes, cut literals), for comparing partial arguments with pi-ai's parser. */
export function argumentText(seed) {
  const r = rng(seed);
  const value = (depth) => {
    const roll = r.int(10);
    if (depth > 3 || roll < 4) return r.pick([1, -2.5, 1e21, 'x', 'hé "q" \\ / \n 😀', true, false, null, 0, '\u0001', 123456789, 'a/b']);
    if (roll < 7) {
      const o = {};
      for (let n = r.int(5); n > 0; n--) Object.defineProperty(o, r.pick(['a', 'b', '__proto__', `k${n}`, '']), { value: value(depth + 1), enumerable: true, writable: true, configurable: true });
      return o;
    }
    return Array.from({ length: r.int(5) }, () => value(depth + 1));
  };
  let text = JSON.stringify({ v: value(0) }).replaceAll('a/b', r.chance(0.5) ? 'a\\/b' : 'a/b');
  if (r.chance(0.5)) {
    const bits = ['"', '\\', '{', '}', '[', ']', ',', ':', 'x', 'tru', '1e', '\\u12', '\\q', ' ', '-', '.', 'nul', '\\u00e9', '\\/'];
    for (let n = 1 + r.int(4); n > 0; n--) {
      const at = r.int(text.length + 1);
      text = r.chance(0.5) ? text.slice(0, at) + r.pick(bits) + text.slice(at) : text.slice(0, at) + text.slice(at + 1 + r.int(3));
    }
  }
  const deltas = [];
  for (let i = 0; i < text.length;) {
    const n = r.chance(0.2) ? 1 + r.int(40) : 1 + r.int(4);
    deltas.push(text.slice(i, i + n));
    i += n;
  }
  return { text, deltas };
}
