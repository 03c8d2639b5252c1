// The recording side of a cassette (record, replay and fork: not in pi; docs/record-replay.md).
// A Recorder is handed to a run (`config.record`, the `Agent`'s `record` option); the loop
// (loop.js `startRun`) calls `begin` once per run and routes every input the run does not decide
// itself through what `begin` returns: responses, tool calls, queue polls, the clock and an abort.
// Kept apart from cassette.js (replay and fork) so the main entry carries only this part.

/** The format of cassettes. */
export const CASSETTE_VERSION = 1;

/** The events after which the loop's position is written (not a streamed or a tool's update). */
const UPDATES = new Set(['message_update', 'tool_execution_update']);

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
  const keys = Object.keys(value);
  if (keys.length !== Object.keys(copy).length) return false;
  for (const key of keys) {
    const a = value[key], b = copy[key];
    if (a === b) continue;
    if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
    const inner = Object.keys(a);
    if (inner.length !== Object.keys(b).length) return false;
    for (const k of inner) if (a[k] !== b[k]) return false;
  }
  return true;
}

/** The text field each streamed delta appends to. */
const GROWS = { text_delta: 'text', thinking_delta: 'thinking' };

/**
 * A streamed response's events, written compactly: each event's own fields, and its partial as
 * what changed since the last event (a delta's text is not written twice; a block that ended
 * is written whole). Linear in the response, and a few comparisons an event.
 */
class PartialDiff {
  #top = new Map();
  #blocks = [];
  #partial;

