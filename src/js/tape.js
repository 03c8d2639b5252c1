// The recording side of a cassette (record, replay and fork: not in pi; docs/record-replay.md).
// A Recorder is handed to a run (`config.record`, the `Agent`'s `record` option); the loop
// (loop.js `startRun`) calls `begin` once per run and routes every input the run does not decide
// itself through what `begin` returns: responses, tool calls, queue polls, the clock and an abort.
// Kept apart from cassette.js (replay and fork) so the main entry carries only this part.

import { envApiKey } from './env-keys.js';
import { UNTRACKED, STEP_READERS } from './loop.js';

/** The format of cassettes. */
export const CASSETTE_VERSION = 1;

/** `Recorder`'s way to write its header before any run (cassette.js `fork`). */
export const HEADER = Symbol('header');

/** `{ message }` of an Error (or `{ thrown }`, the text pi's loop makes of any other value). */
export function thrownOf(error) {
  try {
    if (error instanceof Error) return { error: { message: String(error.message) } };
    return { thrown: String(error) };
  } catch {
    return { thrown: 'an unreadable value' };
  }
}

/** `JSON.stringify(value)`, or `undefined` with why in `why.text` when JSON cannot hold it. */
function jsonOf(value, why) {
  try {
    return JSON.stringify(value);
  } catch (error) {
    why.text = error instanceof Error ? error.message : String(error);
    return undefined;
  }
}

/** A position as the cassette holds it: its model without `headers`, which may carry a
 * gateway's token (a fork or a replay takes the model with its headers from its options). */
function keyFree(position) {
  const model = position?.model;
  if (model === null || typeof model !== 'object' || !('headers' in model)) return position;
  const { headers, ...rest } = model;
  return { ...position, model: rest };
}

/** Each message's JSON text, made once per object (a message is not changed once the loop
 * has it; one that is keeps the text it had when first written). */
const TEXTS = new WeakMap();

/** A message's JSON text (`null` for one JSON cannot hold). */
function textOf(message) {
  if (message === null || typeof message !== 'object') return jsonOf(message, {}) ?? 'null';
  let text = TEXTS.get(message);
  if (text === undefined) {
    text = jsonOf(message, {}) ?? 'null';
    TEXTS.set(message, text);
  }
  return text;
}

/** A copy two levels deep: what a partial's field (its usage) is compared against next time. */
function copy2(value) {
  if (value === null || typeof value !== 'object') return value;
  const out = Array.isArray(value) ? [] : {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    out[key] = v !== null && typeof v === 'object' ? (Array.isArray(v) ? v.slice() : { ...v }) : v;
  }
  return out;
}

/** Whether `value` still equals its `copy2`, two levels deep (deeper objects by identity). */
function same2(value, copy) {
  if (value === copy) return true;
  if (value === null || copy === null || typeof value !== 'object' || typeof copy !== 'object') return false;
  let n = 0;
  for (const key in value) {
    n++;
    const a = value[key], b = copy[key];
    if (a === b) continue;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
    let m = 0;
    for (const k in a) {
      m++;
      if (a[k] !== b[k]) return false;
    }
    for (const k in b) m--;
    if (m !== 0) return false;
  }
  for (const key in copy) n--;
  return n === 0;
}

/** The text field each streamed delta appends to. */
const GROWS = { text_delta: 'text', thinking_delta: 'thinking' };

/** How a delta changed its block's text (PartialDiff.grown): grown by itself, or not at all. */
const GREW = 1;
const SAME = 2;

/** What of a partial message a stream changes between two deltas, as it is now: pi-ai's
 * streams add fields (a response id, the duration and an error message at the end: its key
 * count), set the stop reason, and update the usage in place. Compared at each delta by
 * `samePi`, in a few loads (a field a partial does not have is slow to look up). */
function piState(p) {
  let keys = 0;
  for (const _ in p) keys++;
  const u = p.usage;
  const c = u?.cost;
  return {
    keys, stopReason: p.stopReason, usage: u, input: u?.input, output: u?.output, cacheRead: u?.cacheRead, cacheWrite: u?.cacheWrite, totalTokens: u?.totalTokens,
    cost: c, costInput: c?.input, costOutput: c?.output, costCacheRead: c?.cacheRead, costCacheWrite: c?.cacheWrite, costTotal: c?.total,
  };
}

/** Whether `p`'s `piState` is `s`. */
function samePi(p, s) {
  let keys = 0;
  for (const _ in p) keys++;
  const u = p.usage;
  if (keys !== s.keys || p.stopReason !== s.stopReason || u !== s.usage) return false;
  if (u === null || typeof u !== 'object') return true;
  const c = u.cost;
  return u.input === s.input && u.output === s.output && u.cacheRead === s.cacheRead && u.cacheWrite === s.cacheWrite && u.totalTokens === s.totalTokens &&
    c === s.cost && (c === null || typeof c !== 'object' ||
      (c.input === s.costInput && c.output === s.costOutput && c.cacheRead === s.costCacheRead && c.cacheWrite === s.costCacheWrite && c.total === s.costTotal));
}

/** Every this many streamed deltas in a row, the partial is compared whole (PartialDiff). */
const WHOLE_EVERY = 256;

/** A block to write whole (PartialDiff). */
const WHOLE = Symbol('whole');

/** Whether the text `v` is `was` with `delta` appended. */
const grewBy = (v, was, delta) => typeof v === 'string' && typeof was === 'string' && typeof delta === 'string' && v.length === was.length + delta.length && v === was + delta;

/**
 * A streamed response's events, written compactly: each event's own fields, and its partial as
 * what changed since the last event (a delta's text is not written twice; a call that ended
 * is written whole). Linear in the response, and a few comparisons an event.
 */
class PartialDiff {
  #blocks = [];
  #partial;

