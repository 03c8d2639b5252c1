// pi-agent-core's loop API over the wasm core. The loop itself runs in Rust; this module
// keeps pi's signatures, owns the module-level default stream function, and reads JS
// response streams for the core: it iterates the stream and emits each `message_update`
// itself, handing wasm only the `start` partial and the final message, so a streamed delta
// never crosses the boundary (shared/design/streaming-boundary.md, point 4).
import { runLoop, runToolCall as wasmRunToolCall } from './pi_agent_wasm.js';
import { EventStream } from './event-stream.js';

/** pi's request identity for agent loops (L-37). */
export const DEFAULT_AGENT_IDENTITY = {
  attribution: { name: 'pi', url: 'https://pi.dev', categories: ['cli-agent'] },
};

let defaultStreamFn;

/** Sets (or clears) the stream function used when a call passes none (L-36). */
export function setDefaultStreamFn(streamFn) {
  defaultStreamFn = streamFn;
}

export function getDefaultStreamFn() {
  if (!defaultStreamFn) {
    throw new Error('No default stream function configured. Pass streamFn explicitly or call setDefaultStreamFn().');
  }
  return defaultStreamFn;
}

// What Response#next returns to wasm: the end of the stream, a terminal event, or (as an
// object) the partial of a `start` event.
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
    this.#stream = stream;
    this.#iterator = stream[Symbol.asyncIterator]();
    this.#emit = emit;
  }

  async next() {
    // The hot path: one iteration per streamed delta. Fields are read into locals once.
    const iterator = this.#iterator;
    const emit = this.#emit;
    const started = this.#started;
    for (;;) {
      const step = await iterator.next();
      if (step.done) return FINISHED;
      const event = step.value;
      switch (event?.type) {
        case 'start':
          this.#started = true;
          return event.partial;
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
          if (pending !== undefined && typeof pending.then === 'function') await pending;
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
    const result = this.#stream.result();
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

/** The options object the stream function gets (L-80). */
function streamOptions(config, model, reasoning, apiKey, identity, signal) {
  const options = { ...config, model };
  if (reasoning !== undefined || 'reasoning' in options) options.reasoning = reasoning;
  options.apiKey = apiKey;
  options.identity = identity;
  options.signal = signal;
  return options;
}

/** A shallow copy, optionally with one key set: pi's `{...partial}` and the final message
 * with `thinkingLevel` (on a copy, so the stream function's own object is untouched). */
function copyWith(object, key, value) {
  const copy = { ...object };
  if (key !== undefined) copy[key] = value;
  return copy;
}

const GLUE = { openResponse, streamOptions, copyWith };

function resolveStreamFn(streamFn) {
  return streamFn ?? defaultStreamFn ?? null;
}

export function runAgentLoop(prompts, context, config, emit, signal, streamFn) {
  return runLoop(GLUE, prompts, context, config, emit, signal, resolveStreamFn(streamFn), false);
}

function checkContinue(context) {
  const messages = context?.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new Error('Cannot continue: no messages in context');
  }
  if (messages[messages.length - 1]?.role === 'assistant') {
    throw new Error('Cannot continue from message role: assistant');
  }
}

export async function runAgentLoopContinue(context, config, emit, signal, streamFn) {
  checkContinue(context);
  return runLoop(GLUE, undefined, context, config, emit, signal, resolveStreamFn(streamFn), true);
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
  run((event) => {
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
  return wasmRunToolCall(GLUE, toolCall, options ?? {});
}
