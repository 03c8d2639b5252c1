// Replay and fork of recorded runs (not in pi; docs/record-replay.md). A cassette is what a
// `Recorder` (tape.js) wrote. `replay` runs the same agent again offline: every input comes
// from the cassette (responses, tool results, queue polls, the clock, an abort) while hooks and
// listeners run again as code; where the run asks for something the cassette does not hold, it
// stops with a divergence error (or, with `onMiss: "live"`, goes on live and keeps recording).
// `fork` starts a run again at any recorded event from the position the cassette holds there,
// with one change, without running what came before.
import { Agent } from './agent.js';
import { runAgentLoop, runAgentLoopContinue, runAgentLoopResume, CHECKPOINT_VERSION, UPDATE_KINDS } from './loop.js';
import { ToolArguments } from './streaming-json.js';
import { Recorder, Taping, CASSETTE_VERSION, HEADER, recordStream } from './tape.js';

export { Recorder, CASSETTE_VERSION };

/** A macrotask: what a replayed settle waits for, so the run takes each input as it came. */
const macrotask = typeof setImmediate === 'function'
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

/** An `invalid_input` error (docs/errors.md). */
function invalid(message) {
  return Object.assign(new Error(message), { code: 'invalid_input' });
}

/** A value for a message, cut to `max` characters. */
function brief(value, max = 160) {
  let text;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  if (text === undefined) text = String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Two values as text for a message: where they are long, the part around their first
 * difference. */
function apart(x, y) {
  const tx = brief(x, Infinity), ty = brief(y, Infinity);
  if (tx.length <= 160 && ty.length <= 160) return [tx, ty];
  let k = 0;
  while (k < tx.length && k < ty.length && tx[k] === ty[k]) k++;
  const cut = (t) => {
    const from = Math.max(0, k - 60);
    return `${from > 0 ? '…' : ''}${t.slice(from, k + 100)}${k + 100 < t.length ? '…' : ''}`;
  };
  return [cut(tx), cut(ty)];
}

/** The error a replay stops with: `index` is the event the run had reached, `recorded` and
 * `asked` what the cassette held there and what the run asked for. */
export class ReplayDivergence extends Error {
  constructor(index, what, recorded, asked, cause) {
    const [a, b] = apart(recorded, asked);
    const failed = cause === undefined ? '' : ` (the run failed: ${cause instanceof Error ? cause.message : brief(cause)})`;
    super(`Replay diverged at event ${index}: ${what}: the cassette has ${a}, the run asked for ${b}${failed}`, cause === undefined ? undefined : { cause });
    this.name = 'ReplayDivergence';
    this.code = 'replay_divergence';
    this.index = index;
    this.what = what;
    this.recorded = recorded;
    this.asked = asked;
  }
}

/** The value a cassette wrote for `undefined`. */
const undef = (v) => (v !== null && typeof v === 'object' && v.$undefined === 1 && Object.keys(v).length === 1 ? undefined : v);

/**
 * Reads a cassette (its text, its lines, or the Recorder) into runs: each with its requests
 * (and their streamed events and results), tool calls, queue polls, clock readings, event
 * boundaries and abort. A line that is no JSON, or a cassette of another version, is an
 * `invalid_input` error naming the line.
 */
export function readCassette(cassette) {
  let lines;
  if (cassette instanceof Recorder) lines = cassette.lines;
  else if (typeof cassette === 'string') lines = cassette.replace(/^\uFEFF/, '').split('\n');
  else if (Array.isArray(cassette)) lines = cassette;
  else throw invalid('cassette: expected its text, its lines or a Recorder');
  const records = [];
  lines.forEach((line, i) => {
    if (typeof line !== 'string') throw invalid(`cassette line ${i + 1}: not a string`);
    if (line.trim() === '') return;
    let record;
    try {
      record = JSON.parse(line);
    } catch (error) {
      // The text's last line, cut off by a process that died while writing it (text with no
      // line break after it): the cassette ends before it.
      if (typeof cassette === 'string' && i === lines.length - 1) return;
      throw invalid(`cassette line ${i + 1}: not JSON (${error.message})`);
    }
    if (record === null || typeof record !== 'object' || typeof record.type !== 'string') throw invalid(`cassette line ${i + 1}: not a record`);
    records.push(record);
  });
  const head = records[0];
  if (head?.type !== 'cassette') throw invalid('cassette: the first line is not its header');
  if (head.version !== CASSETTE_VERSION) throw invalid(`cassette: version ${JSON.stringify(head.version) ?? 'undefined'} is not ${CASSETTE_VERSION}`);
  if (head.kind !== 'agent' && head.kind !== 'loop') throw invalid(`cassette: kind ${brief(head.kind)} is neither "agent" nor "loop"`);
  const runs = [];
  // Messages queued on the agent and polls that took them, in order (a fork's queues).
  const queues = [];
  let run;
  let known = [];
  for (let i = 1; i < records.length; i++) {
    const r = records[i];
    if (r.type === 'run') {
      const messages = applyDelta(known, r.messages, `cassette record ${i + 1}`);
      known = messages.slice();
      run = { line: r, messages, requests: [], tools: new Map(), actions: [], polls: { steering: [], followUp: [] }, clocks: [[], []], events: [], known: [], ended: false, lastEvent: -1, updatesAfter: 0 };
      runs.push(run);
      continue;
    }
    if (run === undefined) throw invalid(`cassette record ${i + 1}: ${r.type} before any run`);
    switch (r.type) {
      case 'request': {
        const delta = r.messages;
        if (delta === null || typeof delta !== 'object' || !Number.isInteger(delta.keep) || delta.keep < 0 || !Array.isArray(delta.add)) throw invalid(`cassette record ${i + 1}: messages is not a delta`);
        // A message written as `{ $m: place }` is the transcript's at that place.
        const add = delta.add.map((m) => (m !== null && typeof m === 'object' && Number.isInteger(m.$m) && Object.keys(m).length === 1 ? known[m.$m] ?? null : m));
        run.requests[r.n] = { line: r, keep: delta.keep, add, stream: [], result: undefined, threw: undefined };
        break;
      }
      case 'response':
      case 'stream':
      case 'view':
      case 'result': {
        // A streamed update the loop delivered (a message_update).
        if (r.type === 'stream' && UPDATE_KINDS.has(r.event?.type)) run.updatesAfter++;
        const request = run.requests[r.n];
        if (request === undefined) throw invalid(`cassette record ${i + 1}: ${r.type} of request ${JSON.stringify(r.n)}, which the run has not made`);
        if (r.type === 'response') request.threw = r;
        else if (r.type === 'result') request.result = r;
        else request.stream.push(r);
        break;
      }
      case 'tool': {
        const call = { line: r, updates: [], settle: undefined };
        // A call id the model used twice in a run: the calls are told apart by their order.
        const list = run.tools.get(r.id) ?? [];
        list.push(call);
        run.tools.set(r.id, list);
        run.actions.push({ seq: r.seq, kind: 'start', call });
        break;
      }
      case 'update':
      case 'settle': {
        const list = run.tools.get(r.id);
        const call = list?.findLast((c) => c.settle === undefined) ?? list?.[list.length - 1];
        if (call === undefined) break;
        if (r.type === 'update') {
          call.updates.push(r);
          run.updatesAfter++;
        }
        else call.settle = r;
        run.actions.push({ seq: r.seq, kind: r.type, call, record: r });
        break;
      }
      case 'poll':
        (run.polls[r.queue] ?? []).push(r);
        queues.push({ ...r, ord: i });
        break;
      case 'queue':
        queues.push({ ...r, ord: i });
        break;
      case 'clock':
        run.clocks[r.kind === 1 ? 1 : 0].push(r.value);
        break;
      case 'end':
        run.ended = true;
        break;
      case 'emit':
        // An event being delivered (its listeners ran, or were running when the process died).
        if (Number.isInteger(r.i) && r.i > run.lastEvent) {
          run.lastEvent = r.i;
          run.updatesAfter = 0;
        }
        break;
      case 'abort':
        run.abort ??= r;
        run.actions.push({ seq: r.seq, kind: 'abort', record: r });
        break;
      case 'event':
      case 'position': {
        if (r.type === 'event' && r.i > run.lastEvent) {
          run.lastEvent = r.i;
          run.updatesAfter = 0;
        }
        const last = run.events.length > 0 ? run.events[run.events.length - 1].i : -1;
        // A position line (a tool about to run) belongs to the last event: its index may repeat.
        if (!Number.isInteger(r.i) || r.i < (r.type === 'position' ? -1 : 0) || (r.type === 'event' ? r.i <= last : r.i < last)) throw invalid(`cassette record ${i + 1}: event index ${JSON.stringify(r.i)} does not follow the run's last`);
        // The position as the boundaries wrote it: each one's changes to the last, and lists
        // that grew by the items written.
        run.position = { ...(run.position ?? {}), ...(r.position ?? {}) };
        for (const [key, items] of Object.entries(r.grew ?? {})) run.position[key] = [...(Array.isArray(run.position[key]) ? run.position[key] : []), ...items];
        for (const key of r.gone ?? []) delete run.position[key];
        const entry = { ...r, ord: i, position: Object.keys(run.position).length === 0 ? undefined : { ...run.position } };
        if (r.type === 'position' && run.events.length > 0 && run.events[run.events.length - 1].i === r.i) {
          // The event's own entry now stands where its tool is about to run (its message kept).
          const previous = run.events[run.events.length - 1];
          run.events[run.events.length - 1] = { ...previous, position: entry.position, ord: i };
        } else run.events.push(entry);
        if (r.event === 'message_end') known.push(r.message);
        break;
      }
      default:
        // A record of a later version's kind: not needed to replay.
        break;
    }
  }
  for (const r of runs) {
    r.actions.sort((a, b) => a.seq - b.seq);
    // A run cut off (no `end`): how many events its process had delivered, as the cassette
    // shows them: up to its last event line, and each streamed or tool update written after it.
    if (!r.ended) r.delivered = r.lastEvent + 1 + r.updatesAfter;
  }
  return { kind: head.kind, runs, queues };
}

/**
 * What a cassette holds, to assert on in a test without replaying it: its kind, its runs'
 * starts, each request's model, each tool call (id, name, arguments, and its result or thrown
 * error), the queue polls, whether a run was aborted, and the transcript at the end.
 */
export function summarize(cassette) {
  const tape = readCassette(cassette);
  const toolCalls = [];
  const requests = [];
  const polls = [];
  let messages = [];
  let aborted = false;
  for (const run of tape.runs) {
    messages = run.messages.slice();
    for (const r of run.requests) if (r !== undefined) requests.push({ model: r.line.model, tools: r.line.tools });
    for (const calls of run.tools.values()) {
      for (const call of calls) {
        const c = { id: call.line.id, name: call.line.name, args: call.line.args };
        const s = call.settle;
        if (s?.result !== undefined) c.result = s.result;
        else if (s?.error !== undefined) c.error = s.error.message;
        else if (s?.thrown !== undefined) c.error = s.thrown;
        toolCalls.push(c);
      }
    }
    for (const queue of ['steering', 'followUp']) for (const p of run.polls[queue]) if (Array.isArray(p.messages) && p.messages.length > 0) polls.push({ queue, messages: p.messages });
    for (const e of run.events) if (e.event === 'message_end') messages.push(e.message);
    aborted ||= run.abort !== undefined;
  }
  return { kind: tape.kind, runs: tape.runs.map((r) => r.line.mode), requests, toolCalls, polls, aborted, messages };
}

/** `before` with its first `delta.keep` messages kept and `delta.add` appended. */
function applyDelta(before, delta, where) {
  if (delta === null || typeof delta !== 'object' || !Number.isInteger(delta.keep) || !Array.isArray(delta.add)) throw invalid(`${where}: messages is not a delta`);
  if (delta.keep < 0 || delta.keep > before.length) throw invalid(`${where}: keeps ${delta.keep} of ${before.length} messages`);
  return [...before.slice(0, delta.keep), ...delta.add];
}

/** A recorded response as a stream again: its events (with the partial rebuilt from the
 * changes written) and its result. */
function playStream(recorded, taping) {
  const partialState = { partial: undefined, args: [] };
  let i = 0;
  const records = recorded.stream;
  // What a listener saw at an event's delivery, where the stream had gone on since it was read.
  if (taping !== undefined) {
    taping.playing = () => {
      const r = records[i];
      if (r?.type !== 'view') return;
      i++;
      decodeEvent({ type: 'view', p: r.p }, partialState);
    };
  }
  return {
    [Symbol.asyncIterator]() {
      return {
        next: async () => {
          while (records[i]?.type === 'view') i++;
          const r = records[i++];
          if (r === undefined) {
            // An aborted run that gave up on a stream that sent no more (its abortGraceMs): the
            // same wait here, which the replayed abort bounds the same way.
            if (taping?.abandoned()) return NEVER();
            // The cassette ends in the middle of this response: the recording was cut off here.
            if (taping?.responseCut(recorded.line.n) === 'cut') return NEVER();
            return { value: undefined, done: true };
          }
          if (r.done) return { value: undefined, done: true };
          if (r.error !== undefined) throw new Error(r.error.message);
          if (r.thrown !== undefined) throw r.thrown;
          if (r.step !== undefined) return undef(r.step);
          if (r.raw !== undefined) return { value: undef(r.raw), done: false };
          return { value: decodeEvent(r.event, partialState), done: false };
        },
        return: (value) => Promise.resolve({ value, done: true }),
      };
    },
    result() {
      const r = recorded.result;
      if (r === undefined) {
        // The loop asks for the result only when the stream ended with `done` or `error`; a
        // cassette without it was cut off there (or stops the replay as a divergence). A
        // stream that ended with neither gave none either (the loop stops waiting for it).
        if (taping !== undefined && !recorded.stream.some((x) => x.done === 1)) {
          try {
            taping.responseCut(recorded.line.n);
          } catch (error) {
            return Promise.reject(error);
          }
        }
        return NEVER();
      }
      if (r.error !== undefined) return Promise.reject(new Error(r.error.message));
      if (r.thrown !== undefined) return Promise.reject(r.thrown);
      return Promise.resolve(resolveRefs(undef(r.result), partialState));
    },
  };
}

/** The keys of a block's written changes (tape.js PartialDiff); a block written whole is an
 * object with other keys (its own: `type`, `text`, …). */
const PATCH_KEYS = new Set(['grow', 'add', 'put', 'args']);

/** A field written as a reference to the partial or one of its blocks, resolved. */
function resolveRefs(value, state) {
  if (value !== null && typeof value === 'object') {
    if (value.$partial === 1) return state.partial;
    if (Number.isInteger(value.$block)) return state.partial?.content?.[value.$block];
    // An ended block's text.
    if (Array.isArray(value.$text)) return state.partial?.content?.[value.$text[0]]?.[value.$text[1]];
  }
  return value;
}

/** One streamed event again: its fields, and the live partial with the written changes (`p`;
 * `pp` for an event that has no partial field, one of its fields being the partial). */
function decodeEvent(encoded, state) {
  const p = encoded.p ?? encoded.pp;
  if (p !== undefined) {
    if (p.new === 1 || state.partial === undefined) {
      state.partial = {};
      state.args = [];
    }
    const partial = state.partial;
    // Every streamed argument delta goes to its call's parser, which rebuilds long arguments.
    const ci = encoded.contentIndex;
    if (encoded.type === 'toolcall_delta' && Number.isInteger(ci) && typeof encoded.delta === 'string') {
      (state.args[ci] ??= new ToolArguments()).append(encoded.delta);
    }
    // Objects the stream changed in place (first: one replaced after is changed before it
    // goes): changed in place here too (a listener's earlier copy of the partial holds them).
    for (const key of Object.keys(p.mut ?? {})) {
      const target = partial[key], value = structuredClone(p.mut[key]);
      if (Array.isArray(target) && Array.isArray(value)) target.splice(0, target.length, ...value);
      else if (target !== null && typeof target === 'object' && !Array.isArray(target) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const k of Object.keys(target)) if (!(k in value)) delete target[k];
        Object.assign(target, value);
      } else partial[key] = value;
    }
    if (p.set !== undefined) {
      Object.assign(partial, structuredClone(p.set));
      if (partial.content?.$slot === 1) partial.content = p.content !== undefined ? p.content : [];
    }
    if (p.del !== undefined) for (const key of p.del) delete partial[key];
    if (p.content !== undefined) partial.content = p.content;
    if (p.length !== undefined || p.blocks !== undefined) {
      if (!Array.isArray(partial.content)) partial.content = [];
      if (p.length !== undefined) partial.content.length = p.length;
      for (const [index, change] of p.blocks ?? []) {
        const delta = typeof encoded.delta === 'string' ? encoded.delta : '';
        if (change !== null && typeof change === 'object' && !Array.isArray(change) && Object.keys(change).every((k) => PATCH_KEYS.has(k))) {
          const block = partial.content[index];
          if (change.grow !== undefined) block[change.grow] += delta;
          if (change.add !== undefined) for (const key of Object.keys(change.add)) block[key] += change.add[key];
          if (change.put !== undefined) Object.assign(block, structuredClone(change.put));
          if (change.args !== undefined) block.arguments = (state.args[index] ??= new ToolArguments()).append('');
        } else {
          partial.content[index] = structuredClone(change);
          // A call that starts streams its arguments from here.
          if (encoded.type === 'toolcall_start' && index === encoded.contentIndex) state.args[index] = new ToolArguments();
        }
      }
    }
  }
  const event = {};
  for (const key of Object.keys(encoded)) {
    if (key === 'p' || key === 'pp') continue;
    event[key] = resolveRefs(encoded[key], state);
  }
  if (encoded.p !== undefined) event.partial = state.partial;
  else if (encoded.partial !== undefined) event.partial = encoded.partial;
  return event;
}

