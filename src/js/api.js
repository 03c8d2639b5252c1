// The package's public surface, shared by every runtime entry. The entry shims
// (browser.js, node.js, workerd.js) say where the one .wasm comes from and re-export this.
import { requireReady } from './wasm.js';

export { ready } from './wasm.js';
export {
  agentLoop,
  agentLoopContinue,
  agentLoopResume,
  runAgentLoop,
  runAgentLoopContinue,
  runAgentLoopResume,
  CHECKPOINT_VERSION,
  runToolCall,
  setDefaultStreamFn,
  getDefaultStreamFn,
  DEFAULT_AGENT_IDENTITY,
  streamSimple,
} from './loop.js';
export { Agent } from './agent.js';
export { ToolCallGate } from './pending.js';
export { streamProxy } from './proxy.js';
export { EventStream, AssistantMessageEventStream, createAssistantMessageEventStream } from './event-stream.js';

/**
 * Incremental Server-Sent Events decoder. Synchronous, so the module must be loaded: Node
 * and Workers load it here; in a browser, `await ready()` first. It belongs to the instance
 * it was made on: after an engine crash it throws a `wasm_crashed` error.
 */
export class SseDecoder {
  #inner;

  constructor() {
    this.#inner = new (requireReady('new SseDecoder()').SseDecoder)();
  }

  /** The decoder in wasm; a freed one is refused here, before wasm sees a null pointer. */
  #live() {
    if (this.#inner === undefined) throw new Error('This SseDecoder was freed');
    return this.#inner;
  }

  feed(chunk) {
    return this.#live().feed(chunk);
  }

  finish() {
    return this.#live().finish();
  }

  get truncated() {
    return this.#live().truncated;
  }

  get retry() {
    return this.#live().retry;
  }

  free() {
    const inner = this.#inner;
    this.#inner = undefined;
    inner?.free();
  }
}
if (Symbol.dispose) SseDecoder.prototype[Symbol.dispose] = SseDecoder.prototype.free;