  /** The event to write: `partial` becomes `p` (the changes), and a field that is the partial,
   * one of its blocks or an ended block's text, is written as a reference to it. An event with
   * no partial whose field is the partial streamed so far (a `done`'s message) has that field
   * written as a reference, and the partial's changes as `pp`. */
  encode(event) {
    this.#count(event);
    const out = {};
    let partial = event.partial;
    let own = true;
    const known = this.#partial;
    if (partial === undefined && known !== null && typeof known === 'object' && !('partial' in event)) {
      for (const key of Object.keys(event)) {
        if (event[key] === known) {
          partial = known;
          own = false;
          break;
        }
      }
    }
    const type = event.type;
    const field = type === 'text_end' ? 'text' : type === 'thinking_end' ? 'thinking' : undefined;
    for (const key of Object.keys(event)) {
      if (key === 'partial') continue;
      const v = event[key];
      if (partial != null && v === partial) out[key] = { $partial: 1 };
      else if (key === 'toolCall' && partial != null && Array.isArray(partial.content) && v === partial.content[event.contentIndex]) {
        out[key] = { $block: event.contentIndex };
      } else if (key === 'content' && field !== undefined && typeof v === 'string' && Array.isArray(partial?.content) && v === partial.content[event.contentIndex]?.[field]) {
        out[key] = { $text: [event.contentIndex, field] };
      } else out[key] = v;
    }
    if (partial !== null && typeof partial === 'object') out[own ? 'p' : 'pp'] = this.#diff(event, partial);
    else if (partial !== undefined) out.partial = partial;
    return out;
  }

  /** The partial of the last event. */
  get partial() {
    return this.#partial;
  }

  /** The changes to the partial since the last encode or view: what a listener sees when an
   * event is delivered (the stream may have gone on since the event was read); `undefined`
   * when nothing changed. */
  view() {
    const partial = this.#partial;
    if (partial === null || typeof partial !== 'object') return undefined;
    const p = this.#diff({ type: 'view' }, partial);
    return Object.keys(p).length === 0 ? undefined : p;
  }

  /** pi-ai's fields of the partial at the last whole comparison (`piState`). */
  #pi;