  /** The event to write: `partial` becomes `p` (the changes), and a field that is the partial,
   * or one of its blocks, is written as a reference to it. */
  encode(event) {
    const out = {};
    const partial = event.partial;
    for (const key of Object.keys(event)) {
      if (key === 'partial') continue;
      const v = event[key];
      if (partial != null && v === partial) out[key] = { $partial: 1 };
      else if (key === 'toolCall' && partial != null && Array.isArray(partial.content) && v === partial.content[event.contentIndex]) {
        out[key] = { $block: event.contentIndex };
      } else out[key] = v;
    }
    if (partial !== null && typeof partial === 'object') out.p = this.#diff(event, partial);
    else if (partial !== undefined) out.partial = partial;
    return out;
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

  #diff(event, partial) {
    const p = {};
    if (partial !== this.#partial) {
      // Another object: written whole.
      this.#partial = partial;
      this.#top.clear();
      this.#blocks = [];
      this.#argText = [];
      p.new = 1;
    }
    const set = {};
    let changed = false;
    const seen = new Set();
    for (const key of Object.keys(partial)) {
      seen.add(key);
      if (key === 'content') {
        // Its place among the keys, for a partial written whole.
        if (p.new === 1) {
          set.content = { $slot: 1 };
          changed = true;
        }
        continue;
      }
      const v = partial[key];
      if (this.#top.has(key) && same2(v, this.#top.get(key))) continue;
      set[key] = v;
      this.#top.set(key, copy2(v));
      changed = true;
    }
    for (const key of this.#top.keys()) {
      if (!seen.has(key)) {
        (p.del ??= []).push(key);
        this.#top.delete(key);
      }
    }
    if (changed) p.set = set;
    const content = partial.content;
    if (!Array.isArray(content)) {
      if (seen.has('content')) p.content = content;
      this.#blocks = [];
      return p;
    }
    const ended = event.type === 'text_end' || event.type === 'thinking_end' || event.type === 'toolcall_end' || event.type === 'done' || event.type === 'error';
    const blocks = [];
    for (let i = 0; i < content.length; i++) {
      const block = content[i];
      const known = this.#blocks[i];
      const whole = () => {
        blocks.push([i, block]);
        this.#blocks[i] = { block, copy: copy2(block) };
      };
      if (known === undefined || known.block !== block || block === null || typeof block !== 'object') {
        whole();
        continue;
      }
      // The block this event streams into: its text grew by the event's delta.
      const grows = i === event.contentIndex ? GROWS[event.type] : undefined;
      const delta = typeof event.delta === 'string' ? event.delta : undefined;
      const keys = Object.keys(block);
      if (event.type === 'toolcall_delta' && i === event.contentIndex && delta !== undefined) this.#argText[i] = (this.#argText[i] ?? 0) + delta.length;
      let diff;
      let wholeAgain = ended && i === event.contentIndex;
      if (!wholeAgain && keys.length === Object.keys(known.copy).length) {
        for (const key of keys) {
          const v = block[key], was = known.copy[key];
          if (v === was) continue;
          if (key === grows && delta !== undefined && typeof v === 'string' && typeof was === 'string' && v.length === was.length + delta.length && v.endsWith(delta)) {
            (diff ??= {}).grow = key;
          } else if (typeof v === 'string' && typeof was === 'string' && v.length > was.length && v.startsWith(was)) {
            // Grown by more than this event's delta: the stream had gone on (events it pushed
            // and the loop has not read yet).
            ((diff ??= {}).add ??= {})[key] = v.slice(was.length);
          } else if (key === 'arguments' && event.type === 'toolcall_delta' && (this.#argText[i] ?? 0) > ARGS_WHOLE) {
            // Long arguments are rebuilt on replay from the streamed text (its partial parse)
            // rather than written whole at each delta.
            (diff ??= {}).args = 1;
          } else if (key === 'arguments' && v !== null && typeof v === 'object') {
            ((diff ??= {}).put ??= {})[key] = v;
          } else if (typeof v !== 'object' || v === null || !same2(v, was)) {
            wholeAgain = true;
            break;
          }
        }
      } else wholeAgain = true;
      if (wholeAgain) whole();
      else if (diff !== undefined) {
        blocks.push([i, diff]);
        this.#blocks[i] = { block, copy: copy2(block) };
      }
    }
    if (this.#blocks.length > content.length) this.#blocks.length = content.length;
    if (blocks.length > 0) p.blocks = blocks;
    if (this.#contentLength !== content.length) p.length = content.length;
    this.#contentLength = content.length;
    return p;
  }

  #contentLength = -1;
  /** The length of each block's streamed argument text so far. */
  #argText = [];
}

/** Up to this many characters of streamed arguments, a call's arguments are written whole
 * when they change; past it they are rebuilt on replay from the deltas. */
const ARGS_WHOLE = 4096;

/** A macrotask: what a replayed settle waits for, so the run takes each input as it came. */
export const macrotask = typeof setImmediate === 'function'
  ? () => new Promise((resolve) => setImmediate(resolve))
  : typeof MessageChannel === 'function'
    ? () => new Promise((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(0);
    })
    : () => new Promise((resolve) => setTimeout(resolve, 0));

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
  #secrets = new Set();
  #kind;
  /** The order of every tool call's start, update and settle, and of aborts, across a run. */
  #seq = 0;
  #requests = 0;
  #known = [];
  #active = 0;

  /** `options.onLine(line)`: called with each line as it is written (to append it to storage). */
  constructor(options) {
    const onLine = options?.onLine;
    if (onLine !== undefined && typeof onLine !== 'function') throw new TypeError('Recorder: onLine must be a function');
    this.#onLine = onLine;
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

  /** Keeps `value` (an API key) out of every line written from now on. */
  secret(value) {
    if (typeof value === 'string' && value.length >= 4) this.#secrets.add(value);
  }

  #text(record) {
    let line = typeof record === 'string' ? record : JSON.stringify(record);
    for (const secret of this.#secrets) {
      const escaped = JSON.stringify(secret).slice(1, -1);
      if (line.includes(escaped)) line = line.split(escaped).join('[redacted]');
    }
    return line;
  }

  #flush() {
    if (this.#pending.length === 0) return;
    const pending = this.#pending;
    this.#pending = [];
    for (const record of pending) this.#emitLine(this.#text(record));
  }

  #emitLine(line) {
    this.#lines.push(line);
    if (this.#onLine !== undefined) {
      try {
        this.#onLine(line);
      } catch {
        // The recording goes on; the line is in `lines`.
      }
    }
  }

  /** Writes a record now (its objects may change later), or with `later`, when read. */
  write(record, later = false) {
    if (later && this.#onLine === undefined) {
      this.#pending.push(record);
      return;
    }
    this.#flush();
    this.#emitLine(this.#text(record));
  }

  /** The next number in the run's order of tool calls' steps. */
  nextSeq() {
    return this.#seq++;
  }

  /** The transcript as the cassette knows it, written as what stays and what is added. */
  messagesDelta(messages) {
    const texts = [];
    const why = {};
    for (const m of messages) texts.push(jsonOf(m, why) ?? 'null');
    let keep = 0;
    while (keep < texts.length && keep < this.#known.length && texts[keep] === this.#known[keep]) keep++;
    this.#known = texts;
    return { keep, add: texts.slice(keep).map((t) => JSON.parse(t)) };
  }

  /** Extends the known transcript by one message (a run's `message_end`). */
  knows(message) {
    this.#known.push(jsonOf(message, {}) ?? 'null');
  }

  /** Called by the loop for each run (loop.js `startRun`): the run's start, and the hooks that
   * route its inputs through this recorder. `run.kind`: `"agent"` or `"loop"`. */
  begin(run) {
    if (this.#active > 0) throw Object.assign(new Error('A Recorder records one run at a time'), { code: 'invalid_input' });
    if (this.#kind === undefined) {
      this.#kind = run.kind;
      this.write({ type: 'cassette', version: CASSETTE_VERSION, kind: run.kind });
    } else if (this.#kind !== run.kind) {
      throw Object.assign(new Error(`This Recorder records ${this.#kind} runs, not ${run.kind} runs`), { code: 'invalid_input' });
    }
    this.#seq = 0;
    this.#requests = 0;
    const line = { type: 'run', mode: run.mode };
    if (run.prompts !== undefined) line.prompts = run.prompts;
    const context = run.context ?? {};
    if (context.systemPrompt !== undefined) line.systemPrompt = context.systemPrompt;
    line.messages = this.messagesDelta(Array.isArray(context.messages) ? context.messages : []);
    if (run.position !== undefined) line.position = run.position;
    const model = run.config?.model;
    if (model != null && typeof model === 'object') line.model = { provider: model.provider, id: model.id, api: model.api };
    const reasoning = run.config?.reasoning;
    if (reasoning !== undefined) line.reasoning = reasoning;
    this.write(line);
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

  /** The run's emit: counts events, and after each that moves the run writes its position
   * (and a finished message). */
  /** The response being read: `{ n, diff }` (recordStream). */
  reading;

  emit(inner) {
    return (event) => {
      const index = this.events++;
      const type = event?.type;
      const reading = this.reading;
      if (reading !== undefined && (type === 'message_update' || type === 'message_start')) {
        const p = reading.diff.view();
        if (p !== undefined) this.recorder.write({ type: 'view', n: reading.n, p });
      }
      const r = inner(event);
      if (UPDATES.has(type)) return r;
      const write = () => this.boundary(index, event);
      if (r != null && typeof r.then === 'function') return r.then(write);
      write();
      return r;
    };
  }

  #position = new Map();

  /** The line of an event boundary: the position as what changed since the last one
   * (`position`: its keys that changed, `gone`: those it lost). */
  boundary(index, event) {
    const line = { type: 'event', i: index, event: event?.type };
    const at = this.run.where?.();
    if (at !== null && typeof at === 'object') {
      const changed = {};
      let any = false;
      const seen = new Set();
      for (const key of Object.keys(at)) {
        seen.add(key);
        const text = jsonOf(at[key], {});
        if (this.#position.get(key) === text) continue;
        this.#position.set(key, text);
        changed[key] = at[key];
        any = true;
      }
      const gone = [...this.#position.keys()].filter((k) => !seen.has(k));
      for (const k of gone) this.#position.delete(k);
      if (any) line.position = changed;
      if (gone.length > 0) line.gone = gone;
    } else if (this.#position.size > 0) {
      line.gone = [...this.#position.keys()];
      this.#position.clear();
    }
    if (event?.type === 'message_end') {
      line.message = event.message;
      this.recorder.knows(event.message);
    }
    this.recorder.write(line);
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
    const texts = messages.map((m) => jsonOf(m, {}) ?? 'null');
    const known = this.#requestKnown;
    let keep = 0;
    while (keep < texts.length && keep < known.length && texts[keep] === known[keep]) keep++;
    line.messages = { keep, add: texts.slice(keep).map((t) => JSON.parse(t)) };
    if (Array.isArray(context?.tools)) line.tools = context.tools.map((t) => t?.name);
    return { line, texts, commit: () => (this.#requestKnown = texts) };
  }

  #requestKnown = [];

  async openResponse(inner, streamFn, model, context, options, emit) {
    const rec = this.recorder;
    const n = rec.nextRequest();
    try {
      rec.secret(options?.apiKey);
    } catch {
      // An options object whose read throws: the stream function meets it too.
    }
    const asked = this.request(n, model, context);
    asked.commit();
    rec.write(asked.line);
    const recorded = async (m, c, o) => {
      let stream;
      try {
        stream = await streamFn(m, c, o);
      } catch (error) {
        rec.write({ type: 'response', n, ...thrownOf(error) });
        throw error;
      }
      return recordStream(stream, rec, n, this);
    };
    return inner.openResponse(recorded, model, context, options, emit);
  }

  executeTool(inner, tool, id, args, signal, onUpdate) {
    const rec = this.recorder;
    const why = {};
    const argsText = jsonOf(args, why);
    rec.write({ type: 'tool', id, name: tool?.name, seq: rec.nextSeq(), ...(argsText === undefined ? { unrecordable: why.text } : { args: JSON.parse(argsText) }) });
    const update = typeof onUpdate === 'function'
      ? (partial) => {
        const w = {};
        const text = jsonOf(partial, w);
        rec.write({ type: 'update', id, seq: rec.nextSeq(), ...(text === undefined ? { unrecordable: w.text } : { partial: text === undefined ? null : JSON.parse(text) }) });
        return onUpdate(partial);
      }
      : onUpdate;
    const settle = (outcome) => rec.write({ type: 'settle', id, seq: rec.nextSeq(), ...outcome });
    let returned;
    try {
      returned = inner.executeTool(tool, id, args, signal, update);
    } catch (error) {
      settle(thrownOf(error));
      throw error;
    }
    return Promise.resolve(returned).then(
      (result) => {
        const w = {};
        const text = jsonOf(result, w);
        settle(text === undefined ? { unrecordable: w.text ?? 'undefined' } : { result: JSON.parse(text) });
        return result;
      },
      (error) => {
        settle(thrownOf(error));
        throw error;
      },
    );
  }

  hook(inner, config, name) {
    const f = inner.hook(config, name);
    if (f === undefined) return f;
    const rec = this.recorder;
    if (name === 'getApiKey') {
      return async function getApiKey(...a) {
        const key = await f.apply(this, a);
        rec.secret(key);
        return key;
      };
    }
    if (name !== 'getSteeringMessages' && name !== 'getFollowUpMessages') return f;
    const queue = name === 'getSteeringMessages' ? 'steering' : 'followUp';
    return async function poll(...a) {
      const messages = await f.apply(this, a);
      const why = {};
      const text = jsonOf(messages, why);
      rec.write({ type: 'poll', queue, ...(text === undefined ? { unrecordable: why.text } : { messages: text === undefined ? null : JSON.parse(text) }) });
      return messages;
    };
  }

  clock(inner, kind) {
    const value = inner.clock(kind);
    this.recorder.write({ type: 'clock', kind, value }, true);
    return value;
  }

  end() {
    if (this.#onAbort !== undefined) this.run.signal.removeEventListener?.('abort', this.#onAbort);
    this.recorder.end();
  }
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

/** A response stream whose events and result are written as they are read. */
export function recordStream(stream, rec, n, taping) {
  const iterate = stream?.[Symbol.asyncIterator];
  if (typeof iterate !== 'function') return stream;
  const iterator = iterate.call(stream);
  const diff = new PartialDiff();
  if (taping !== undefined) taping.reading = { n, diff };
  const recorded = {
    [Symbol.asyncIterator]() {
      return {
        next: async () => {
          const step = await iterator.next();
          if (step === null || typeof step !== 'object') {
            rec.write({ type: 'stream', n, step: step === undefined ? { $undefined: 1 } : step });
          } else if (step.done) {
            rec.write({ type: 'stream', n, done: 1 });
          } else {
            const event = step.value;
            if (event === null || typeof event !== 'object') rec.write({ type: 'stream', n, raw: event === undefined ? { $undefined: 1 } : event });
            else {
              const encoded = diff.encode(event);
              // A delta's fields are strings and numbers: written as text later. Whole blocks
              // and messages may change after this event: written now.
              const later = flat(encoded) && (encoded.p === undefined || flat(encoded.p));
              rec.write({ type: 'stream', n, event: encoded }, later);
            }
          }
          return step;
        },
        return: (value) => (typeof iterator.return === 'function' ? iterator.return(value) : Promise.resolve({ value, done: true })),
      };
    },
    result() {
      let result;
      try {
        result = stream.result();
      } catch (error) {
        rec.write({ type: 'result', n, ...thrownOf(error) });
        throw error;
      }
      return Promise.resolve(result).then(
        (value) => {
          rec.write({ type: 'result', n, result: value === undefined ? { $undefined: 1 } : value });
          return value;
        },
        (error) => {
          rec.write({ type: 'result', n, ...thrownOf(error) });
          throw error;
        },
      );
    },
  };
  return recorded;
}
