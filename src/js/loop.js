// pi-agent-core's loop API over the wasm core. The loop itself runs in Rust; this module
// keeps pi's signatures, owns the module-level default stream function, and reads JS
// response streams for the core: it iterates the stream and emits each `message_update`
// itself, handing wasm only the `start` partial and the final message, so a streamed delta
// never crosses the boundary (shared/design/streaming-boundary.md, point 4).
import { EventStream, AssistantMessageEventStream } from './event-stream.js';
import { guarded, crashText } from './wasm.js';
import { watchRun, watchResponse, crashedToolCall } from './crash.js';
import { envApiKey } from './env-keys.js';
import { describeError } from './describe-error.js';
import { redact } from './redact.js';
import { emptyAssistantMessage } from './messages.js';
import { ToolArguments } from './streaming-json.js';
import { runGlue, callIds } from './pending.js';
import { bodyReaderOf, bytesOf, cancelQuietly, quietly, readPastEmpty } from './body-reader.js';

/** pi's request identity for agent loops (L-37). */
export const DEFAULT_AGENT_IDENTITY = {
  attribution: { name: 'pi', url: 'https://pi.dev', categories: ['cli-agent'] },
};

// The built-in stream function is the default until one is set; `setDefaultStreamFn(undefined)`
// restores pi's behaviour of having none (L-36).
let defaultStreamFn = streamSimple;

/** Sets (or clears) the stream function used when a call passes none (L-36). */
export function setDefaultStreamFn(streamFn) {
  defaultStreamFn = streamFn;
}

/** An `Error` with pi's `message` and this package's stable `code` (docs/errors.md). */
export function codedError(code, message) {
  const error = new Error(message);
  error.code = code;
  return error;
}

export function getDefaultStreamFn() {
  if (!defaultStreamFn) {
    throw codedError('no_default_stream_fn', 'No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().');
  }
  return defaultStreamFn;
}

// What Response#next returns to wasm: the end of the stream, a terminal event, or (as an
// object) the copy of a `start` event's partial that `message_start` carries.
const FINISHED = 0;
const TERMINAL = 2;

/** One response stream, read on behalf of the core (L-83, L-85). */
class Response {
  #stream;
  #iterator;
  #emit;
  #started = false;
  #terminal = false;

  constructor(stream, emit) {
    // As pi's `for await`, a TypeError; this one says what the stream function gave.
    const iterate = stream?.[Symbol.asyncIterator];
    if (typeof iterate !== 'function') {
      const got = stream === null ? 'null' : Array.isArray(stream) ? 'an array' : typeof stream;
      throw new TypeError(`The stream function's result is not an event stream: got ${got}`);
    }
    this.#stream = stream;
    this.#iterator = iterate.call(stream);
    this.#emit = emit;
    const tap = STEP_READERS.get(stream);
    this.#onStep = tap?.onStep;
    this.#onResult = tap?.onResult;
  }

  /** A recording's readers of each step, at the moment the loop reads it, and of the
   * stream's result (tape.js `recordStream`). */
  #onStep;
  #onResult;

  async next() {
    // The hot path: one iteration per streamed delta. Fields are read into locals once.
    const iterator = this.#iterator;
    const emit = this.#emit;
    const started = this.#started;
    const onStep = this.#onStep;
    for (;;) {
      let step;
      if (onStep === undefined) step = await iterator.next();
      else {
        try {
          step = await iterator.next();
        } catch (error) {
          onStep(undefined, error);
          throw error;
        }
        onStep(step);
      }
      // As `for await` in pi: a result that is no object, or an event that is none, rejects
      // the run (skipping either would spin forever on a stream that keeps giving them).
      if (step === null || typeof step !== 'object') throw new TypeError(`Iterator result ${String(step)} is not an object`);
      if (step.done) return FINISHED;
      const event = step.value;
      switch (event.type) {
        case 'start':
          this.#started = true;
          // pi's `{ ...partial }`, made here so a getter that throws rejects the run.
          return { ...event.partial };
        case 'done':
        case 'error':
          this.#terminal = true;
          return TERMINAL;
        case 'text_start': case 'text_delta': case 'text_end':
        case 'thinking_start': case 'thinking_delta': case 'thinking_end':
        case 'toolcall_start': case 'toolcall_delta': case 'toolcall_end': {
          // Updates before any `start` are dropped (L-83).
          if (!started) break;
          const pending = emit({ type: 'message_update', assistantMessageEvent: event, message: { ...event.partial } });
          // As pi's `await emit(...)`: a thenable is awaited (a throwing `then` rejects), any
          // other value (null included) is not.
          if (pending != null && typeof pending.then === 'function') await pending;
          break;
        }
        default:
          // Unknown event types are ignored (L-83).
          break;
      }
    }
  }

