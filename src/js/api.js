// The package's public surface, shared by every runtime entry. The entry shims
// (browser.js, node.js, workerd.js) instantiate the one .wasm and re-export this.
export { SseDecoder } from './pi_agent_wasm.js';
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
