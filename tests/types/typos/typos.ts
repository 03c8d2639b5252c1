// Mistakes in this package's own options, hooks and values must be compile errors. Each line
// ending in a `typo` marker comment must get at least one error and every other line none
// (tests/js/types-typos.test.mjs runs tsc and compares the lines). Written against
// pi-agent-wasm only; the correct lines around each typo show the right spelling compiles.
import {
  Agent,
  agentLoop,
  ready,
  runAgentLoop,
  setDefaultStreamFn,
  streamProxy,
  streamSimple,
  SseDecoder,
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentTool,
  type Model,
  type SimpleStreamOptions,
  type StreamFn,
} from 'pi-agent-wasm';
import { obj, opt, str } from '@earendil-works/pi-schema';

const model: Model<'openai-completions'> = {
  id: 'qwen2.5:7b',
  name: 'Qwen',
  api: 'openai-completions',
  provider: 'ollama',
  baseUrl: 'http://127.0.0.1:11434/v1',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 32768,
  maxTokens: 4096,
  compat: { supportsStore: false, maxTokensField: 'max_tokens' },
};
// Each mistake gets its own object literal: TypeScript reports one excess property per
// literal, and none when another property of it is already wrong.
const typoModels: Model<'openai-completions'>[] = [
  { ...model, maxOutputTokens: 4096 }, // typo
  { ...model, compat: { supportsStor: false } }, // typo
  { ...model, input: ['text', 'audio'] }, // typo
  { ...model, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, // typo
  { ...model, compat: { ...model.compat, thinkingFormat: 'qwen-chat-template', maxTokensField: 'max_output_tokens' } }, // typo
];

const config: AgentLoopConfig = {
  model,
  convertToLlm: (messages) => messages.filter((m) => m.role !== 'system'),
  maxRetries: 2,
  timeoutMs: 30_000,
  maxRetryDelayMs: 1_000,
  fetch: (input, init) => fetch(input, init),
  toolExecution: 'sequential',
  beforeToolCall: async () => undefined,
  toolChoice: 'none',
  reasoning: 'high',
  cacheRetention: 'short',
  headers: { 'x-team': 'a', 'x-drop': null },
  thinkingBudgets: { low: 1024 },
  identity: { attribution: { name: 'app', url: 'https://app.example' } },
  finishTurn: () => ({ action: 'end' }),
  prepareRequest: () => ({ thinkingLevel: 'low' }),
  onPayload: (payload, m) => (m.contextWindow > 0 ? payload : undefined),
};
const typoConfigs: AgentLoopConfig[] = [
  { ...config, maxRetires: 2 }, // typo
  { ...config, timeoutMS: 30_000 }, // typo
  { ...config, timeoutMs: 'soon' }, // typo
  { ...config, maxTokens: '100' }, // typo
  { ...config, fetch: 42 }, // typo
  { ...config, befroeToolCall: async () => undefined }, // typo
  { ...config, beforeToolCall: async () => ({ blok: true }) }, // typo
  { ...config, toolExecution: 'paralel' }, // typo
  { ...config, toolChoice: 'required' }, // typo
  { ...config, reasoning: 'off' }, // typo
  { ...config, cacheRetention: 'forever' }, // typo
  { ...config, headers: { 'x-count': 1 } }, // typo
  { ...config, thinkingBudgets: { huge: 1 } }, // typo
  { ...config, identity: { attribution: { name: 'app' } } }, // typo
  { ...config, identity: { userAgent: 'long' } }, // typo
  { ...config, finishTurn: () => ({ action: 'stop' }) }, // typo
  { ...config, prepareRequest: () => ({ thinkingLevel: 'extreme' }) }, // typo
  { ...config, onPayload: (_payload, m) => m.contextWindo }, // typo
  { ...config, getApiKey: (provider) => provider.lenght }, // typo
  { ...config, apiKeys: 'sk' }, // typo
  { ...config, sessionID: 's' }, // typo
];
const badMode: AgentLoopConfig = { model, convertToLlm: (m) => m as never, toolExecution: 'paralel' }; // typo
const options: SimpleStreamOptions = { timeoutMs: 'soon' }; // typo
const context: AgentContext = { messages: [], tool: [] }; // typo

const params = obj({ path: str(), encoding: opt(str()) });
const readFile: AgentTool<typeof params> = {
  name: 'read_file',
  label: 'Read file',
  description: 'Reads a file',
  parameters: params,
  executionMode: 'serial', // typo
  execute: async (_id, { pth }) => ({ content: [{ type: 'text', text: String(pth) }], details: undefined }), // typo
};
const readFile2: AgentTool<typeof params> = {
  name: 'read_file',
  label: 'Read file',
  description: 'Reads a file',
  parameters: params,
  execute: async (_id, { path }) => ({ content: [{ type: 'txt', text: path }], details: undefined }), // typo
};

const badStream: StreamFn = () => 'not a stream'; // typo
setDefaultStreamFn('openai'); // typo
setDefaultStreamFn(streamSimple);
const proxied = streamProxy(model, { messages: [] }, { proxyUrl: 'https://p.example' }); // typo

function onEvent(event: AgentEvent): void {
  switch (event.type) {
    case 'tool_execution_end':
      console.log(event.toolName, event.durationMs);
      break;
    case 'tool_execution_finish': // typo
      break;
    case 'message_update':
      console.log(event.assistantMessageEvent.delta); // typo
      break;
  }
}

const agent = new Agent({ initialState: { model, thinkingLevel: 'low' }, steeringMode: 'one-at-a-time' });
const badAgent = new Agent({ steeringMode: 'some' }); // typo
const badAgent2 = new Agent({ streamFunction: streamSimple }); // typo
agent.steer({ role: 'usr', content: 'hi', timestamp: 1 }); // typo
agent.steer({ role: 'user', content: 'hi', timestamp: 1 });
agent.state.isStreaming = true; // typo
agent.state.thinkingLevel = 'extreme'; // typo
agent.state.thinkingLevel = 'xhigh';
void agent.prompt(42); // typo

void ready().then((loaded: string) => loaded); // typo
void ready().then(() => new SseDecoder().feed(new Uint8Array()));
new SseDecoder().feed('data: x'); // typo

export async function run(signal: AbortSignal): Promise<void> {
  await runAgentLoop([], context, config, onEvent, signal);
  await runAgentLoop([], context, config, onEvent, signal, streamSimple);
  await runAgentLoop([], context, config, signal); // typo
  for await (const event of agentLoop([], context, config, signal)) onEvent(event);
  void [typoModels, typoConfigs, badMode, options, readFile, readFile2, badStream, proxied, badAgent, badAgent2];
}