  /** The stream's result; `undefined` when it ended with neither a terminal event nor a
   * result, where pi would wait forever (L-15). */
  async result() {
    let result;
    if (this.#onResult === undefined) result = this.#stream.result();
    else {
      try {
        result = this.#onResult(this.#stream.result());
      } catch (error) {
        this.#onResult(undefined, { error });
        throw error;
      }
    }
    if (this.#terminal) return result;
    // end(message) resolves the result before the iterator finishes, so a result that is
    // not there one timer tick later never will be.
    const none = new Promise((resolve) => setTimeout(resolve, 0, undefined));
    return Promise.race([result, none]);
  }
}

/** Called by wasm for every request: calls the stream function (L-79). */
async function openResponse(streamFn, model, context, options, emit) {
  return new Response(await streamFn(model, context, options), emit);
}

/**
 * `{ ...object }` for a copy that gets new keys: the same own keys, values and order. V8 makes
 * a spread's copy slow to add a key to (about 0.45 µs a key, measured in Node 20: 1.7 µs for
 * the options below, against 0.06 µs for this), so Object.assign makes it, unless `object`
 * has an own `__proto__` key, which Object.assign would set as the copy's prototype.
 */
function extensibleCopy(object) {
  return object != null && Object.hasOwn(object, '__proto__') ? { ...object } : Object.assign({}, object);
}

/**
 * The options makers of configs whose keys are fixed and known (an `Agent`'s own): `config →
 * (model, reasoning, apiKey, signal) → options`, the object `streamOptions` makes, as one
 * literal. A copy of a config of many keys is a V8 dictionary, slow to make (3 µs for an
 * `Agent`'s 21 keys, by Object.assign or a spread); the literal is not.
 */
export const OPTIONS_MAKERS = new WeakMap();

/** The options object the stream function gets (L-80): pi's `{ ...config, apiKey, identity, signal }`. */
function streamOptions(config, model, reasoning, apiKey, signal) {
  const make = OPTIONS_MAKERS.get(config);
  if (make !== undefined) return make(model, reasoning, apiKey, signal);
  const options = extensibleCopy(config);
  options.model = model;
  if (reasoning !== undefined || 'reasoning' in options) options.reasoning = reasoning;
  options.apiKey = apiKey;
  options.identity = mergeIdentity(config.identity);
  options.signal = signal;
  return options;
}

/** pi-ai's `mergeClientIdentity(DEFAULT_AGENT_IDENTITY, identity)` (L-78), made for each
 * request as pi makes it: field by field, later sources winning, undefined fields skipped. */
export function mergeIdentity(identity) {
  const merged = {};
  for (const source of [DEFAULT_AGENT_IDENTITY, identity]) {
    if (!source) continue;
    if (source.userAgent !== undefined) merged.userAgent = source.userAgent;
    if (source.attribution !== undefined) merged.attribution = source.attribution;
    if (source.version !== undefined) merged.version = source.version;
  }
  return merged;
}

/** A shallow copy, optionally with one key set: pi's `{...partial}` and the final message
 * with `thinkingLevel` (on a copy, so the stream function's own object is untouched). */
function copyWith(object, key, value) {
  if (key === undefined) return { ...object };
  const copy = extensibleCopy(object);
  copy[key] = value;
  return copy;
}

/**
 * The final message of a JS stream whose `content` is not JSON: a copy for the core to read,
 * in which each block JSON cannot hold (a BigInt, a cycle, a getter that throws) is replaced.
 * A tool call keeps its id and name and carries the reason in `argumentsError` when its
 * arguments are the cause, so that call alone gets an error result (pi's validation copies
 * the arguments and fails such a call alone); any other block keeps only its `type` (the
 * loop reads no other block, and listeners get the stream's own objects). `undefined` when
 * no block is the cause.
 */
function jsonArguments(message) {
  const content = message?.content;
  if (!Array.isArray(content)) return undefined;
  const json = (value) => {
    try {
      JSON.stringify(value);
    } catch (error) {
      return describeError(error);
    }
  };
  let marked = false;
  const blocks = content.map((block) => {
    if (json(block) === undefined) return block;
    marked = true;
    if (block?.type !== 'toolCall') return { type: block?.type };
    const why = json(block.arguments);
    const call = { type: 'toolCall', id: block.id, name: block.name, arguments: why === undefined ? block.arguments : {} };
    if (why !== undefined) call.argumentsError = `the arguments are not JSON (${why})`;
    return call;
  });
  return marked ? { ...message, content: blocks } : undefined;
}

/** At an assistant message's `message_end`, keeps its tool call blocks on the run's glue, by
 * id: pi's tool hooks get these very objects as `toolCall`, and its tool execution events
 * their `arguments`. An id used twice is left out; a message whose reads throw keeps none
 * (the core's copies are used then). */
function callBlocks(message) {
  let byId;
  try {
    if (message.role !== 'assistant') return;
    byId = new Map();
    for (const block of message.content) {
      if (block?.type !== 'toolCall' || typeof block.id !== 'string') continue;
      byId.set(block.id, byId.has(block.id) ? undefined : block);
    }
  } catch {
    this.blocks = undefined;
    return;
  }
  this.blocks = byId;
}

/** pi's `args` in tool call `id`'s execution events: its block's `arguments`, read now;
 * `undefined` when the run's response has no such block, or the read throws (the core's copy
 * is used then: the call's error result names the cause). */
function callArguments(id) {
  const block = this.blocks?.get(id);
  if (block === undefined) return undefined;
  try {
    return block.arguments;
  } catch {
    return undefined;
  }
}

/** `tool.prepareArguments` (`f`) as pi calls it: with the call's own `arguments` (the
 * response's block with the id of the core's `call`, when there is one). */
function prepareArguments(f, tool, call) {
  const prepared = f.call(tool, (this.blocks?.get(call?.id) ?? call).arguments);
  // pi clones what it returns (structuredClone), which fails the call for a Promise.
  if (typeof prepared?.then === 'function') throw new TypeError(`prepareArguments returned a Promise; it must return the arguments (pi: "#<Promise> could not be cloned.")`);
  return prepared;
}

/** pi's context object of a tool hook, in pi's key order (`afterToolCall`'s, with an
 * `isError`, has `result` and `isError` before `context`); `toolCall` is the response's own
 * block with the id of the core's `toolCall` when there is one. */
function toolHookContext(assistantMessage, toolCall, args, context, result, isError) {
  toolCall = this.blocks?.get(toolCall?.id) ?? toolCall;
  return isError === undefined ? { assistantMessage, toolCall, args, context } : { assistantMessage, toolCall, args, result, isError, context };
}

/** The most items read from one array: far above any real transcript or tool list, and
 * below what would exhaust memory (a Proxy may claim a length of 2^32 - 1). */
const MAX_ITEMS = 2 ** 24;

/** An `invalid_input` error, as the core's own. */
function invalidInput(message) {
  return Object.assign(new Error(message), { code: 'invalid_input' });
}

/**
 * The items of a caller's array as a fresh array, or `undefined` for a value that is no
 * array. Its traps and getters run here, where a throw rejects the run as pi's spread of it
 * would.
 */
function items(value, what) {
  if (!Array.isArray(value)) return undefined;
  const n = value.length;
  if (n > MAX_ITEMS) throw invalidInput(`${what} has more than ${MAX_ITEMS} items`);
  const out = [];
  for (let i = 0; i < n; i++) out.push(value[i]);
  return out;
}

/** `[obj[a], obj[b], …]` for `names` "a,b,…": the wasm side's reads of a caller's object,
 * where a throwing getter or trap is a plain throw. */
function fields(obj, names) {
  return names.split(',').map((name) => obj[name]);
}

/**
 * A plain copy of a result object (a tool's, `beforeToolCall`'s, `afterToolCall`'s) as pi's reads see it: its own
 * enumerable properties, with each field in `names` ("a,b,…") set as `value[name]` reads it, or left out when that
 * is undefined. So a class's getters, a prototype's fields and a Proxy's `get` trap count as they do in pi's
 * `result.content`. With `ifDifferent`, `undefined` when the JSON copy of `value` already holds each field as read.
 * A throwing getter or trap throws here.
 */
function view(value, names, ifDifferent) {
  const list = names.split(',');
  const copied = (name) => {
    const own = Object.getOwnPropertyDescriptor(value, name);
    return own === undefined ? value[name] === undefined : own.enumerable && 'value' in own;
  };
  if (ifDifferent && list.every(copied)) return undefined;
  const out = { ...value };
  for (const name of list) {
    const v = value[name];
    if (v === undefined) delete out[name];
    else out[name] = v;
  }
  return out;
}

/**
 * A result object split for the core, which keeps the object's values and reads none of them
 * (one owner per value): `[json, place, value, place, value, …]`, where `json` is the JSON
 * text of its own enumerable members with each value that is no JSON primitive (an object, a
 * function, a BigInt, a symbol) as `null`, and each such value follows with its member place.
 * A throwing getter or trap throws here, as pi's reads of the result would.
 */
function split(value) {
  // A literal, not `Object.create(null)` (a dictionary-mode object, which JSON.stringify
  // writes about twice as slowly); its one inherited key is defined as an own one.
  const plain = {};
  const out = [''];
  let place = 0;
  for (const key of Object.keys(value)) {
    let v = value[key];
    if (v === undefined) continue;
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      out.push(place, v);
      v = null;
    }
    if (key === '__proto__') Object.defineProperty(plain, key, { value: v, enumerable: true, writable: true, configurable: true });
    else plain[key] = v;
    place += 1;
  }
  out[0] = JSON.stringify(plain);
  return out;
}

/** Cuts the table's own list `own` to its first `keep` items, appends the run's objects at
 * `places` (their places in the identity table), and returns a copy to hand out. */
function extend(own, keep, objects, places) {
  own.length = keep;
  for (let i = 0; i < places.length; i++) own.push(objects[places[i]]);
  return own.slice();
}

/** How many first items of `items` are the very items of `own`, in order. */
function shared(items, own) {
  const n = Math.min(items.length, own.length);
  let i = 0;
  while (i < n && items[i] === own[i]) i++;
  return i;
}

/**
 * The context the hooks get, as pi's `currentContext`: one object for the run, whose
 * `messages` array the loop appends to, so a hook that keeps it sees the transcript grow,
 * and a hook's changes to it in place (a message pushed, a tool added) reach the next
 * request. `{ context, messages, items, tools, toolItems }`: the object, and what its
 * `messages` and `tools` were at the last sync, with a copy of their items. At a run's start
 * it is pi's `{ ...context, messages: [] }` (the core pushes the transcript before a hook
 * sees it); a context a hook returned is taken as it is (pi's `currentContext = update.context`).
 */
function liveContext(context, copy) {
  const own = copy ? { ...context, messages: [] } : context;
  const list = copy ? [] : items(own.messages, 'context.messages') ?? [];
  return { context: own, messages: own.messages, items: list, tools: own.tools, toolItems: items(own.tools, 'context.tools') };
}

/** Appends the run's objects at `places` to the live `messages`, as pi's pushes do, after
 * the first `keep` items of the last sync (the core only appends to a context, so that is
 * all of them, and what a hook changed since stays for the next sync to read); returns the
 * context object. */
function livePush(live, keep, objects, places) {
  const { messages, items: own } = live;
  if (own.length !== keep) {
    messages.length = keep;
    own.length = keep;
  }
  for (let i = 0; i < places.length; i++) {
    const m = objects[places[i]];
    messages.push(m);
    own.push(m);
  }
  return live.context;
}

/** Whether `list` is the array `array` still holding `own`'s items. */
function unchanged(list, array, own) {
  return list === array && Array.isArray(list) && list.length === own.length && shared(list, own) === own.length;
}

/** Whether `value` is the live `messages`, unchanged since the last sync. */
function liveSame(live, value) {
  return unchanged(value, live.messages, live.items);
}

/** What hooks changed in the live context since the last sync: `undefined` for nothing,
 * else `[k, items, tools]`: the messages' items now (a fresh array) and the first index at
 * which they differ from the last sync's, and the tools' items when they changed. */
function livePull(live) {
  const { context } = live;
  const messages = context.messages;
  const tools = context.tools;
  let k = live.items.length;
  let changed = false;
  if (!unchanged(messages, live.messages, live.items)) {
    const list = items(messages, 'context.messages');
    if (list === undefined) throw invalidInput('a hook set context.messages to something that is not an array');
    k = shared(list, live.items);
    live.messages = messages;
    live.items = list;
    changed = true;
  }
  let toolList;
  if (!(tools === live.tools && (tools == null || unchanged(tools, live.tools, live.toolItems)))) {
    toolList = items(tools, 'context.tools') ?? [];
    live.tools = tools;
    live.toolItems = toolList;
    changed = true;
  }
  return changed ? [k, live.items, toolList] : undefined;
}

/** The hooks pi tests with `if` (the others it calls with `?.()`). */
const TESTED_HOOKS = new Set(['transformContext', 'getApiKey', 'beforeToolCall', 'afterToolCall']);

/** `config[name]` as pi calls it: `undefined` when absent (falsy for the hooks pi tests with
 * `if`, nullish for the others), else the function, or pi's "is not a function" TypeError. */
function hook(config, name) {
  const f = config[name];
  if (f === undefined || f === null || (!f && TESTED_HOOKS.has(name))) return undefined;
  if (typeof f !== 'function') throw new TypeError(`config.${name} is not a function`);
  return f;
}

/** `JSON.stringify(value)`, or an `invalid_input` error naming `what`. */
function json(value, what) {
  try {
    return JSON.stringify(value);
  } catch (error) {
    throw invalidInput(`${what} cannot be converted to JSON: ${describeError(error)}`);
  }
}

/**
 * A tool as the core reads it, as JSON text: `[executionMode, declaration, replay === "safe"]`, the declaration
 * as pi's `toToolDeclaration` makes it (L-26: name, description, the parameters as JSON,
 * constrainedSampling if defined). pi compares declarations as JSON, so a part that is not
 * JSON, or no parameters at all, fails the run there as here.
 */
function readTool(tool) {
  if (tool === null || (typeof tool !== 'object' && typeof tool !== 'function')) throw invalidInput('context.tools must hold tool objects');
  const { name, executionMode, parameters, description, constrainedSampling, replay } = tool;
  const label = typeof name === 'string' ? name : '';
  const schema = json(parameters, `the parameters of tool ${label}`);
  if (schema === undefined) throw invalidInput(`the parameters of tool ${label} are missing`);
  let declaration = `{"name":${json(name, 'a tool name') ?? 'null'}`;
  const text = json(description, 'a tool description');
  if (text !== undefined) declaration += `,"description":${text}`;
  declaration += `,"parameters":${schema}`;
  if (constrainedSampling !== undefined) declaration += `,"constrainedSampling":${json(constrainedSampling, 'constrainedSampling') ?? 'null'}`;
  return `[${JSON.stringify(typeof executionMode === 'string' ? executionMode : null)},${declaration}},${replay === 'safe'}]`;
}

/** The kinds of a built-in response's records, by the index the core gives each (the
 * `kind` constants of src/wasm/glue.rs, checked by tests/contract.rs): the nine update
 * types, then `set_meta` (top-level fields) and `assign_block` (a block's late fields),
 * which only edit, and `end_read`, the mark of the response's end as read. A
 * `toolcall_start` record's delta is the argument text the call opened with. */
const RECORD_KINDS = ['text_start', 'text_delta', 'text_end', 'thinking_start', 'thinking_delta', 'thinking_end',
  'toolcall_start', 'toolcall_delta', 'toolcall_end', 'set_meta', 'assign_block', 'end_read'];
/** Each name of `list` by its index. */
const indexes = (list) => Object.freeze(Object.fromEntries(list.map((name, i) => [name, i])));
const R = indexes(RECORD_KINDS);
/** The stream events the loop delivers as `message_update`s (the first nine kinds). */
export const UPDATE_KINDS = new Set(RECORD_KINDS.slice(0, R.set_meta));

/** Per JS partial of a built-in response: the glue's own references to its blocks (as a
 * provider keeps them, so a sink that replaces `partial.content` breaks nothing), each tool
 * call's argument parser, and whether the end was delivered. */
const streams = new WeakMap();

function streamOf(partial) {
  let state = streams.get(partial);
  if (state === undefined) streams.set(partial, (state = { blocks: [], args: [], ended: false }));
  return state;
}

/** Applies one record of a built-in (Rust) response to the JS copy of its partial and returns
 * the `message_update` event, or `undefined` for the records that only edit. A record is
 * `[kind, contentIndex, delta, block, head, replaced, meta]`, absent fields null or left off.
 * A tool call's arguments are its JSON text so far as pi-ai's parser shows it (a new object
 * whenever they change), or `replaced` when the provider sent them whole (an object), or the
 * text they start over from (a string). Cost: the delta. */
function applyRecord(partial, state, r) {
  const kind = r[0], index = r[1], delta = r[2], block = r[3], meta = r[6];
  if (meta != null) assignMeta(partial, meta);
  if (kind === R.end_read) state.ended = true;
  if (kind >= R.set_meta) {
    const target = state.blocks[index];
    if (kind === R.assign_block && target !== null && typeof target === 'object') Object.assign(target, block);
    return undefined;
  }
  const blocks = state.blocks;
  if (block != null) {
    blocks[index] = block;
    const content = partial.content;
    if (Array.isArray(content)) content[index] = block;
    if (kind === R.toolcall_start) {
      // A call may open with some argument text (a Responses item's `arguments`).
      state.args[index] = new ToolArguments();
      if (delta != null) block.arguments = state.args[index].append(delta);
    }
  } else if (kind === R.text_delta) blocks[index].text += delta;
  else if (kind === R.thinking_delta) blocks[index].thinking += delta;
  else if (kind === R.toolcall_delta) {
    const target = blocks[index], head = r[4], replaced = r[5];
    if (head != null) Object.assign(target, head);
    if (typeof replaced === 'string') {
      // The provider's full text replaced what had streamed: the parse starts over from it.
      target.arguments = (state.args[index] = new ToolArguments()).append(replaced);
    } else if (replaced != null) {
      target.arguments = typeof replaced === 'object' && !Array.isArray(replaced) ? replaced : {};
      // Text that may still follow continues the replacement.
      (state.args[index] = new ToolArguments()).append(JSON.stringify(replaced));
    } else target.arguments = (state.args[index] ??= new ToolArguments()).append(delta);
  }
  const event = { type: RECORD_KINDS[kind], contentIndex: index };
  if (delta != null && kind !== R.toolcall_start) event.delta = delta;
  // An end carries its whole block: its text is the event's `content`.
  if (kind === R.text_end) event.content = blocks[index].text;
  else if (kind === R.thinking_end) event.content = blocks[index].thinking;
  else if (kind === R.toolcall_end) event.toolCall = blocks[index];
  event.partial = partial;
  return { type: 'message_update', assistantMessageEvent: event, message: { ...partial } };
}

const PROMISE_THEN = Promise.prototype.then;
/** What a step of the updater returns when the signal cut the batch. */
const CUT = Symbol('cut');

/** `v` to await when it is a thenable (its `then` read once, as the only property read),
 * else undefined. */
function thenable(v) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined;
  const then = v.then;
  if (typeof then !== 'function') return undefined;
  if (then === PROMISE_THEN) return v;
  return new Promise((resolve, reject) => then.call(v, resolve, reject));
}

