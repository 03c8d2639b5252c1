// The package's public surface, shared by every runtime entry. The entry shims
// (browser.js, node.js, workerd.js) say where the one .wasm comes from and re-export this.
import { SseDecoder as WasmSseDecoder } from './pi_agent_wasm.js';
import { requireReady } from './wasm.js';

export { ready } from './wasm.js';
export {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  setDefaultStreamFn,
  getDefaultStreamFn,
  DEFAULT_AGENT_IDENTITY,
  streamSimple,
} from './loop.js';
export { Agent } from './agent.js';
export { streamProxy } from './proxy.js';
export { EventStream, AssistantMessageEventStream, createAssistantMessageEventStream } from './event-stream.js';

/**
 * Incremental Server-Sent Events decoder. Synchronous, so the module must be loaded: Node
 * and Workers load it here; in a browser, `await ready()` first.
 */
export class SseDecoder extends WasmSseDecoder {
  constructor() {
    requireReady('new SseDecoder()');
    super();
  }
}