/** The steps of one replayed run (tool calls' updates and settles, an abort), taken in the order
 * the cassette wrote them: a step is taken, a macrotask after the last, once its call has
 * started; steps of calls the run has not started (yet) wait without holding the others up. */
class Schedule {
  #actions;
  /** The recorded aborts, apart: checked after every event. */
  #aborts;
  /** Where the first step not taken is: the scans start there (each step is passed once). */
  #first = 0;
  #done = new Set();
  #started = new Set();
  #waiters = new Map();
  #pumping = false;
  #taping;

  constructor(actions, taping) {
    this.#actions = actions;
    this.#aborts = actions.filter((a) => a.kind === 'abort');
    this.#taping = taping;
  }

  /** The steps from the first not taken on. */
  *#open() {
    while (this.#first < this.#actions.length && this.#done.has(this.#actions[this.#first])) this.#first++;
    for (let i = this.#first; i < this.#actions.length; i++) yield this.#actions[i];
  }

  /** The steps of `call` taken inside its `execute` call when recorded (marked `sync`), in
   * order; they are done now and are not taken again. */
  syncSteps(call) {
    const out = [];
    for (const action of this.#open()) {
      if (action.call !== call || this.#done.has(action) || action.kind === 'start') continue;
      if (action.record?.sync !== 1) break;
      this.#done.add(action);
      out.push(action);
    }
    return out;
  }

  /** A recorded call the run started now: its steps may be taken. */
  started(call, perform) {
    this.#started.add(call);
    this.#waiters.set(call, perform);
    for (const action of this.#open()) if (action.kind === 'start' && action.call === call) this.#done.add(action);
    this.pump();
  }

  /** The first step not taken whose turn has come: of a started call, or an abort that is due
   * (its event reached, every call started before it started). */
  #next() {
    for (const action of this.#open()) {
      if (this.#done.has(action)) continue;
      if (action.kind === 'start') continue;
      if (action.kind === 'abort') {
        if (this.#abortDue(action)) return action;
        continue;
      }
      if (this.#started.has(action.call)) return action;
    }
    return undefined;
  }

  #abortDue(action) {
    if (this.#taping.events < action.record.at) return false;
    return this.#actions.every((a) => a.seq > action.seq || a.kind !== 'start' || this.#done.has(a));
  }

  /** Fires a recorded abort as soon as it is due: called right after each event is delivered,
   * before the loop goes on, where the recorded abort came from a listener. */
  abortNow() {
    for (const action of this.#aborts) {
      if (this.#done.has(action)) continue;
      if (!this.#abortDue(action)) return;
      this.#done.add(action);
      this.#taping.fireAbort();
    }
  }

  /** Takes the steps whose turn has come, one a macrotask. */
  pump() {
    if (this.#pumping) return;
    this.#pumping = true;
    (async () => {
      try {
        for (;;) {
          await macrotask();
          const action = this.#next();
          if (action === undefined) return;
          this.#done.add(action);
          if (action.kind === 'abort') this.#taping.fireAbort();
          else this.#waiters.get(action.call)?.(action);
        }
      } finally {
        this.#pumping = false;
      }
    })();
  }

  /** A new event was delivered: an abort may be due. */
  poke() {
    this.abortNow();
    if (!this.#pumping) this.pump();
  }
}

/** A run's hooks in replay: the inputs come from the recorded run; each is written again to
 * the player's own cassette. */
class PlayTaping extends Taping {
  #recorded;
  #player;
  #schedule;
  #clock = [0, 0];
  #polls = { steering: 0, followUp: 0 };
  #calls = new Map();
  #requests = 0;

  constructor(player, run, recorded) {
    super(player, run);
    this.#player = player;
    this.#recorded = recorded;
    this.#schedule = new Schedule(recorded?.actions ?? [], this);
    this.#schedule.pump();
  }

  /** Fires the recorded abort (the player's `onAbort`). */
  fireAbort() {
    this.#player.onAbort?.();
  }

  /** Applies the view recorded for an event's delivery (playStream). */
  playing;

  emit(inner) {
    const wrapped = super.emit(inner);
    return (event) => {
      const type = event?.type;
      // After a cut nothing more is delivered: the recorded run delivered nothing more. After a
      // divergence neither: what the run does then (its abort) never happened.
      if (this.cut || this.#player.divergence !== undefined) return undefined;
      // A cut run delivers what its process delivered, no more.
      const run = this.#recorded;
      if (run !== undefined && !run.ended && run.delivered !== undefined && this.events >= run.delivered && !this.#player.live && this.#player.onMiss !== 'live') {
        this.#cutNow();
        return undefined;
      }
      if (type === 'message_start') this.playing?.();
      const r = wrapped(event);
      if (r != null && typeof r.then === 'function') return r.then((v) => (this.#schedule.poke(), v));
      this.#schedule.poke();
      return r;
    };
  }

  /** Where the run asked for what the cassette does not hold: the error (or live). */
  /** The run was cut off here when recorded (its process died: no `agent_end`, the run asks
   * for more than it holds after its last event, and the cassette's next run is a `resume`):
   * the replay stops it silently, and the next run goes on. */
  cut = false;

  /** Whether the recorded run was aborted and went on to its end: a response of it that the
   * cassette ends inside was given up on after the abort, not cut off. */
  abandoned() {
    const run = this.#recorded;
    return !this.#player.live && run !== undefined && run.ended && run.abort !== undefined;
  }

  /** The cassette ends inside response `n`: a cut (the run is stopped silently) or a
   * divergence, even with `onMiss: "live"` (a response cannot go on live from its middle). */
  responseCut(n) {
    if (this.#miss(`the response to request ${n}`, 'no more of it', 'its next event', undefined, true) === 'cut') return 'cut';
    throw this.#player.diverge(this.events, `the response to request ${n}`, 'no more of it', 'its next event');
  }

  #miss(what, recorded, asked, cause, absent = false) {
    const run = this.#recorded;
    if (!this.#player.live && this.#player.onMiss !== 'live' && run !== undefined && !run.ended && absent) {
      // A run its process did not finish: what it asked for then never came. The replay
      // stops it where its process stopped delivering (or, should it stall before, there).
      this.#stallWatch();
      return 'cut';
    }
    this.#player.miss(this.events, what, recorded, asked, cause);
    return 'live';
  }

  /** Stops the run silently (a cut: see `#miss`). */
  #cutNow() {
    if (this.cut) return;
    this.cut = true;
    this.release();
    this.#player.onCut?.();
  }

  #watching = false;
  /** A cut run waiting on what never came: cut once no event came for 64 macrotasks. */
  #stallWatch() {
    if (this.#watching) return;
    this.#watching = true;
    (async () => {
      let seen = this.events, idle = 0;
      while (!this.cut && idle < 64) {
        await macrotask();
        if (this.events === seen) idle++;
        else {
          seen = this.events;
          idle = 0;
        }
      }
      this.#cutNow();
    })();
  }

  async openResponse(inner, streamFn, model, context, options, emit) {
    if (this.#player.live) return super.openResponse(inner, streamFn, model, context, options, emit);
    const n = this.#requests++;
    const recorded = this.#recorded?.requests[n];
    const { line: asked, keep, added, texts, commit } = this.request(n, model, context);
    if (recorded === undefined) {
      if (this.#miss(`request ${n}`, 'no more requests', added.length > 0 ? JSON.parse(added[added.length - 1]) : asked.model, undefined, true) === 'cut') return NEVER();
      return super.openResponse(inner, streamFn, model, context, options, emit);
    }
    const r = recorded.line;
    const m = asked.model ?? {};
    const wasM = r.model ?? {};
    let differs;
    if (m.provider !== wasM.provider || m.id !== wasM.id || m.api !== wasM.api) differs = ['the model', `${wasM.provider}/${wasM.id}`, `${m.provider}/${m.id}`];
    else if (r.systemPrompt !== asked.systemPrompt) differs = ['the system prompt', r.systemPrompt, asked.systemPrompt];
    else if (JSON.stringify(r.tools) !== JSON.stringify(asked.tools)) differs = ['the tools', r.tools, asked.tools];
    else if (recorded.keep !== keep || recorded.add.length !== added.length || recorded.add.some((m, i) => JSON.stringify(m) !== added[i])) {
      // Named by the first message that differs (the lists made whole only here).
      const was = recordedMessages(this.#recorded.requests, n).map((x) => JSON.stringify(x));
      const now = texts();
      const k = Math.max(0, firstDifference(was, now));
      differs = [`message ${k}`, was[k] === undefined ? 'no message' : JSON.parse(was[k]), now[k] === undefined ? 'no message' : JSON.parse(now[k])];
    }
    if (differs !== undefined) {
      if (this.#miss(`request ${n} differs in ${differs[0]}`, differs[1], differs[2]) === 'cut') return NEVER();
      return super.openResponse(inner, streamFn, model, context, options, emit);
    }
    // The request line goes to the new cassette as the recorder writes it.
    const rec = this.recorder;
    rec.nextRequest();
    commit();
    rec.write(asked);
    return inner.openResponse(async () => {
      const threw = recorded.threw;
      if (threw !== undefined && threw.notStream !== undefined) {
        // What the stream function gave that was no stream: the same kind of value again.
        rec.write(threw);
        return NOT_STREAMS[threw.notStream]?.(threw.value);
      }
      if (threw !== undefined) {
        rec.write(threw);
        if (threw.error !== undefined) throw new Error(threw.error.message);
        throw threw.thrown;
      }
      return recordStream(playStream(recorded, this), rec, n, this);
    }, model, context, options, emit);
  }

  executeTool(inner, tool, id, args, signal, onUpdate) {
    if (this.#player.live) return super.executeTool(inner, tool, id, args, signal, onUpdate);
    const list = this.#recorded?.tools.get(id) ?? [];
    const used = this.#calls.get(id) ?? 0;
    const call = list[used];
    const name = tool?.name;
    let differs;
    let absent = false;
    if (call === undefined) {
      differs = [`tool call ${id} (${name})`, 'no such call', { id, name, args }];
      absent = true;
    }
    else if (call.line.name !== name) differs = [`tool call ${id}`, call.line.name, name];
    else if (call.line.args !== undefined && JSON.stringify(call.line.args) !== safeJson(args)) differs = [`the arguments of tool call ${id} (${name})`, call.line.args, args];
    else if (call.line.unrecordable !== undefined || call.settle?.unrecordable !== undefined) differs = [`tool call ${id} (${name})`, `a value JSON cannot hold (${call.line.unrecordable ?? call.settle.unrecordable})`, 'its result'];
    else if (call.updates.some((u) => u.unrecordable !== undefined)) differs = [`tool call ${id} (${name})`, `an update JSON cannot hold (${call.updates.find((u) => u.unrecordable !== undefined).unrecordable})`, 'its updates'];

    if (differs !== undefined) {
      if (this.#miss(...differs, undefined, absent) === 'cut') return NEVER();
      return super.executeTool(inner, tool, id, args, signal, onUpdate);
    }
    this.#calls.set(id, used + 1);
    // A call with no result: the run ended without waiting for it (a listener failed the run
    // meanwhile), or its process died while it ran. Its recorded updates play; it never settles.
    if (call.settle === undefined && !this.#recorded.ended) this.#stallWatch();
    const played = (_tool, _id, _args, _signal, update) => {
      // What the tool did inside its `execute` call, done inside this one: its first updates,
      // a synchronous throw.
      for (const action of this.#schedule.syncSteps(call)) {
        if (action.kind === 'update') {
          try {
            update?.(undef(structuredClone(action.record.partial)));
          } catch {
            // As in the recorded run, which went on.
          }
        } else {
          const s = action.record;
          if (s.error !== undefined) throw new Error(s.error.message);
          if (s.thrown !== undefined) throw s.thrown;
        }
      }
      return this.#playCall(call, update);
    };
    return super.executeTool({ ...inner, executeTool: played }, tool, id, args, signal, onUpdate);
  }

  /** A recorded call's result, its later steps taken in the recorded order. */
  #playCall(call, update) {
    return new Promise((resolve, reject) => {
      this.#schedule.started(call, (action) => {
        if (action.kind === 'update') {
          try {
            update?.(undef(structuredClone(action.record.partial)));
          } catch {
            // What onUpdate threw reached the tool in the recorded run, which went on.
          }
          return;
        }
        const s = action.record;
        if (s.error !== undefined) reject(new Error(s.error.message));
        else if (s.thrown !== undefined) reject(s.thrown);
        else resolve(undef(structuredClone(s.result)));
      });
    });
  }

  hook(inner, config, name) {
    if (name !== 'getSteeringMessages' && name !== 'getFollowUpMessages') return super.hook(inner, config, name);
    const real = inner.hook(config, name);
    // No hook, no poll: as the recorded run, which polled only what it had.
    if (real === undefined) return undefined;
    const queue = name === 'getSteeringMessages' ? 'steering' : 'followUp';
    const polls = this.#recorded?.polls[queue] ?? [];
    const self = this;
    const played = async function poll(...a) {
      if (!self.#player.live) {
        const r = polls[self.#polls[queue]++];
        if (r !== undefined && r.unrecordable === undefined) return structuredClone(r.messages);
        if (self.#miss(`a ${queue} poll`, r === undefined ? 'no more polls' : `a value JSON cannot hold (${r.unrecordable})`, 'its messages', undefined, r === undefined) === 'cut') return NEVER();
      }
      return real.apply(this, a);
    };
    return super.hook({ ...inner, hook: () => played }, config, name);
  }

  clock(inner, kind) {
    const values = this.#recorded?.clocks[kind === 1 ? 1 : 0];
    const i = this.#clock[kind === 1 ? 1 : 0]++;
    if (!this.#player.live && values !== undefined && i < values.length) {
      const value = values[i];
      return super.clock({ clock: () => value }, kind);
    }
    return super.clock(inner, kind);
  }

  /** `outcome`: the run's messages, or what it failed with (named as the divergence's cause). */
  end(outcome) {
    super.end();
    if (this.#player.live || this.#recorded === undefined || this.#player.divergence !== undefined) return;
    const asked = this.#requests;
    if (asked < this.#recorded.requests.length) {
      this.#miss(`the run's end`, `request ${asked} and ${this.#recorded.requests.length - asked - 1} more`, 'no more requests', Array.isArray(outcome) ? undefined : outcome);
    }
  }
}

/** The messages of recorded request `n`, its deltas applied from the first. */
function recordedMessages(requests, n) {
  let list = [];
  for (let i = 0; i <= n; i++) {
    const r = requests[i];
    if (r === undefined) continue;
    list = [...list.slice(0, r.keep), ...r.add];
  }
  return list;
}

/** What a stream function gave that was no event stream, by its kind, made again. */
const NOT_STREAMS = {
  undefined: () => undefined, null: () => null, number: (v) => v, string: (v) => v, boolean: (v) => v,
  array: () => [], object: () => ({}), function: () => () => {}, bigint: () => 0n, symbol: () => Symbol('not a stream'),
};

/** What a replayed loop run resolves with when it was cut off (tape.js). */
const CUT = Symbol('cut');

/** A Promise that never settles: what a run cut off when recorded waits for in replay. */
const NEVER = () => new Promise(() => {});

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The first index where two lists of texts differ, or -1. */
function firstDifference(a, b) {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Plays a cassette's runs back, in order, writing a cassette of its own as it goes. */
class Player extends Recorder {
  #tape;
  #run = 0;
  live = false;
  onMiss;
  divergence;
  onAbort;

  constructor(tape, onMiss, onLine) {
    super({ onLine });
    this.#tape = tape;
    this.onMiss = onMiss;
  }

  /** Whether the cassette's run after the one playing is a resumption (a new process's). */
  resumesNext() {
    return this.#tape.runs[this.#run]?.line.mode === 'resume';
  }

  taping(run) {
    const recorded = this.#tape.runs[this.#run++];
    const taping = new PlayTaping(this, run, this.live ? undefined : recorded);
    if (!this.live) {
      if (recorded === undefined) this.miss(0, `run ${this.#run - 1}`, 'no more runs', run.mode);
      else if (recorded.line.mode !== run.mode) this.miss(0, `run ${this.#run - 1}'s start`, recorded.line.mode, run.mode);
    }
    return taping;
  }

  /** A miss at event `index`: goes live, or stops the run with a `ReplayDivergence`. */
  miss(index, what, recorded, asked, cause) {
    if (this.onMiss === 'live') {
      this.live = true;
      return;
    }
    throw this.diverge(index, what, recorded, asked, cause);
  }

  /** The divergence (the first one is kept, and stops the run). */
  diverge(index, what, recorded, asked, cause) {
    const error = new ReplayDivergence(index, what, recorded, asked, cause);
    if (this.divergence === undefined) {
      this.divergence = error;
      this.onAbort?.();
    }
    return error;
  }
}

/**
 * Replays a cassette: the same runs again, offline. `options` are the `Agent`'s options (its
 * tools, hooks and listeners are code and run again) for an `agent` cassette, or
 * `{ context: { tools, … }, config }` for one the loop functions recorded; with
 * `onMiss: "live"` (default `"error"`) the run goes on live from the first miss, with the
 * stream function and tools of `options`, and goes on recording; `onEvent(event)` sees each
 * event. Resolves with `{ events, messages, cassette, agent? }` (`cassette`: the Recorder that
 * wrote this replay, live part included); a divergence rejects with a `ReplayDivergence`.
 */
export async function replay(cassette, options = {}) {
  const tape = readCassette(cassette);
  const { onMiss = 'error', onEvent, onLine, ...rest } = options ?? {};
  if (onMiss !== 'error' && onMiss !== 'live') throw invalid('replay: onMiss must be "error" or "live"');
  if (onEvent !== undefined && typeof onEvent !== 'function') throw invalid('replay: onEvent must be a function');
  const player = new Player(tape, onMiss, onLine);
  const events = [];
  const see = (event) => {
    // After a divergence the run only winds down (its abort): nothing of it happened.
    if (player.divergence !== undefined) return undefined;
    events.push(event);
    return onEvent?.(event);
  };
  const stopped = () => Object.defineProperty(player.divergence, 'events', { value: events, enumerable: false, configurable: true });
  let out;
  try {
    out = tape.kind === 'agent' ? await replayAgent(tape, player, rest, see) : await replayLoop(tape, player, rest, see);
  } catch (error) {
    if (player.divergence !== undefined) throw stopped();
    throw error;
  }
  if (player.divergence !== undefined) throw stopped();
  return { ...out, events, cassette: player, ...(player.cut ? { cut: true } : {}) };
}

/** The model a run used, as far as the cassette knows it: the options' model when it is the
 * same one, else the cassette's `{ provider, id, api }`. */
function modelFor(line, given, whole) {
  const m = line?.model;
  if (given != null && (m === undefined || (given.provider === m.provider && given.id === m.id && given.api === m.api))) return given;
  if (whole !== undefined) return whole;
  // The cassette's model (written whole but its headers; older lines name only provider, id, api).
  return m === undefined ? given : { name: m.id, baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0, ...m };
}

async function replayAgent(tape, player, options, see) {
  const first = tape.runs[0]?.line;
  const initialState = { ...(options.initialState ?? {}) };
  initialState.model = modelFor(first, initialState.model);
  initialState.messages = tape.runs[0]?.messages ?? initialState.messages ?? [];
  /** An agent restored from a `resume` run's start (a cassette that begins with one, or the
   * run after a process died). */
  const restored = (run) => new Agent({
    ...options, initialState, record: player,
    restore: { version: CHECKPOINT_VERSION, messages: run.messages, model: initialState.model, thinkingLevel: run.line.reasoning ?? 'off', steeringMode: options.steeringMode ?? 'one-at-a-time', followUpMode: options.followUpMode ?? 'one-at-a-time', steering: [], followUps: [], position: run.line.position, discardedUsage: [] },
  });
  let agent;
  const use = (next) => {
    agent = next;
    player.onAbort = () => next.abort();
    next.subscribe((event) => see(event));
  };
  if (first?.mode === 'resume') use(restored(tape.runs[0]));
  else {
    if (first?.reasoning !== undefined) initialState.thinkingLevel = first.reasoning;
    use(new Agent({ ...options, initialState, record: player }));
  }
  let cut = false;
  for (const run of tape.runs) {
    if (player.divergence !== undefined) break;
    const line = run.line;
    if (run !== tape.runs[0]) {
      // After a run cut off, the next is the resumed one, in a new process: a new agent.
      if (cut && line.mode === 'resume') use(restored(run));
      else if (JSON.stringify(agent.state.messages) !== JSON.stringify(run.messages)) agent.state.messages = run.messages;
    }
    const wasCut = new Promise((resolve) => {
      player.onCut = () => resolve('cut');
    });
    const work = line.mode === 'prompt' ? agent.prompt(structuredClone(line.prompts ?? [])) : line.mode === 'continue' ? agent.continue() : agent.resume();
    cut = (await Promise.race([work.then(() => 'done'), wasCut])) === 'cut';
  }
  // The cassette ends inside its last run: its process died there (or it was cut).
  player.cut = cut;
  // The cassette is played: the agent's next runs are live (recorded on into the replay's).
  player.live = true;
  return { agent, messages: agent.state.messages };
}

async function replayLoop(tape, player, options, see) {
  const messages = [];
  for (const run of tape.runs) {
    if (player.divergence !== undefined) break;
    const line = run.line;
    const controller = new AbortController();
    player.onAbort = () => controller.abort();
    const given = options.context ?? {};
    const context = { ...given, messages: structuredClone(run.messages) };
    if (line.systemPrompt !== undefined) context.systemPrompt = line.systemPrompt;
    const config = { ...(options.config ?? {}), record: player };
    config.model = modelFor(line, config.model);
    if (line.reasoning !== undefined) config.reasoning = line.reasoning;
    const wasCut = new Promise((resolve) => {
      player.onCut = () => resolve(CUT);
    });
    const work = line.mode === 'prompt' ? runAgentLoop(structuredClone(line.prompts ?? []), context, config, see, controller.signal, options.streamFn)
      : line.mode === 'continue' ? runAgentLoopContinue(context, config, see, controller.signal, options.streamFn)
        : runAgentLoopResume({ version: CHECKPOINT_VERSION, messages: context.messages, position: line.position }, context, config, see, controller.signal, options.streamFn);
    const got = await Promise.race([work, wasCut]);
    if (got === CUT) {
      player.cut = true;
      continue;
    }
    player.cut = false;
    messages.push(...got);
  }
  return { messages };
}

/**
 * The checkpoint a cassette holds at event `at` (its last event boundary at or before it):
 * `{ version, messages, position, run }`, `position` undefined once the run had ended.
 */
export function checkpointAt(cassette, at) {
  const { line, ord, ...point } = pointAt(readCassette(cassette), at, 'checkpointAt');
  return point;
}

/** `checkpointAt` of a read cassette, with the run's start line. */
function pointAt(tape, at, who = 'fork') {
  if (!Number.isInteger(at) || at < 0) throw invalid(`${who}: at must be an event index (an integer >= 0)`);
  // Events count on across runs: each run's boundaries hold the run's own indexes.
  let offset = 0;
  for (let r = 0; r < tape.runs.length; r++) {
    const run = tape.runs[r];
    const count = run.events.length === 0 ? 0 : run.events[run.events.length - 1].i + 1;
    if (at >= offset + count) {
      offset += count;
      continue;
    }
    let position;
    let event;
    const transcript = run.messages.slice();
    for (const e of run.events) {
      if (e.i + offset > at) break;
      if (e.event === 'message_end') transcript.push(e.message);
      position = e.position;
      event = e;
    }
    return { version: CHECKPOINT_VERSION, messages: transcript, position: position?.at === 'done' ? undefined : position, run: r, event: event?.i === undefined ? undefined : event.i + offset, line: run.line, ord: event?.ord ?? -1 };
  }
  throw invalid(`${who}: the cassette has no event ${at}`);
}

/**
 * The `Agent` snapshot a fork starts from: the cassette's checkpoint at event `at` (an
 * `Agent`'s cassette), with `change` applied (see `fork`). `options` gives the model when the
 * cassette's is meant (`initialState.model`) and the queue modes. An `invalid_input` error
 * names a bad `at` or `change`.
 */
export function forkSnapshot(cassette, at, change, options = {}) {
  const tape = readCassette(cassette);
  if (tape.kind !== 'agent') throw invalid('fork: the cassette was recorded by the loop functions; fork takes an Agent\'s');
  const point = pointAt(tape, at);
  const messages = structuredClone(point.messages);
  // What the queues held at `at`: the messages queued up to it, less those its polls took
  // (first in, first out). A message polled but not sent yet is in the position.
  const held = { steering: [], followUp: [] };
  for (const r of tape.queues) {
    // Those written before the fork point's line (a message queued by a listener of its event
    // comes before it; the loop's next poll after it).
    if (!(r.ord < point.ord)) continue;
    const list = held[r.queue];
    if (list === undefined) continue;
    if (r.type === 'queue') {
      if (r.message !== undefined) list.push(r.message);
    } else list.splice(0, Array.isArray(r.messages) ? r.messages.length : 0);
  }
  const steering = held.steering;
  let model = modelFor(point.line, options.initialState?.model);
  if (change != null) {
    if (typeof change !== 'object' || Array.isArray(change)) throw invalid('fork: change must be an object');
    const kinds = Object.keys(change).filter((k) => ['model', 'message', 'toolResult', 'steer'].includes(k));
    if (kinds.length !== Object.keys(change).length) throw invalid(`fork: change has no kind ${brief(Object.keys(change).find((k) => !kinds.includes(k)))} (model, message, toolResult or steer)`);
    if (change.model !== undefined) {
      if (change.model === null || typeof change.model !== 'object') throw invalid('fork: change.model must be a model object');
      model = change.model;
    }
    if (change.message !== undefined) {
      const { index, with: message } = change.message ?? {};
      if (!Number.isInteger(index) || index < 0 || index >= messages.length) throw invalid(`fork: change.message.index ${brief(index)} is not a message of the ${messages.length} at event ${at}`);
      if (message === null || typeof message !== 'object' || typeof message.role !== 'string') throw invalid('fork: change.message.with must be a message');
      messages[index] = message;
    }
    if (change.toolResult !== undefined) {
      const { toolCallId, ...result } = change.toolResult ?? {};
      if (result.content !== undefined && !Array.isArray(result.content)) throw invalid('fork: change.toolResult.content must be an array of content blocks');
      if (result.isError !== undefined && typeof result.isError !== 'boolean') throw invalid('fork: change.toolResult.isError must be a boolean');
      const i = messages.findIndex((m) => m?.role === 'toolResult' && m.toolCallId === toolCallId);
      // A call that ended and whose result message is not in the transcript yet: its result in
      // the position.
      const ended = Array.isArray(point.position?.ended) ? point.position.ended.findIndex((e) => e?.id === toolCallId) : -1;
      if (i >= 0) messages[i] = { ...messages[i], ...result };
      else if (ended >= 0) {
        const { isError, ...fields } = result;
        const entry = point.position.ended[ended];
        point.position = { ...point.position, ended: point.position.ended.map((e, k) => (k === ended ? { ...entry, result: { ...entry.result, ...fields }, ...(isError === undefined ? {} : { isError }) } : e)) };
      } else throw invalid(`fork: no result of tool call ${brief(toolCallId)} at event ${at}`);
    }
    if (change.steer !== undefined) {
      if (change.steer === null || typeof change.steer !== 'object' || typeof change.steer.role !== 'string') throw invalid('fork: change.steer must be a message');
      steering.push(change.steer);
    }
  }
  let position = point.position;
  // The model the run goes on with is the one its position names, when it names one: the
  // changed one, or the options' one when it is the same (the cassette's has no headers).
  if (change?.model !== undefined && position?.model !== undefined) position = { ...position, model: change.model };
  else if (position?.model !== undefined) position = { ...position, model: modelFor({ model: position.model }, options.initialState?.model, position.model) };
  return {
    version: CHECKPOINT_VERSION, messages, model, thinkingLevel: point.line.reasoning ?? 'off',
    steeringMode: options.steeringMode ?? 'one-at-a-time', followUpMode: options.followUpMode ?? 'one-at-a-time',
    steering, followUps: held.followUp, discardedUsage: [],
    ...(position === undefined ? {} : { position }),
  };
}

/**
 * Forks a cassette at event `at`: a new `Agent` (with `options`) restored to the position the
 * cassette holds there, with `change` applied, then resumed live, recording into a new
 * cassette. Nothing before `at` runs again. `change`: `{ model }` (another model),
 * `{ message: { index, with } }` (a transcript message replaced), `{ toolResult: { toolCallId,
 * content, details?, isError? } }` (a tool's result replaced) or `{ steer: message }` (a
 * steering message added). Resolves with `{ agent, messages, events, cassette }`.
 */
export async function fork(cassette, { at, change } = {}, options = {}) {
  const { onEvent, onLine, ...rest } = options ?? {};
  const snapshot = forkSnapshot(cassette, at, change, rest);
  const recorder = new Recorder({ onLine });
  // A call whose tool was running at `at` ends after it: the fork runs it (it has not ended
  // there), unless the options decide otherwise.
  const onInterruptedToolCall = rest.onInterruptedToolCall ?? (() => 'rerun');
  const agent = new Agent({ ...rest, onInterruptedToolCall, restore: snapshot, record: recorder });
  const events = [];
  agent.subscribe((event) => {
    events.push(event);
    return onEvent?.(event);
  });
  if (snapshot.position !== undefined) await agent.resume();
  else if (snapshot.steering.length > 0) await agent.continue();
  // Forked at the end, with nothing to run: a cassette of no run, its agent's next runs to come.
  else recorder[HEADER]('agent');
  return { agent, messages: agent.state.messages, events, cassette: recorder };
}