/** The function wasm calls once per network chunk of a built-in response, with the chunk's
 * records as JSON: applies each and emits its event (with `inner`, its
 * `assistantMessageEvent`), awaiting what `emit` returned when it is a thenable before the
 * next, as pi's `await emit(event)`. Once `signal` is aborted, no update before the
 * response's end is delivered: the rest of the batch is dropped and `true` returned (the
 * response then ends as the JS partial shows it). Returns undefined when nothing was
 * awaited, else a Promise of the same result. */
function updater(emit, inner, signal) {
  const cut = (state) => !state.ended && signal?.aborted === true;
  // An update, or the mark of the end: an abort the sink made before the end reached it
  // ends the response as aborted, as pi's check after its read loop does.
  const cuts = (kind) => kind < R.set_meta || kind === R.end_read;
  /** One record: CUT, a thenable to await, or undefined. */
  const step = (partial, state, r) => {
    if (cuts(r[0]) && cut(state)) return CUT;
    const update = applyRecord(partial, state, r);
    return update === undefined ? undefined : thenable(emit(inner ? update.assistantMessageEvent : update));
  };
  // Synchronous until an emit returns a thenable; from there on, one await per thenable.
  const rest = async (partial, state, records, i, pending) => {
    do {
      await pending;
      pending = undefined;
      while (pending === undefined && i < records.length) pending = step(partial, state, records[i++]);
    } while (pending !== undefined && pending !== CUT);
    return pending === CUT ? true : undefined;
  };
  return (partial, batch) => {
    const state = streamOf(partial);
    const records = JSON.parse(batch);
    for (let i = 0; i < records.length; i++) {
      const s = step(partial, state, records[i]);
      if (s === CUT) return true;
      if (s !== undefined) return rest(partial, state, records, i + 1, s);
    }
    return undefined;
  };
}