  /** Streamed deltas since the last whole comparison. */
  #sinceFull = 0;
  /**
   * The common case, told apart at a few comparisons and written by `Recorder.grow`: a text
   * or thinking delta with the same partial, fields and blocks as before, whose block's text
   * is as long as the text it had plus the delta (`GREW`), or is the very text it had (`SAME`:
   * the stream had gone on, its text whole already); `false` for any other event. The text
   * itself is not read (a text built by appending is not flattened at each delta): every
   * 256th delta, and any other event, is compared whole, the block's text against the text
   * before plus the deltas since. What
   * pi-ai's streams change in the partial is compared at each delta (`samePi`, and the last
   * block when the delta is not in it); so another change between two deltas (a stream's own:
   * to a block before the last, a field pi-ai does not change) is written at most 256 deltas
   * late.
   */
  grown(event) {
    const type = event.type;
    const field = type === 'text_delta' ? 'text' : type === 'thinking_delta' ? 'thinking' : undefined;
    if (field === undefined || this.#sinceFull >= WHOLE_EVERY) return false;
    const partial = event.partial;
    if (partial !== this.#partial || partial === null || typeof partial !== 'object') return false;
    const content = partial.content;
    const i = event.contentIndex;
    if (!Number.isInteger(i) || !Array.isArray(content) || content.length !== this.#contentLength) return false;
    const known = this.#blocks[i];
    if (known === undefined || known.block !== content[i] || !samePi(partial, this.#pi) || !this.#sameBlockBut(known.block, known, field)) return false;
    // A stream appends to its last block: read behind it (a thinking delta while the text
    // after it streams), that block is compared too.
    const last = content.length - 1;
    if (i !== last) {
      const lastKnown = this.#blocks[last];
      if (lastKnown === undefined || lastKnown.block !== content[last] || !this.#sameBlockBut(content[last], lastKnown, undefined)) return false;
    }
    const delta = event.delta, v = known.block[field], was = known.copy[field];
    if (typeof delta !== 'string' || typeof v !== 'string' || typeof was !== 'string') return false;
    // Grown by the delta: as long as the deltas read so far make it (a stream ahead of the
    // loop has appended deltas it has not read: then its growth since is not this delta);
    // or (the stream ahead, the text as it was) not at all.
    const same = v === was;
    const read = this.#read[i];
    if (!same && (read === undefined || v.length !== read + delta.length || v.length !== was.length + delta.length)) return false;
    let keys = 0;
    for (const _ in event) keys++;
    if (keys !== 4) return false;
    this.#sinceFull++;
    if (read !== undefined) this.#read[i] = read + delta.length;
    if (same) return SAME;
    known.copy[field] = was + delta;
    return GREW;
  }

  /** Whether a block is as last compared (`known`: its `#blocks` entry) but for the field a
   * delta grows (`grows`), by what pi-ai's streams change in a block of its type: its keys
   * (an `index` deleted at its end), a text or thinking (a new string), a signature, a call's
   * arguments (a new object at each delta, or one changed in place); any other block whole. */
  #sameBlockBut(block, known, grows) {
    const copy = known.copy;
    let keys = 0;
    for (const _ in block) keys++;
    if (keys !== known.keys.length) return false;
    switch (block.type) {
      case 'text':
        return (grows === 'text' || block.text === copy.text) && block.textSignature === copy.textSignature;
      case 'thinking':
        return (grows === 'thinking' || block.thinking === copy.thinking) && block.thinkingSignature === copy.thinkingSignature && block.redacted === copy.redacted;
      case 'toolCall':
        return block.arguments === known.args && same2(block.arguments, copy.arguments) && block.partialArgs === copy.partialArgs;
      default:
        return this.#blockChange(block, known, undefined, undefined, false) === undefined;
    }
  }

  /** How long each block's text is by the deltas read (from its `*_start`), where known. */
  #read = [];

  /** Counts a slow path's event in `#read`. */
  #count(event) {
    const type = event.type, i = event.contentIndex;
    if (!Number.isInteger(i) || i < 0) return;
    if (type === 'text_start' || type === 'thinking_start') this.#read[i] = 0;
    else if ((type === 'text_delta' || type === 'thinking_delta') && this.#read[i] !== undefined) {
      this.#read[i] = typeof event.delta === 'string' ? this.#read[i] + event.delta.length : undefined;
    }
  }

  #diff(event, partial) {
    const p = {};
    this.#sinceFull = 0;
    this.#pi = piState(partial);
    if (partial !== this.#partial) {
      // Another object: written whole.
      this.#partial = partial;
      this.#order = [];
      this.#values = [];
      this.#refs = [];
      this.#read = [];
      this.#blocks = [];
      this.#argText = [];
      this.#contentLength = -1;
      p.new = 1;
    }
    // The fields but `content`, compared in the order last seen; a field added, removed or
    // moved writes them all again. An object a field holds is written under `mut` when it is
    // the same object changed in place (a listener's copy of the partial, made before, holds
    // it and sees the change: a replay changes its own in place too), else under `set`.
    const order = this.#order, values = this.#values, refs = this.#refs;
    let j = 0, same = true, hasContent = false, changed;
    for (const key in partial) {
      if (key === 'content') {
        hasContent = true;
        continue;
      }
      if (order[j] !== key) {
        same = false;
        break;
      }
      const v = partial[key], was = values[j];
      j++;
      if (v === was) continue;
      const object = v !== null && typeof v === 'object', ref = refs[j - 1];
      if (object && v === ref) {
        if (same2(v, was)) continue;
        (p.mut ??= {})[key] = v;
      } else {
        // Replaced: the object before, if it was changed in place first, is changed so too.
        if (ref !== null && typeof ref === 'object' && !same2(ref, was)) (p.mut ??= {})[key] = ref;
        (p.set ??= {})[key] = v;
      }
      (changed ??= []).push(j - 1, v);
    }
    if (same && j === order.length) {
      // Taken as the last written only now: a field added, removed or moved writes them all.
      for (let c = 0; c < (changed?.length ?? 0); c += 2) {
        values[changed[c]] = copy2(changed[c + 1]);
        refs[changed[c]] = changed[c + 1];
      }
    } else {
      // Written again whole, in their order (`content` holds its place); an object that is
      // the one written before stays (under `mut` where it changed).
      const set = {};
      delete p.mut;
      const before = new Map(order.map((k, i) => [k, i]));
      const wasValues = values.slice(), wasRefs = refs.slice();
      order.length = 0;
      values.length = 0;
      refs.length = 0;
      for (const key of Object.keys(partial)) {
        const at = before.get(key);
        before.delete(key);
        if (key === 'content') {
          hasContent = true;
          if (p.new === 1) set.content = { $slot: 1 };
          continue;
        }
        const v = partial[key];
        order.push(key);
        values.push(copy2(v));
        refs.push(v);
        const ref = at === undefined ? undefined : wasRefs[at];
        const inPlace = ref !== null && typeof ref === 'object' && !same2(ref, wasValues[at]);
        if (v !== null && typeof v === 'object' && v === ref) {
          if (inPlace) (p.mut ??= {})[key] = v;
        } else {
          if (inPlace) (p.mut ??= {})[key] = ref;
          set[key] = v;
        }
      }
      before.delete('content');
      p.set = set;
      if (before.size > 0) p.del = [...before.keys()];
    }
    if (same && j === order.length && p.new === 1 && hasContent) (p.set ??= {}).content = { $slot: 1 };
    const content = partial.content;
    if (!Array.isArray(content)) {
      if (hasContent) p.content = content;
      this.#blocks = [];
      return p;
    }
    const type = event.type;
    // An ended call is written whole: its arguments as the stream parsed them last.
    const ended = type === 'toolcall_end';
    const at = event.contentIndex;
    const delta = typeof event.delta === 'string' ? event.delta : undefined;
    if (type === 'toolcall_delta' && delta !== undefined && Number.isInteger(at)) this.#argText[at] = (this.#argText[at] ?? 0) + delta.length;
    let blocks;
    for (let i = 0; i < content.length; i++) {
      const block = content[i];
      const known = this.#blocks[i];
      let change = WHOLE;
      if (known !== undefined && known.block === block && block !== null && typeof block === 'object' && !(ended && i === at)) {
        change = this.#blockChange(block, known, i === at ? GROWS[type] : undefined, delta, type === 'toolcall_delta' && i === at && (this.#argText[i] ?? 0) > ARGS_WHOLE);
        if (change === undefined) continue;
      }
      (blocks ??= []).push([i, change === WHOLE ? block : change]);
      this.#blocks[i] = { block, keys: block !== null && typeof block === 'object' ? Object.keys(block) : [], copy: copy2(block), args: block?.arguments };
    }
    if (this.#blocks.length > content.length) this.#blocks.length = content.length;
    if (blocks !== undefined) p.blocks = blocks;
    if (this.#contentLength !== content.length) p.length = content.length;
    this.#contentLength = content.length;
    return p;
  }

  /** How a block changed since `known`: `undefined` for not, `WHOLE` to write it whole, or its
   * changes (`grow`: the field the event's delta was appended to, `add`: text appended beyond
   * it, `put`: new arguments, `args`: arguments rebuilt from the deltas on replay). */
  #blockChange(block, known, grows, delta, longArgs) {
    const keys = known.keys, copy = known.copy;
    let j = 0, diff;
    for (const key in block) {
      if (keys[j++] !== key) return WHOLE;
      const v = block[key], was = copy[key];
      if (v === was) continue;
      if (v !== null && typeof v === 'object' && was !== null && typeof was === 'object' && same2(v, was)) continue;
      if (key === grows && grewBy(v, was, delta)) {
        (diff ??= {}).grow = key;
      } else if (typeof v === 'string' && typeof was === 'string' && v.length > was.length && v.startsWith(was)) {
        // Grown by more than this event's delta: the stream had gone on (events it pushed
        // and the loop has not read yet).
        ((diff ??= {}).add ??= {})[key] = v.slice(was.length);
      } else if (key === 'arguments' && longArgs) {
        // Long arguments are rebuilt on replay from the streamed text (its partial parse)
        // rather than written whole at each delta.
        (diff ??= {}).args = 1;
      } else if (key === 'arguments' && v !== null && typeof v === 'object') {
        ((diff ??= {}).put ??= {})[key] = v;
      } else return WHOLE;
    }
    return j === keys.length ? diff : WHOLE;
  }

  /** The partial's fields but `content`, in order, a copy of each value (`copy2`), and each
   * value itself. */
  #order = [];
  #values = [];
  #refs = [];
  #contentLength = -1;
  /** The length of each block's streamed argument text so far. */
  #argText = [];
}

/** Streamed deltas in a row that each grew the same block by themselves alone, or (not
 * `grew`) left it as it was: each one's line, made when the lines are read. */
class Grown {
  constructor(n, type, i, grew, deltas) {
    this.n = n;
    this.type = type;
    this.i = i;
    this.grew = grew;
    this.deltas = deltas;
  }

  line(delta) {
    return growLine(this.n, this.type, this.i, this.grew, delta);
  }
}

/** The line of one such delta. */
function growLine(n, type, i, grew, delta) {
  const p = grew ? `{"blocks":[[${i},{"grow":"${GROWS[type]}"}]]}` : '{}';
  return `{"type":"stream","n":${n},"event":{"type":"${type}","contentIndex":${i},"delta":${JSON.stringify(delta)},"p":${p}}}`;
}

/** `line` with each occurrence of `escaped` (a secret as a line holds it) written as `[redacted]`. */
const redact = (line, escaped) => (line.includes(escaped) ? line.split(escaped).join('[redacted]') : line);

/** The shortest value `secret` keeps out of a cassette. */
const MIN_SECRET = 12;

/** Up to this many characters of streamed arguments, a call's arguments are written whole
 * when they change; past it they are rebuilt on replay from the deltas. */
const ARGS_WHOLE = 4096;

/**
 * Records runs into a cassette: versioned JSON lines, append-only, each a record of one input
 * the runs took or one event boundary with the loop's position there. API keys the runs used
 * are written as `[redacted]`.
 */
export class Recorder {
  #lines = [];
  /** Records not written as text yet: a streamed event's (its fields are strings and numbers
   * that never change), made text when the lines are read. */
  #pending = [];
  #onLine;
  /** The secrets, each as JSON writes it inside a string. */
  #secrets = new Set();
  #kind;
  /** The order of every tool call's start, update and settle, and of aborts, across a run. */
  #seq = 0;
  #requests = 0;
  #known = [];
  #active = 0;

  /** `options.onLine(line)`: called with each line as it is written (to append it to storage).
   * `options.append`: the lines go on a cassette that has its header already (a new process
   * recording on where the last one stopped), so none is written; `options.append` names its
   * kind, `"agent"` or `"loop"`. */
  constructor(options) {
    const onLine = options?.onLine;
    if (onLine !== undefined && typeof onLine !== 'function') throw new TypeError('Recorder: onLine must be a function');
    const append = options?.append;
    if (append !== undefined && append !== 'agent' && append !== 'loop') throw new TypeError('Recorder: append must be "agent" or "loop"');
    this.#onLine = onLine;
    this.#kind = append;
  }

  /** The cassette's lines so far. */
  get lines() {
    this.#flush();
    return this.#lines.slice();
  }

  /** The cassette as text: one JSON value a line. */
  toString() {
    this.#flush();
    return this.#lines.length === 0 ? '' : `${this.#lines.join('\n')}\n`;
  }

  /** Keeps `value` (an API key) out of the cassette's lines: each occurrence is written as
   * `[redacted]` (in the lines made before too; not in those `onLine` was given already). A
   * value shorter than 12 characters is no secret (a placeholder such as "none" or "ollama")
   * and is left as it is. */
  secret(value) {
    if (typeof value !== 'string' || value.length < MIN_SECRET) return;
    // As it stands in a line: JSON-escaped.
    const escaped = JSON.stringify(value).slice(1, -1);
    if (this.#secrets.has(escaped)) return;
    this.#secrets.add(escaped);
    // Lines made before it was known are cut too (those given to `onLine` are out already).
    for (let i = 0; i < this.#lines.length; i++) this.#lines[i] = redact(this.#lines[i], escaped);
  }

  /** What `onLine` threw or rejected with, each as its message (the recording goes on). */
  failures = [];

  /** A pending entry as its line: a record, a record with JSON texts to add (`[record, raw]`),
   * or a line made already; with the secrets cut out. */
  #text(entry) {
    let line;
    try {
      if (typeof entry === 'string') line = entry;
      else if (Array.isArray(entry)) {
        line = JSON.stringify(entry[0]);
        // The key '' holds members to add as they are (a position's changes).
        for (const key of Object.keys(entry[1])) line = `${line.slice(0, -1)},${key === '' ? '' : `${JSON.stringify(key)}:`}${entry[1][key]}}`;
      } else line = JSON.stringify(entry);
    } catch (error) {
      // Never thrown into the run: the line says what could not be written.
      const record = Array.isArray(entry) ? entry[0] : entry;
      line = JSON.stringify({ type: 'unrecordable', of: String(record?.type), why: error instanceof Error ? error.message : String(error) });
    }
    for (const escaped of this.#secrets) line = redact(line, escaped);
    return line;
  }

  #flush() {
    if (this.#pending.length === 0) return;
    const pending = this.#pending;
    this.#pending = [];
    for (const entry of pending) {
      if (entry instanceof Grown) for (const delta of entry.deltas) this.#emitLine(this.#text(entry.line(delta)));
      else this.#emitLine(this.#text(entry));
    }
  }

  /** A streamed delta that grew its block by itself alone (`PartialDiff.grown`) in response
   * `n`: kept as the delta until the lines are read, with the deltas before it that did the
   * same to the same block. */
  grow(n, type, i, delta, grew) {
    const last = this.#pending[this.#pending.length - 1];
    if (last instanceof Grown && last.n === n && last.type === type && last.i === i && last.grew === grew) last.deltas.push(delta);
    else if (this.#onLine === undefined) this.#pending.push(new Grown(n, type, i, grew, [delta]));
    else this.#add(growLine(n, type, i, grew, delta));
  }

  #emitLine(line) {
    this.#lines.push(line);
    if (this.#onLine !== undefined) {
      const failed = (error) => this.failures.push(error instanceof Error ? error.message : String(error));
      try {
        const r = this.#onLine(line);
        // Not awaited (lines come in order, each at once); a rejection is kept, not thrown.
        if (r != null && typeof r.then === 'function') r.then(undefined, failed);
      } catch (error) {
        // The recording goes on; the line is in `lines`.
        failed(error);
      }
    }
  }

  #add(entry) {
    if (this.#onLine === undefined) {
      this.#pending.push(entry);
      return;
    }
    this.#flush();
    this.#emitLine(this.#text(entry));
  }

  /**
   * Writes a record. Its values must not change later: the line is made when the lines are
   * read (or at once, with `onLine`). `raw` holds JSON texts made now of values that may
   * change (a caller's objects), added to the line as they are (under `''`: members).
   */
  write(record, raw) {
    this.#add(raw === undefined ? record : [record, raw]);
  }

  /** Writes `record` with `value` (a caller's) under `key` as JSON text made now, or, where
   * JSON cannot hold it, with `unrecordable` saying why. */
  writeValue(record, key, value) {
    const why = {};
    const text = jsonOf(value, why);
    if (text === undefined) this.write({ ...record, unrecordable: why.text ?? 'undefined' });
    else this.write(record, { [key]: text });
  }

  /** Writes a record whose values may change later: its line is made now. */
  writeNow(record) {
    this.#add(JSON.stringify(record));
  }

  /** Events delivered across all runs recorded (a fork's `at` counts them so). */
  eventTotal = 0;

  /** A message queued on the agent (its `steer` or `followUp`), with the event it came after:
   * a fork knows what its queues held there. */
  queued(queue, message) {
    this.writeValue({ type: 'queue', queue, at: this.eventTotal }, 'message', message);
  }

  /** The next number in the run's order of tool calls' steps. */
  nextSeq() {
    return this.#seq++;
  }

  /** Each transcript message's place, by its JSON text: a request's message that is one of
   * them is written as `{ $m: place }`. */
  #places = new Map();

  /** The transcript as the cassette knows it, written as what stays and what is added. */
  messagesDelta(messages) {
    const texts = messages.map((m) => textOf(m));
    let keep = 0;
    while (keep < texts.length && keep < this.#known.length && texts[keep] === this.#known[keep]) keep++;
    this.#known = texts;
    this.#places = new Map(texts.map((t, i) => [t, i]));
    return { keep, add: texts.slice(keep).map((t) => JSON.parse(t)) };
  }

  /** Extends the known transcript by one message (a run's `message_end`). */
  knows(message) {
    const text = textOf(message);
    this.#places.set(text, this.#known.length);
    this.#known.push(text);
    return text;
  }

  /** A request's message as written: a reference to the transcript's, or itself. */
  written(text) {
    const place = this.#places.get(text);
    return place === undefined ? JSON.parse(text) : { $m: place };
  }

  /** The cassette's header, for runs of `kind`, when it has none yet (a fork that had nothing
   * to run gives a cassette all the same: cassette.js). */
  [HEADER](kind) {
    if (this.#kind !== undefined) return;
    this.#kind = kind;
    this.write({ type: 'cassette', version: CASSETTE_VERSION, kind });
  }

  /** Called by the loop for each run (loop.js `startRun`): the run's start, and the hooks that
   * route its inputs through this recorder. `run.kind`: `"agent"` or `"loop"`. */
  begin(run) {
    if (this.#active > 0) throw Object.assign(new Error('A Recorder records one run at a time'), { code: 'invalid_input' });
    if (this.#kind === undefined) this[HEADER](run.kind);
    else if (this.#kind !== run.kind) {
      throw Object.assign(new Error(`This Recorder records ${this.#kind} runs, not ${run.kind} runs`), { code: 'invalid_input' });
    }
    this.#seq = 0;
    this.#requests = 0;
    // The key the built-in stream would take from the environment for the run's model, known
    // before the first line (a prompt, a system prompt or a base URL may hold it).
    try {
      this.secret(envApiKey(run.config?.model?.provider).apiKey);
    } catch {
      // A model whose reads throw: the run meets it.
    }
    const line = { type: 'run', mode: run.mode };
    const context = run.context ?? {};
    if (context.systemPrompt !== undefined) line.systemPrompt = context.systemPrompt;
    line.messages = this.messagesDelta(Array.isArray(context.messages) ? context.messages : []);
    const reasoning = run.config?.reasoning;
    if (typeof reasoning === 'string') line.reasoning = reasoning;
    const raw = {};
    if (run.prompts !== undefined) raw.prompts = jsonOf(run.prompts, {}) ?? 'null';
    if (run.position !== undefined) raw.position = jsonOf(keyFree(run.position), {}) ?? 'null';
    // The whole model (a replay and a fork run with it), but its headers (a gateway's token).
    const model = run.config?.model;
    if (model != null && typeof model === 'object') raw.model = jsonOf(keyFree({ model }).model, {}) ?? 'null';
    this.write(line, raw);
    this.#active += 1;
    return this.taping(run);
  }

  /** The hooks of one run (replay's player makes its own). */
  taping(run) {
    return new Taping(this, run);
  }

  /** The number of the run's next request. */
  nextRequest() {
    return this.#requests++;
  }

  end() {
    this.#active = Math.max(0, this.#active - 1);
  }
}

/** The hooks of one recorded run (see `Recorder.begin`). Replay's player extends it. */
export class Taping {
  recorder;
  run;
  /** Events delivered so far. */
  events = 0;
  #onAbort;

  constructor(recorder, run) {
    this.recorder = recorder;
    this.run = run;
    const signal = run.signal;
    if (signal != null && typeof signal.addEventListener === 'function') {
      this.#onAbort = () => this.recorder.write({ type: 'abort', at: this.events, seq: this.recorder.nextSeq() });
      if (signal.aborted) this.#onAbort();
      else signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** The stream function the run uses: a JS one always (the built-in one too), so every
   * response passes through `openResponse`. */
  streamFn(resolved, streamSimple) {
    return resolved === 'builtin' ? streamSimple : resolved;
  }

  /** The response being read: `{ n, diff }` (recordStream). */
  reading;

  /** The run's emit: counts events; for each that moves the run, its `emit` line, and its
   * position (and a finished message) once its listeners settled. */
  emit(inner) {
    const rec = this.recorder;
    return (event) => {
      const index = this.events++;
      rec.eventTotal++;
      const type = event?.type;
      // A streamed or a running tool's update: delivered as it is (its record is the step
      // that made it).
      if (UNTRACKED.has(type)) return inner(event);
      // A message_update is delivered as its event is read; a message_start after the loop
      // awaited, when the stream may have gone on.
      const reading = this.reading;
      if (reading !== undefined && type === 'message_start') {
        const p = reading.diff.view();
        if (p !== undefined) rec.writeNow({ type: 'view', n: reading.n, p });
      }
      // Before an event that moves the run, its `emit` line: a process that dies while its
      // listeners run has delivered it. The position after the event is taken now, in the
      // events' order (the listeners of parallel calls' events may settle out of it); its
      // line is written once the listeners settled, in the events' order.
      rec.write({ type: 'emit', i: index });
      const slot = { index, type, members: this.#positionDelta(), message: type === 'message_end' ? rec.knows(event.message) : undefined, settled: false, written: true };
      this.#boundaries.push(slot);
      const r = inner(event);
      const write = () => this.#settled(slot, true);
      // A listener that rejects fails the run: no line for its event.
      const fail = () => this.#settled(slot, false);
      // The listeners' own Promise goes back to the loop (no step of the recording's to
      // await: a recorded run's timing is an unrecorded one's); this reaction runs first.
      if (r instanceof Promise) {
        r.then(write, fail);
        return r;
      }
      if (r != null && typeof r.then === 'function') return r.then((v) => (write(), v), (e) => (fail(), Promise.reject(e)));
      write();
      return r;
    };
  }

  /** Events delivered whose lines are not written yet, in the events' order. */
  #boundaries = [];

  /** An event's listeners settled: the lines of the events before it that settled too are
   * written, in order. */
  #settled(slot, written) {
    slot.settled = true;
    slot.written = written;
    const queue = this.#boundaries;
    while (queue.length > 0 && queue[0].settled) {
      const s = queue.shift();
      if (!s.written) continue;
      const raw = {};
      if (s.members !== undefined) raw[''] = s.members;
      if (s.message !== undefined) raw.message = s.message;
      this.recorder.write({ type: 'event', i: s.index, event: s.type }, raw);
    }
  }

  /** The last position written: its members' JSON texts (`"key":value`) in order, and
   * their keys (`"key"`). */
  #members = [];
  #keys = [];

  /** The position right before a tool runs (its call is then executing): a fork after this
   * point knows the call may have run. Written with the index of the last event. */
  executing() {
    const members = this.#positionDelta();
    if (members !== undefined) this.recorder.write({ type: 'position', i: this.events - 1 }, { '': members });
  }

  /** The position's changes since the last written, as a line's members (`"position"`,
   * `"grew"`, `"gone"`); `undefined` for none. The core writes the position a member a line
   * (`runPosition`), so a member is compared as the text it is. */
  #positionDelta() {
    const text = this.run.where?.(true);
    // `{` and `}` off, then a member a line (a line break is never inside JSON's text).
    const members = typeof text === 'string' && text.length > 2 ? text.slice(1, -1).split(',\n') : [];
    const before = this.#members, known = this.#keys;
    const keys = new Array(members.length);
    let changed = '', grew = '', moved = members.length !== before.length;
    for (let j = 0; j < members.length; j++) {
      const member = members[j];
      // The common case: the same member in the same place.
      if (member === before[j]) {
        keys[j] = known[j];
        continue;
      }
      const colon = member.indexOf('":');
      const key = (keys[j] = member.slice(0, colon + 1));
      let at = j;
      if (known[j] !== key) {
        moved = true;
        at = known.indexOf(key);
      }
      const was = at < 0 ? undefined : before[at];
      if (was === member) continue;
      // A list with items appended: `was` but its `]`, then a comma (none after `[`).
      if (was !== undefined && member.endsWith(']') && was.endsWith(']') && member.length > was.length && member.startsWith(was.slice(0, -1))) {
        const empty = was.endsWith('[]');
        if (empty || member[was.length - 1] === ',') {
          grew += `${grew === '' ? '' : ','}${key}:[${member.slice(empty ? was.length - 1 : was.length, -1)}]`;
          continue;
        }
      }
      // The model as the cassette holds it: without `headers` (a gateway's token).
      const written = key === '"model"' && member.includes('"headers"') ? `${key}:${JSON.stringify(keyFree({ model: JSON.parse(member.slice(colon + 2)) }).model)}` : member;
      changed += `${changed === '' ? '' : ','}${written}`;
    }
    const gone = moved ? known.filter((k) => !keys.includes(k)) : [];
    this.#members = members;
    this.#keys = keys;
    const parts = [];
    if (changed !== '') parts.push(`"position":{${changed}}`);
    if (grew !== '') parts.push(`"grew":{${grew}}`);
    if (gone.length > 0) parts.push(`"gone":[${gone.join(',')}]`);
    return parts.length > 0 ? parts.join(',') : undefined;
  }

  /** Routes the run's inputs through the recorder: `own` is the run's glue (pending.js). */
  glue(own) {
    const base = Object.getPrototypeOf(own);
    const inner = { openResponse: own.openResponse ?? base.openResponse, executeTool: own.executeTool, hook: own.hook, clock: own.clock };
    own.openResponse = (streamFn, model, context, options, emit) => this.openResponse(inner, streamFn, model, context, options, emit);
    own.executeTool = (tool, id, args, signal, onUpdate) => this.executeTool(inner, tool, id, args, signal, onUpdate);
    own.hook = (config, name) => this.hook(inner, config, name);
    own.clock = (kind) => this.clock(inner, kind);
  }

  /** The request as written: the model and the context, its messages (`texts`, as JSON) as
   * a delta of the last written request's. `commit()` makes them the ones the next request's
   * delta is taken from. */
  request(n, model, context) {
    const line = { type: 'request', n };
    if (model != null && typeof model === 'object') line.model = { provider: model.provider, id: model.id, api: model.api };
    if (context?.systemPrompt !== undefined) line.systemPrompt = context.systemPrompt;
    const messages = Array.isArray(context?.messages) ? context.messages : [];
    // The last request's messages that are the very same objects are kept unread; the rest are
    // compared as JSON text (each message's text made once).
    const { objects, texts: known } = this.#requestKnown;
    let keep = 0;
    while (keep < messages.length && keep < objects.length && messages[keep] === objects[keep]) keep++;
    const tail = messages.slice(keep).map((m) => textOf(m));
    let same = 0;
    while (same < tail.length && keep + same < known.length && tail[same] === known[keep + same]) same++;
    keep += same;
    const added = tail.slice(same);
    line.messages = { keep, add: added.map((t) => this.recorder.written(t)) };
    if (Array.isArray(context?.tools)) line.tools = context.tools.map((t) => t?.name);
    const texts = () => [...known.slice(0, keep), ...added];
    return { line, added, keep, texts, commit: () => (this.#requestKnown = { objects: messages.slice(), texts: texts() }) };
  }

  #requestKnown = { objects: [], texts: [] };

  openResponse(inner, streamFn, model, context, options, emit) {
    const rec = this.recorder;
    const n = rec.nextRequest();
    try {
      rec.secret(options?.apiKey);
      // A key the built-in stream takes from the environment when none is given.
      if (options?.apiKey === undefined) rec.secret(envApiKey(model?.provider).apiKey);
    } catch {
      // An options object whose read throws: the stream function meets it too.
    }
    const asked = this.request(n, model, context);
    asked.commit();
    rec.write(asked.line);
    // No step of the recording's own is awaited (a recorded run's timing is an unrecorded
    // one's): a stream given at once is recorded at once, its reader found by the loop
    // (loop.js `STEP_READERS`); a Promise of one is awaited as the loop awaits it.
    const failed = (error) => {
      rec.write({ type: 'response', n, ...thrownOf(error) });
      throw error;
    };
    return inner.openResponse((m, c, o) => {
      let stream;
      try {
        stream = streamFn(m, c, o);
      } catch (error) {
        failed(error);
      }
      // A Promise of a stream: recorded by a reaction of its own, which runs before the loop's
      // (added first), and the Promise goes back as it is.
      if (stream instanceof Promise) {
        stream.then((s) => recordStream(s, rec, n, this), (error) => rec.write({ type: 'response', n, ...thrownOf(error) }));
        return stream;
      }
      return recordStream(stream, rec, n, this);
    }, model, context, options, emit);
  }

  executeTool(inner, tool, id, args, signal, onUpdate) {
    const rec = this.recorder;
    const name = typeof tool?.name === 'string' ? tool.name : undefined;
    this.executing();
    rec.writeValue({ type: 'tool', id, name, seq: rec.nextSeq() }, 'args', args);
    // Steps taken inside the `execute` call itself (an update the tool sends before it first
    // awaits, a synchronous throw) are marked `sync`: a replay takes them inside the call too.
    let inCall = true;
    const sync = () => (inCall ? { sync: 1 } : {});
    const update = typeof onUpdate === 'function'
      ? (partial) => {
        rec.writeValue({ type: 'update', id, seq: rec.nextSeq(), ...sync() }, 'partial', partial);
        return onUpdate(partial);
      }
      : onUpdate;
    const settle = (outcome) => rec.write({ type: 'settle', id, seq: rec.nextSeq(), ...sync(), ...outcome });
    let returned;
    try {
      returned = inner.executeTool(tool, id, args, signal, update);
    } catch (error) {
      settle(thrownOf(error));
      throw error;
    } finally {
      inCall = false;
    }
    const ended = (result) => {
      if (result === undefined) settle({ result: { $undefined: 1 } });
      else rec.writeValue({ type: 'settle', id, seq: rec.nextSeq() }, 'result', result);
      return result;
    };
    // A Promise's own goes back to the loop (no step of the recording's to await), its
    // reactions first.
    if (returned instanceof Promise) {
      returned.then(ended, (error) => settle(thrownOf(error)));
      return returned;
    }
    return Promise.resolve(returned).then(ended, (error) => {
      settle(thrownOf(error));
      throw error;
    });
  }

  hook(inner, config, name) {
    const f = inner.hook(config, name);
    if (f === undefined) return f;
    const rec = this.recorder;
    // The hook's own value is returned, a Promise only where it gave one: recording changes
    // nothing the loop awaits.
    if (name === 'getApiKey') return function getApiKey(...a) {
      return seen(f.apply(this, a), (key) => rec.secret(key));
    };
    if (name !== 'getSteeringMessages' && name !== 'getFollowUpMessages') return f;
    const queue = name === 'getSteeringMessages' ? 'steering' : 'followUp';
    return function poll(...a) {
      return seen(f.apply(this, a), (messages) => rec.writeValue({ type: 'poll', queue, at: rec.eventTotal }, 'messages', messages));
    };
  }

  clock(inner, kind) {
    const value = inner.clock(kind);
    this.recorder.write({ type: 'clock', kind, value });
    return value;
  }

  /** The run settled: its `end` line (a run without one was cut off: its process died). */
  end() {
    this.recorder.write({ type: 'end' });
    this.release();
  }

  /** The run is over for the recorder: the next one may begin. */
  release() {
    if (this.#onAbort !== undefined) this.run.signal.removeEventListener?.('abort', this.#onAbort);
    this.recorder.end();
  }
}

/** `value`, after `see` saw it (or what it resolves to, for a thenable: then the same
 * Promise's value comes back, and a rejection as it was). */
function seen(value, see) {
  // A Promise's own goes back (no step of the recording's to await), its reaction first.
  if (value instanceof Promise) {
    value.then(see, () => {});
    return value;
  }
  if (value === null || typeof value !== 'object' || typeof value.then !== 'function') {
    see(value);
    return value;
  }
  return Promise.resolve(value).then((v) => {
    see(v);
    return v;
  });
}

/** Whether each field of `record` is a string, a number, a boolean or null, or (`del`) a list
 * of strings: a record that cannot change after it is made. */
function flat(record) {
  for (const key of Object.keys(record)) {
    if (key === 'p') continue;
    const v = record[key];
    if (v !== null && typeof v === 'object' && !(key === 'del' && v.every((k) => typeof k === 'string'))) return false;
  }
  return true;
}

/** Records response `n`'s stream and gives it back as it is: the loop's reader of it
 * (loop.js `Response`) finds the recording's readers by the stream (`STEP_READERS`): one writes
 * each step as the loop reads it, in the same tick (the partial written as the loop's copy of
 * it is made), the other the result when it settles. */
export function recordStream(stream, rec, n, taping) {
  let iterate;
  try {
    iterate = stream?.[Symbol.asyncIterator];
  } catch {
    // Read again by the loop, which names the failure.
  }
  if (typeof iterate !== 'function') {
    // No event stream: the loop fails the run on it; a replay gives back the same kind of value.
    const kind = stream === null ? 'null' : Array.isArray(stream) ? 'array' : typeof stream;
    rec.write({ type: 'response', n, notStream: kind, ...(typeof stream === 'number' || typeof stream === 'string' || typeof stream === 'boolean' ? { value: stream } : {}) });
    return stream;
  }
  const diff = new PartialDiff();
  if (taping !== undefined) taping.reading = { n, diff };
  const onStep = (step, error) => {
    if (error !== undefined || step === undefined) {
      if (error !== undefined) {
        // The stream failed (its `fail`): a replay's stream fails there with the same message.
        rec.write({ type: 'stream', n, ...thrownOf(error) });
        return;
      }
    }
    if (step === null || typeof step !== 'object') {
      rec.writeNow({ type: 'stream', n, step: step === undefined ? { $undefined: 1 } : step });
    } else if (step.done) {
      rec.write({ type: 'stream', n, done: 1 });
    } else {
      const event = step.value;
      if (event === null || typeof event !== 'object') rec.writeNow({ type: 'stream', n, raw: event === undefined ? { $undefined: 1 } : event });
      else {
        const grown = diff.grown(event);
        if (grown !== false) {
          rec.grow(n, event.type, event.contentIndex, event.delta, grown === GREW);
          return;
        }
        const encoded = diff.encode(event);
        // A delta's fields are strings and numbers: made text later. Whole blocks and
        // messages may change after this event: made text now.
        if (flat(encoded) && (encoded.p === undefined || flat(encoded.p))) rec.write({ type: 'stream', n, event: encoded });
        else rec.writeNow({ type: 'stream', n, event: encoded });
      }
    }
  };
  // The stream's result, as the loop reads it: written when it settles (a reaction of the
  // recording's on the stream's own Promise, which goes back as it is).
  const onResult = (result, threw) => {
    if (threw !== undefined) {
      rec.write({ type: 'result', n, ...thrownOf(threw.error) });
      return result;
    }
    const written = (value) => {
      // The partial streamed (pi-ai's result is its last event's message), unchanged since:
      // written as a reference to it.
      if (value !== undefined && value === diff.partial && diff.view() === undefined) rec.write({ type: 'result', n, result: { $partial: 1 } });
      else rec.write({ type: 'result', n }, { result: value === undefined ? '{"$undefined":1}' : jsonOf(value, {}) ?? 'null' });
    };
    const failed = (error) => rec.write({ type: 'result', n, ...thrownOf(error) });
    if (result instanceof Promise) result.then(written, failed);
    else Promise.resolve(result).then(written, failed);
    return result;
  };
  // The stream itself goes to the loop (its own iterator, no wrapper): the loop finds the
  // recording's readers of it here (loop.js `Response`).
  STEP_READERS.set(stream, { onStep, onResult });
  return stream;
}