/**
 * Sets a partial's top-level fields. pi-ai's Anthropic provider updates `usage` (and its
 * `cost`) in place, so copies of the message made earlier in the stream show the final
 * usage; so does its Responses provider when the response reports no usage (the cost is
 * computed on the first object; a reported usage is a new object, with `reasoning`). The
 * other cases replace the object. The copy does as its provider does.
 */
function assignMeta(partial, meta) {
  const inPlace = partial.api === 'anthropic-messages' || (partial.api === 'openai-responses' && !('reasoning' in (meta.usage ?? {})));
  if (inPlace && meta.usage && partial.usage) {
    const { cost, ...counts } = meta.usage;
    Object.assign(partial.usage, counts);
    if (cost && partial.usage.cost) Object.assign(partial.usage.cost, cost);
    else if (cost) partial.usage.cost = cost;
    delete meta.usage;
  }
  Object.assign(partial, meta);
}

/** The longest delay `setTimeout` keeps: a longer one overflows and fires at once. */
const MAX_DELAY = 2 ** 31 - 1;

/** A wait before a retry that ends early when the request is aborted. */
function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    // Runs from a timer or an event: a throwing getter of the caller's signal must not escape.
    const done = () => {
      clearTimeout(timer);
      resolve();
      try {
        signal?.removeEventListener?.('abort', done);
      } catch {
        // The listener is `once`; the timer is cleared either way.
      }
    };
    const timer = setTimeout(done, Math.min(ms, MAX_DELAY));
    signal?.addEventListener?.('abort', done, { once: true });
  });
}

/** A timer wasm can race against a read and then clear (`timeoutMs`, clamped to what
 * `setTimeout` keeps: about 24.8 days). */
function deadline(ms) {
  let id;
  const promise = new Promise((resolve) => { id = setTimeout(resolve, Math.min(ms, MAX_DELAY)); });
  return { promise, cancel: () => clearTimeout(id) };
}

/** `await v` for wasm (settle.rs): when `v` is a thenable, or any value with `plain`,
 * `settled(slot, generation, value, rejected)` runs once it settles, when `await` would
 * resume, and the answer is true; false for any other value without `plain`. As `await`: a
 * throwing `then` getter throws, and a native Promise with its own `then` is awaited through
 * Promise.prototype.then. */
function awaitInto(v, settled, slot, generation, plain, run) {
  const then = v !== null && (typeof v === 'object' || typeof v === 'function') ? v.then : undefined;
  if (typeof then !== 'function' && !plain) return false;
  RUN_OF[slot] = run;
  GEN_OF[slot] = generation;
  SETTLED = settled;
  let p = Promise.resolve(v);
  if (p === v && then !== PROMISE_THEN) p = PROMISE_THEN.call(v);
  PROMISE_THEN.call(p, (value) => settled(slot, generation, value, false), (reason) => settled(slot, generation, reason, true));
  return true;
}

/** By settle.rs slot: the run and generation `awaitInto` last took it for, and the generation
 * `expireAwaits` saw there and when; and the settle function. */
const RUN_OF = [];
const GEN_OF = [];
const SEEN = [];
const SEEN_AT = [];
let SETTLED;

/** Called at run `id`'s abort and every `ms / 4` after: ends each await of the run that has
 * been pending `ms` since it was first seen (at the abort, or at the call after it began) as
 * if what it awaited had rejected. An await settled meanwhile is not touched: settle.rs keeps
 * a slot's first settlement and ignores an older generation's. */
function expireAwaits(id, ms) {
  const now = performance.now();
  for (let i = 0; i < RUN_OF.length; i++) {
    if (RUN_OF[i] !== id) continue;
    if (SEEN[i] !== GEN_OF[i]) {
      SEEN[i] = GEN_OF[i];
      SEEN_AT[i] = now;
    } else if (now - SEEN_AT[i] >= ms) {
      SETTLED(i, GEN_OF[i], abortedError(ms), true);
    }
  }
}

/** What an await of an aborted run that did not settle within `ms` ends with. */
const abortedError = (ms) => codedError('aborted', `Operation aborted: not settled ${ms} ms after the abort (abortGraceMs)`);

/** `ms` as `abortGraceMs` takes it: 5000 for undefined or null; throws `invalid_input` for
 * anything but a number of at least 0. */
export function graceOf(ms) {
  ms ??= 5000;
  if (typeof ms !== 'number' || !(ms >= 0)) throw invalidInput('abortGraceMs must be a number of milliseconds, at least 0 (or undefined for 5000)');
  return ms;
}

/**
 * Arms `abortGraceMs` for run `id`: from `signal`'s abort event on, what the run awaits of the
 * caller's (a tool, the stream, a hook, a listener) is ended by `expireAwaits` after `ms`
 * (up to a quarter more for an await begun after the abort), where pi would wait forever.
 * Returns what disarms it (at the run's end), or `undefined` when there is nothing to arm.
 */
function boundAwaits(id, signal, ms) {
  if (ms === Infinity || signal == null) return undefined;
  let timer;
  const start = () => {
    if (timer !== undefined) return;
    expireAwaits(id, ms);
    timer = setInterval(expireAwaits, Math.min(ms / 4, MAX_DELAY), id, ms);
  };
  // A signal whose reads throw fails where pi's reads of it fail; it gets no bound here.
  try {
    if (signal.aborted === true) start();
    else signal.addEventListener?.('abort', start, { once: true });
  } catch {}
  return () => {
    clearInterval(timer);
    try {
      signal.removeEventListener?.('abort', start);
    } catch {}
  };
}

/** `promise` as an aborted `Agent` awaits it after its run ended (its failure message's
 * listeners and checkpoints): rejected with the `aborted` error once it has not settled `ms`
 * after `signal`'s abort. Not aborted, or no bound: `promise` itself. */
export function boundAfterRun(promise, signal, ms) {
  if (signal?.aborted !== true || ms === Infinity) return promise;
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(abortedError(ms)), Math.min(ms, MAX_DELAY));
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The next step of a response body with data (fetch.rs `BodyReader`; `readPastEmpty`); the
 * body's end once the run's signal aborted (`bodyReader`), so a reader that keeps giving chunks
 * after its cancel (or a `fetch` that dropped the signal) is read no further: the response
 * then ends as aborted. */
function readBody(reader) {
  const aborted = () => ABORTED.has(reader);
  return aborted() ? Promise.resolve({ done: true, value: undefined }) : readPastEmpty(reader, aborted);
}

/** By body reader: what removes its abort listener (`bodyReader`). */
const DETACH = new WeakMap();
/** The body readers the run let go of (`release`; at its signal's abort too). */
const ABORTED = new WeakSet();

/** A reader of a response body for fetch.rs (a ReadableStream's, or one over an async iterable
 * such as node-fetch's body), cancelled when `signal` aborts: a `fetch` that dropped the signal
 * (a wrapper, a polyfill) would otherwise keep the body, and a read, going. The listener goes
 * when the reader is let go of (`release`). */
function bodyReader(body, signal) {
  const reader = bodyReaderOf(body);
  if (reader === undefined) throw new TypeError('the body is no stream: it has neither getReader() nor Symbol.asyncIterator');
  if (signal != null && typeof signal.addEventListener === 'function') {
    const cancel = () => release(reader, 2);
    if (signal.aborted) cancel();
    else {
      signal.addEventListener('abort', cancel, { once: true });
      DETACH.set(reader, () => signal.removeEventListener('abort', cancel));
    }
  }
  return reader;
}

/**
 * Lets go of a body reader (fetch.rs `BodyReader`), never throwing; `how` is 0 when the body
 * was read to its end (nothing to do but drop the abort listener), 1 when the answer was whole
 * (its end event came), 2 otherwise. A body cut short is cancelled, so the connection closes. A
 * whole answer's body is read to its end in the background instead: a cancel costs more
 * (Node's fetch aborts its controller for it, and the connection is not reused) than the one
 * read a well-behaved server answers with its end. Should more come, or nothing within a
 * second, the body is cancelled then.
 */
function release(reader, how) {
  DETACH.get(reader)?.();
  DETACH.delete(reader);
  // No read of the run's comes after: one still passing empty chunks (`readPastEmpty`) stops.
  ABORTED.add(reader);
  if (how === 0) return;
  const cancel = () => cancelQuietly(reader);
  if (how === 2) return cancel();
  let timer;
  try {
    timer = setTimeout(cancel, 1000);
    // Node: the wait keeps no process alive.
    timer?.unref?.();
    Promise.resolve(reader.read()).then(
      (step) => {
        clearTimeout(timer);
        if (step?.done !== true) cancel();
      },
      () => clearTimeout(timer),
    );
  } catch {
    clearTimeout(timer);
    cancel();
  }
}

/** A body read's step for fetch.rs, in one crossing: `null` at the end (`done: true`), else
 * the chunk's bytes (`bytesOf`), or a chunk of another kind in an array of one (so `undefined`
 * is told from the end). Throws for a step that is no read result (no boolean `done`), and for
 * a view whose range cannot be read. */
function chunkOf(step) {
  const done = quietly(step, 'done');
  if (done === true) return null;
  if (done !== false) throw new TypeError(`the reader's read() gave ${step === null || typeof step !== 'object' ? String(step) : 'an object'} without a boolean done`);
  const value = quietly(step, 'value');
  return bytesOf(value) ?? [value];
}

/** The core's event types, by the index the core passes (src/event.rs AGENT_EVENT_TYPES,
 * checked by tests/contract.rs). */
const EVENT_TYPES = ['agent_start', 'turn_start', 'message_start', 'message_update', 'message_end', 'tool_execution_start',
  'tool_execution_update', 'tool_execution_end', 'turn_end', 'agent_end'];
const E = indexes(EVENT_TYPES);

/** Builds pi's event of `EVENT_TYPES[kind]` from its fields, keys in pi's order, and
 * returns `emit(event)`: the one crossing per event the core makes (sink.rs `deliver`). */
function emitEvent(emit, kind, a, b, c, d, e) {
  const type = EVENT_TYPES[kind];
  switch (kind) {
    case E.message_start: case E.message_end: return emit({ type, message: a });
    case E.tool_execution_start: return emit({ type, toolCallId: a, toolName: b, args: c });
    case E.tool_execution_update: return emit({ type, toolCallId: a, toolName: b, args: c, partialResult: d });
    case E.tool_execution_end:
      endedWith(this, a, c);
      return emit(e === undefined
      ? { type, toolCallId: a, toolName: b, result: c, isError: d }
      : { type, toolCallId: a, toolName: b, result: c, isError: d, durationMs: e });
    case E.turn_end: return emit({ type, message: a, toolResults: b });
    case E.agent_end: return emit({ type, messages: a });
    case E.turn_start:
      this.ends = undefined;
      return emit({ type });
    default: return emit({ type });
  }
}

/** Marks an id that ended twice in a turn: its results cannot be told apart by id. */
const TWICE = {};

/** Keeps the result object `tool_execution_end` carried for call `id` in this turn, for its
 * toolResult message (`toolResult`). */
function endedWith(glue, id, result) {
  glue.ends ??= new Map();
  glue.ends.set(id, glue.ends.has(id) ? TWICE : result);
}

/** pi's tool result message from the members of one the core made (table.rs
 * `tool_result_js`), as pi's createToolResultMessage: its keys in pi's order, each an own key
 * (`undefined` or not) but `durationMs`, which is there when it is defined. */
function toolResult(toolCallId, toolName, content, details, usage, isError, durationMs, timestamp) {
  // As pi's, its `content` and `details` are those of the result `tool_execution_end` carried
  // (an error result the loop made included), not copies.
  const ended = this.ends?.get(toolCallId);
  if (ended !== undefined && ended !== TWICE && ended !== null && typeof ended === 'object') {
    content = ended.content ?? [];
    details = ended.details;
  }
  return durationMs === undefined
    ? { role: 'toolResult', toolCallId, toolName, content, details, usage, isError, timestamp }
    : { role: 'toolResult', toolCallId, toolName, content, details, usage, isError, durationMs, timestamp };
}

const monotonic = () => (typeof performance !== 'undefined' && typeof performance.now === 'function' ? performance.now() : Date.now());

/** The core's clock (host.rs `JsClock`): `Date.now()` for 0, `performance.now()` for 1. A
 * recorded run's glue records what it reads, a replayed run's gives it back (cassette.js). */
function clock(kind) {
  try {
    return kind === 1 ? monotonic() : Date.now();
  } catch {
    // A host that replaced `performance.now` with one that throws.
    return Date.now();
  }
}

/** `tool.execute(…)` as pi calls it; a run's own glue may park the call first (pending.js). */
function executeTool(tool, id, args, signal, onUpdate) {
  return tool.execute(id, args, signal, onUpdate);
}

const GLUE = { requestIdentity: (config) => mergeIdentity(config.identity), clock, emitEvent, openResponse, streamOptions, copyWith, jsonArguments, callBlocks, callArguments, toolHookContext, prepareArguments, items, readTool, executeTool, toolResult, hook, fields, view, split, extend, shared, liveContext, livePush, livePull, liveSame, updater, awaitInto, readBody, bodyReader, chunkOf, release, sleep, deadline, envApiKey, describeError, redact };

/**
 * The built-in stream function, requested and decoded in Rust over `fetch`, for models with
 * `api` `"openai-completions"` (OpenAI and compatible servers), `"openai-responses"`,
 * `"anthropic-messages"` or `"google-generative-ai"`. Inside the loop its deltas reach JS
 * once each, already applied to the message.
 */
/** pi-ai's `normalizeContext`: a context's `systemPrompt` and `tools` (pi-ai's `Context`)
 * folded into a leading system message, as its `streamSimple` does before any request. */
function normalizeContext(context) {
  const { systemPrompt, tools } = context;
  const hasPrompt = systemPrompt !== undefined && systemPrompt.length > 0;
  const hasTools = tools !== undefined && tools.length > 0;
  if (!hasPrompt && !hasTools) return context;
  const head = { role: 'system', content: systemPrompt ?? '', ...(hasTools ? { toolsAdded: tools } : {}), timestamp: 0 };
  return { messages: [head, ...context.messages] };
}

export function streamSimple(model, context, options) {
  try {
    context = normalizeContext(context);
  } catch {
    // A context that cannot be read is reported by the stream as it reads it again.
  }
  const stream = new AssistantMessageEventStream();
  const response = watchResponse((event) => stream.push(event), model);
  guarded(
    (wasm) => wasm.streamOnce(GLUE, model, context, options, response.push),
    (crash) => response.close(crashText(crash)),
  ).then(
    () => stream.end(),
    (error) => {
      // A stream function never throws for a failure (pi's StreamFn contract): a module
      // that cannot load ends the response like any provider failure.
      let loadFailed = false;
      try {
        loadFailed = error?.code === 'wasm_load_failed';
      } catch {
        // An unreadable thrown value (a revoked Proxy) is not the loader's error.
      }
      if (!loadFailed) return stream.fail(error);
      const message = { ...emptyAssistantMessage(model), stopReason: 'error', errorMessage: error.message };
      stream.push({ type: 'error', reason: 'error', error: message });
    },
  );
  return stream;
}

function resolveStreamFn(streamFn) {
  const fn = streamFn ?? defaultStreamFn ?? null;
  // The loop runs the built-in stream in Rust directly.
  return fn === streamSimple ? 'builtin' : fn;
}

/** The format of checkpoints (`agent::checkpoint`). */
export const CHECKPOINT_VERSION = 1;

let lastRunId = 0;

/** A recording's readers of the steps of the streams it gave the loop (tape.js `recordStream`),
 * by stream: a `Response` of one reads it. */
export const STEP_READERS = new WeakMap();

/** The events after which no checkpoint is taken: a streamed response's updates and a
 * running tool's (the position does not move for them). */
export const UNTRACKED = new Set(['message_update', 'tool_execution_update']);

/**
 * `config.onCheckpoint` of the loop functions: `{ emit, checkpoint }` for the run. After each
 * event that moves the run (all but updates), once the caller's emit settled,
 * `onCheckpoint({ version, messages, position }, event)` is awaited; and before each tool's
 * `execute`, `onCheckpoint(checkpoint)` with no event. `messages` is the run's transcript
 * (`transcript()`: the context's messages, then each message of the run at its
 * `message_end`); `position` is where the run stands in it.
 */
function checkpointing(emit, onCheckpoint, transcript, position, gate) {
  const save = (event) => {
    const at = position();
    if (at === undefined) return undefined;
    const checkpoint = { version: CHECKPOINT_VERSION, messages: transcript(), position: at };
    // Tool calls waiting for an answer (pending.js), only when there are some.
    const waiting = gate?.save();
    if (waiting !== undefined) checkpoint.waiting = waiting;
    return onCheckpoint(checkpoint, event);
  };
  return {
    emit(event) {
      if (UNTRACKED.has(event.type)) return emit(event);
      const pending = emit(event);
      return (async () => {
        await pending;
        await save(event);
      })();
    },
    checkpoint: () => save(undefined),
  };
}

/**
 * One run of the loop in wasm; should the engine crash under it, the run is ended from the
 * events it emitted (crash.js). `mode`: `'prompt'`, `'continue'`, or `'resume'` from
 * `position`. `probe`, when given, gets `probe.position`: the run's position now.
 * `checkpoint`, when given, is awaited before each tool's `execute`.
 */
export function startRun(mode, prompts, context, config, emit, signal, streamFn, { position, probe, checkpoint, gate, waiting, tape } = {}) {
  // 1 to 2^32 - 1: 0 is no run for settle.rs.
  const id = (lastRunId = (lastRunId % (2 ** 32 - 1)) + 1);
  let wasmNow;
  // The position as plain data; `where(true)`: as its JSON text, a member a line (tape.js).
  const where = (text) => {
    const json = wasmNow?.runPosition(id);
    return json === undefined || text === true ? json : JSON.parse(json);
  };
  if (probe) probe.position = where;
  // The run's transcript, for checkpoints and for a `needsApproval` that asks (pending.js):
  // the context's messages (read at once for checkpoints, else when first asked), then each
  // message the run ended.
  const ended = [];
  let initial;
  const transcript = () => [...(initial ??= items(context?.messages, 'context.messages') ?? []), ...ended];
  const tracked = (event) => {
    if (event?.type === 'message_end') ended.push(event.message);
    return emit(event);
  };
  let sink = tracked;
  let beforeExecute = checkpoint;
  let onCheckpoint;
  let needsApproval;
  let expiresAfterMs;
  let abortGraceMs;
  // Not pi's key: a Recorder (tape.js), or a replay's player (cassette.js); an Agent's comes as `tape`.
  const kind = tape === undefined ? 'loop' : 'agent';
  try {
    tape ??= config?.record ?? undefined;
    onCheckpoint = config?.onCheckpoint;
    // Not pi's keys either (pending.js): the answers of waiting tool calls, and a hook that
    // says which calls need approval.
    gate ??= config?.toolCallGate ?? undefined;
    needsApproval = config?.needsApproval ?? undefined;
    expiresAfterMs = config?.expiresAfterMs ?? undefined;
    abortGraceMs = config?.abortGraceMs ?? undefined;
  } catch {
    // Not pi's key: a config whose every read throws fails where pi's reads fail.
  }
  if (needsApproval !== undefined && typeof needsApproval !== 'function') return Promise.reject(new TypeError('config.needsApproval is not a function'));
  if (gate !== undefined && typeof gate?.park !== 'function') return Promise.reject(invalidInput('config.toolCallGate must be a ToolCallGate'));
  try {
    if (waiting !== undefined && gate !== undefined) gate.load(waiting, 'checkpoint', callIds(items(context?.messages, 'context.messages')));
  } catch (error) {
    return Promise.reject(error);
  }
  if (onCheckpoint !== undefined && onCheckpoint !== null) {
    if (typeof onCheckpoint !== 'function') return Promise.reject(new TypeError('config.onCheckpoint is not a function'));
    try {
      initial = items(context?.messages, 'context.messages') ?? [];
    } catch (error) {
      return Promise.reject(error);
    }
    const wrapped = checkpointing(tracked, onCheckpoint, transcript, where, gate);
    sink = wrapped.emit;
    beforeExecute = wrapped.checkpoint;
  }
  let taping;
  if (tape !== undefined && tape !== null) {
    if (typeof tape.begin !== 'function') return Promise.reject(invalidInput('config.record must be a Recorder'));
    try {
      taping = tape.begin({ kind, mode, prompts, context, config, position, signal, where });
    } catch (error) {
      return Promise.reject(error);
    }
    if (taping === null || typeof taping !== 'object' || typeof taping.emit !== 'function' || typeof taping.glue !== 'function' || typeof taping.streamFn !== 'function' || typeof taping.end !== 'function') {
      return Promise.reject(invalidInput('config.record must be a Recorder (pi-agent-wasm/cassette)'));
    }
    sink = taping.emit(sink);
  }
  let disarm;
  try {
    disarm = boundAwaits(id, signal, graceOf(abortGraceMs));
  } catch (error) {
    // Refused before it ran: the recorder may record the next run.
    taping?.release();
    return Promise.reject(error);
  }
  const watched = watchRun(sink, mode === 'resume' ? resumedRun(context.messages, position) : undefined);
  const glue = runGlue(GLUE, { gate, needsApproval, expiresAfterMs, emit: watched.emit, checkpoint: beforeExecute, messages: transcript });
  const resolved = taping === undefined ? resolveStreamFn(streamFn) : taping.streamFn(resolveStreamFn(streamFn), streamSimple);
  taping?.glue(glue);
  const run = guarded(
    (wasm) => {
      wasmNow = wasm;
      // One object: the keys are the getters of glue.rs `RunOptions`.
      return wasm.runLoop(glue, { mode, prompts, context, config, emit: watched.emit, signal, streamFn: resolved, position, id, checkpoint: beforeExecute });
    },
    (crash) => watched.close(crashText(crash), config),
  );
  // Side chains: the caller's Promise is `run` itself, settling when it did before.
  if (disarm !== undefined) run.then(disarm, disarm);
  if (taping !== undefined) {
    const end = (outcome) => {
      try {
        taping.end(outcome);
      } catch {
        // A replay's miss at the run's end: its player keeps it.
      }
    };
    run.then(end, end);
  }
  if (gate === undefined) return run;
  return run.finally(() => gate.runEnded());
}

function run(prompts, context, config, emit, signal, streamFn, isContinue) {
  return startRun(isContinue ? 'continue' : 'prompt', prompts, context, config, emit, signal, streamFn);
}

/** What crash.js needs to know of a resumed run: it had started, its messages so far, and
 * the open turn's response and results. */
function resumedRun(transcript, position) {
  const count = (n) => (Number.isInteger(n) && n >= 0 && n <= transcript.length ? n : 0);
  const messages = transcript.slice(transcript.length - count(position?.new));
  const state = { messages, turnOpen: position?.at !== 'next' && !(position?.at === 'request' && position.turnStart) };
  if (position?.at === 'tools') {
    const results = count(position.results);
    state.assistant = transcript[transcript.length - results - 1];
    state.results = transcript.slice(transcript.length - results);
  }
  return state;
}

/** The checkpoint a resumption starts from: `{ version, messages, position }`. */
function readCheckpoint(checkpoint) {
  if (checkpoint === null || typeof checkpoint !== 'object') throw invalidInput('checkpoint: not an object');
  const { version, messages, position } = checkpoint;
  if (version !== CHECKPOINT_VERSION) throw invalidInput(`checkpoint: version is not ${CHECKPOINT_VERSION}`);
  const transcript = items(messages, 'checkpoint.messages');
  if (transcript === undefined) throw invalidInput('checkpoint: messages is not an array');
  if (position === null || typeof position !== 'object') throw invalidInput('checkpoint: position is not an object');
  return { transcript, position };
}

/**
 * Finishes a run from a checkpoint (`config.onCheckpoint`'s, or an `Agent` snapshot's run):
 * the transcript and position come from `checkpoint`; tools and the other keys from
 * `context` (its `messages` are not read). Emits what the run had still to emit and resolves
 * with every message of the run.
 */
export async function runAgentLoopResume(checkpoint, context, config, emit, signal, streamFn) {
  const { transcript, position } = readCheckpoint(checkpoint);
  const ctx = { ...context, messages: transcript };
  return startRun('resume', undefined, ctx, config, emit, signal, streamFn, { position, waiting: checkpoint.waiting });
}

export function agentLoopResume(checkpoint, context, config, signal, streamFn) {
  return observe((emit) => runAgentLoopResume(checkpoint, context, config, emit, signal, streamFn));
}

export function runAgentLoop(prompts, context, config, emit, signal, streamFn) {
  return run(prompts, context, config, emit, signal, streamFn, false);
}

function checkContinue(context) {
  const messages = context?.messages;
  if (messages != null && !Array.isArray(messages)) {
    const got = typeof messages === 'object' ? 'an object' : `a ${typeof messages}`;
    throw invalidInput(`context.messages: expected an array of messages, got ${got}`);
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    throw codedError('no_messages', 'Cannot continue: no messages in context');
  }
  if (messages[messages.length - 1]?.role === 'assistant') {
    throw codedError('continue_from_assistant', 'Cannot continue from message role: assistant');
  }
}

export async function runAgentLoopContinue(context, config, emit, signal, streamFn) {
  checkContinue(context);
  return run(undefined, context, config, emit, signal, streamFn, true);
}

function agentStream() {
  return new EventStream(
    (event) => event.type === 'agent_end',
    (event) => (event.type === 'agent_end' ? event.messages : []),
  );
}

/** Observational: events are pushed without waiting for the consumer (L-31). A run that
 * rejects ends the stream with its error instead of leaving consumers waiting (L-32). */
function observe(run) {
  const stream = agentStream();
  // As pi's `async (event) => { stream.push(event) }`: the loop awaits the Promise, so a
  // consumer waiting on the stream sees each event before the loop goes on (and can abort
  // in time for the next hook or request).
  run(async (event) => {
    stream.push(event);
  }).then(
    (messages) => stream.end(messages),
    (error) => stream.fail(error),
  );
  return stream;
}

export function agentLoop(prompts, context, config, signal, streamFn) {
  return observe((emit) => runAgentLoop(prompts, context, config, emit, signal, streamFn));
}

export function agentLoopContinue(context, config, signal, streamFn) {
  checkContinue(context);
  return observe((emit) => runAgentLoopContinue(context, config, emit, signal, streamFn));
}

/** Runs one tool call through the same steps as a model-issued call, without events (L-38). */
export function runToolCall(toolCall, options) {
  return guarded(
    (wasm) => wasm.runToolCall(GLUE, toolCall, options ?? {}),
    (crash) => crashedToolCall(toolCall, crashText(crash)),
  );
}
