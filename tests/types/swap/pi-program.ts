// A strict TypeScript program written against pi-agent-core 1.6.0, the way pi users write it:
// pi-schema tool schemas, pi-ai's catalog models and stream functions, every loop hook, the
// Agent, runToolCall, streamProxy, a custom message by declaration merging, and an exhaustive
// switch over the events. tests/js/types-swap.test.mjs compiles it as it is (so it is real pi
// code) and then a copy with the pi-agent-core module name replaced by 'pi-agent-wasm' (in
// the import and in the `declare module` that merges the custom message): both must compile.
// pi-ai and pi-schema imports stay as they are.
import {
  Agent,
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  setDefaultStreamFn,
  streamProxy,
  DEFAULT_AGENT_IDENTITY,
  type AgentContext,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AgentOptions,
  type AgentState,
  type AgentTool,
  type AgentToolParams,
  type AgentToolResult,
  type AfterToolCallResult,
  type BeforeToolCallResult,
  type FinishTurn,
  type PrepareRequest,
  type ProxyAssistantMessageEvent,
  type ProxyStreamOptions,
  type QueueMode,
  type RunToolCallOptions,
  type StreamFn,
  type ThinkingLevel,
  type ToolCallHooks,
} from '@earendil-works/pi-agent-core';
import {
  calculateCost,
  contentText,
  createAssistantMessageEventStream,
  createModels,
  isContextOverflow,
  type Api,
  type AssistantMessage,
  type AssistantMessageEvent,
  type AssistantMessageEventStream,
  type Context,
  type Message,
  type Model,
  type SimpleStreamOptions,
  type TextContent,
  type ToolCall,
  type ToolResultMessage,
  type TranscriptContext,
  type Usage,
  type UserMessage,
} from '@earendil-works/pi-ai';
import { completeSimple, getModel, getModels, streamSimple } from '@earendil-works/pi-ai/compat';
import { estimateContextTokens, estimateMessageTokens } from '@earendil-works/pi-ai/utils/estimate';
import { arr, int, lit, num, obj, opt, str, union } from '@earendil-works/pi-schema';

// ---- a custom message, merged into AgentMessage ----
interface NoteMessage {
  role: 'note';
  text: string;
  timestamp: number;
}
declare module '@earendil-works/pi-agent-core' {
  interface CustomAgentMessages {
    note: NoteMessage;
  }
}

// ---- tools typed by their pi-schema schemas ----
const readParams = obj({ path: str({ minLength: 1 }), offset: opt(int()), limit: opt(int()) });
const readFile: AgentTool<typeof readParams, { bytes: number }> = {
  name: 'read_file',
  label: 'Read file',
  description: 'Reads a file',
  parameters: readParams,
  executionMode: 'sequential',
  prepareArguments: (args) => {
    const raw = args as { file?: string; path?: string };
    return { path: raw.path ?? raw.file ?? '' };
  },
  execute: async (_toolCallId, params, signal, onUpdate) => {
    const path: string = params.path;
    const limit: number | undefined = params.limit;
    if (signal?.aborted) throw new Error('aborted');
    onUpdate?.({ content: [{ type: 'text', text: `reading ${path}` }], details: { bytes: 0 } });
    return { content: [{ type: 'text', text: `${path}:${limit ?? 'all'}` }], details: { bytes: path.length } };
  },
};

const editParams = obj({
  edits: arr(
    union([
      obj({ kind: lit('insert'), line: int(), text: str() }),
      obj({ kind: lit('delete'), from: int(), to: int() }),
    ]),
  ),
  dryRun: opt(union([lit(true), lit(false)])),
});
type EditArgs = AgentToolParams<typeof editParams>;
function describeEdit(args: EditArgs): string {
  return args.edits
    .map((e) => (e.kind === 'insert' ? `+${e.line}:${e.text}` : `-${e.from}..${e.to}`))
    .join(',');
}
const editFile: AgentTool<typeof editParams> = {
  name: 'edit_file',
  label: 'Edit file',
  description: 'Edits a file',
  parameters: editParams,
  execute: async (_id, args) => ({
    content: [{ type: 'text', text: describeEdit(args) }],
    details: { dryRun: args.dryRun ?? false },
    structuredContent: { edits: args.edits.length },
    terminate: args.dryRun === true,
  }),
};

// A plain JSON Schema with AgentTool<any>: `any` arguments, as pi users write untyped tools.
const calc: AgentTool<any> = {
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => ({ content: [{ type: 'text', text: String(a * b) }], details: {} }),
};
const tools: AgentTool<any>[] = [readFile, editFile, calc];

// A generic tool wrapper: the argument type stays deferred until a schema is given.
function withTiming<T extends object, D>(tool: AgentTool<T, D>): AgentTool<T, D> {
  return {
    ...tool,
    execute: async (id, params, signal, onUpdate) => {
      const started = Date.now();
      const result: AgentToolResult<D> = await tool.execute(id, params, signal, onUpdate);
      return { ...result, content: [...result.content, { type: 'text', text: `${Date.now() - started} ms` }] };
    },
  };
}
const timedRead = withTiming(readFile);
tools.push(timedRead);

// ---- models and stream functions from pi-ai ----
const model = getModel('openai', 'gpt-4o-mini');
const fallback = getModel('anthropic', 'claude-sonnet-4-5');
const allOpenAi = getModels('openai');
const models = createModels();

// pi-ai's streamSimple is a StreamFn as it is, and so is a Models object's.
setDefaultStreamFn(streamSimple);
const viaModels: StreamFn = (m, context, options) => models.streamSimple(m, context, options);
// A stream function written with pi-ai's own types.
function scripted(m: Model<Api>, context: TranscriptContext, options?: SimpleStreamOptions): AssistantMessageEventStream {
  const stream = createAssistantMessageEventStream();
  const message: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'text', text: `${context.messages.length} messages, ${options?.maxTokens ?? 0} tokens` }],
    api: m.api,
    provider: m.provider,
    model: m.id,
    usage: zeroUsage(),
    stopReason: 'stop',
    timestamp: Date.now(),
  };
  stream.push({ type: 'start', partial: message });
  stream.push({ type: 'done', reason: 'stop', message });
  return stream;
}
const scriptedFn: StreamFn = scripted;
// A proxy, as pi's docs route requests through an app server.
const proxied: StreamFn = (m, context, options) =>
  streamProxy(m, context, { ...options, authToken: 'token', proxyUrl: 'https://genai.example.com' });
const proxyOptions: ProxyStreamOptions = { authToken: 't', proxyUrl: 'https://p.example', temperature: 0.1, reasoning: 'low' };
function applyProxyEvent(event: ProxyAssistantMessageEvent): string {
  switch (event.type) {
    case 'toolcall_start':
      return `${event.id}:${event.toolName}`;
    case 'done':
      return `${event.reason}:${event.usage.totalTokens}`;
    case 'error':
      return event.errorMessage ?? event.reason;
    default:
      return event.type;
  }
}

function zeroUsage(): Usage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

// ---- loop hooks ----
const beforeToolCall = async ({ toolCall, args, context }: Parameters<NonNullable<ToolCallHooks['beforeToolCall']>>[0]): Promise<BeforeToolCallResult | undefined> => {
  if (toolCall.name === 'edit_file' && context.messages.length > 100) return { block: true, reason: 'too long', terminate: true };
  void args;
  return undefined;
};
const afterToolCall: NonNullable<AgentLoopConfig['afterToolCall']> = async ({ result, isError, toolCall }) => {
  if (isError) return { content: [{ type: 'text', text: `${toolCall.name} failed` }], isError: true } satisfies AfterToolCallResult;
  return { details: { wrapped: result.details } };
};
const finishTurn: FinishTurn = ({ message, toolResults }) =>
  message.stopReason === 'length' || toolResults.some((r) => r.isError) ? { action: 'end' } : undefined;
const prepareRequest: PrepareRequest = async ({ context, model: current, thinkingLevel }) => {
  if (current.contextWindow < estimateContextTokens(context.messages.filter(isLlmMessage)).tokens) {
    return { model: fallback, thinkingLevel: 'high' satisfies ThinkingLevel };
  }
  return thinkingLevel === 'off' ? { thinkingLevel: 'minimal' } : undefined;
};

function isLlmMessage(message: AgentMessage): message is Message {
  return message.role !== 'note';
}
function convertToLlm(messages: AgentMessage[]): Message[] {
  return messages.flatMap((m): Message[] => {
    if (m.role === 'note') {
      const user: UserMessage = { role: 'user', content: `Note: ${m.text}`, timestamp: m.timestamp };
      return [user];
    }
    return [m];
  });
}

const config: AgentLoopConfig = {
  model,
  convertToLlm,
  transformContext: async (messages, signal) => (signal?.aborted ? messages : messages.slice(-50)),
  getApiKey: (provider) => (provider === 'openai' ? 'sk-test' : undefined),
  beforeToolCall,
  afterToolCall,
  finishTurn,
  prepareRequest,
  prepareNextTurn: async ({ newMessages }) => (newMessages.length > 10 ? { thinkingLevel: 'low' } : undefined),
  getSteeringMessages: async () => [],
  getFollowUpMessages: async () => [{ role: 'note', text: 'done?', timestamp: Date.now() }],
  toolExecution: 'parallel',
  reasoning: 'medium',
  maxTokens: 1024,
  temperature: 0.2,
  maxRetries: 2,
  maxRetryDelayMs: 10_000,
  timeoutMs: 30_000,
  headers: { 'x-team': 'a', 'x-drop': null },
  sessionId: 'session-1',
  cacheRetention: 'long',
  thinkingBudgets: { low: 1024, high: 8192 },
  metadata: { user_id: 'u1' },
  toolChoice: 'auto',
  identity: { ...DEFAULT_AGENT_IDENTITY, userAgent: 'short' },
  fetch: (input, init) => fetch(input, init),
  onPayload: async (payload, m) => (m.api === 'openai-responses' ? payload : undefined),
  onResponse: ({ status, headers }) => void `${status}${headers['x-request-id']}`,
};

// ---- events: code typed with pi-ai's message types gets the loop's messages ----
function renderAssistant(message: AssistantMessage): string {
  const text = message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'thinking' ? b.thinking : b.name)).join('');
  const cost = calculateCost(model, message.usage).total;
  return `${text} (${cost}, overflow: ${isContextOverflow(message, model.contextWindow)})`;
}
function renderResult(result: ToolResultMessage): string {
  return contentText(result.content) + JSON.stringify(result.details ?? null);
}
function onStreamEvent(event: AssistantMessageEvent): string {
  return event.type === 'toolcall_end' ? toolCallText(event.toolCall) : event.type;
}
function toolCallText(call: ToolCall): string {
  return `${call.name}(${JSON.stringify(call.arguments)})`;
}

const log: string[] = [];
function onEvent(event: AgentEvent): void {
  switch (event.type) {
    case 'agent_start':
    case 'turn_start':
      log.push(event.type);
      break;
    case 'agent_end':
      log.push(`${event.messages.length} new`);
      break;
    case 'turn_end':
      if (event.message.role === 'assistant') log.push(renderAssistant(event.message));
      log.push(...event.toolResults.map(renderResult));
      break;
    case 'message_start':
    case 'message_end':
      if (event.message.role === 'note') log.push(event.message.text);
      else if (event.message.role === 'toolResult') log.push(renderResult(event.message));
      else log.push(`${event.message.role}: ${estimateMessageTokens(event.message)}`);
      break;
    case 'message_update':
      log.push(onStreamEvent(event.assistantMessageEvent));
      if (event.assistantMessageEvent.type === 'text_delta') log.push(event.assistantMessageEvent.delta);
      break;
    case 'tool_execution_start':
      log.push(`${event.toolName}#${event.toolCallId}`);
      break;
    case 'tool_execution_update':
      log.push(String(event.partialResult));
      break;
    case 'tool_execution_end':
      log.push(`${event.toolName}: ${event.isError} in ${event.durationMs ?? 0} ms`);
      break;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${JSON.stringify(unreachable)}`);
    }
  }
}

// pi-ai messages go into the loop as they are.
const history: Message[] = [
  { role: 'system', content: 'Be terse.', timestamp: 1 },
  { role: 'user', content: [{ type: 'text', text: 'hi' } satisfies TextContent], timestamp: 2 },
];

export async function run(signal: AbortSignal): Promise<number> {
  const context: AgentContext = { messages: [...history, { role: 'note', text: 'from the app', timestamp: 3 }], tools };
  const prompt: UserMessage = { role: 'user', content: 'What is 17*23?', timestamp: Date.now() };

  const stream = agentLoop([prompt], context, config, signal, streamSimple);
  for await (const event of stream) onEvent(event);
  const produced: AgentMessage[] = await stream.result();

  const again = agentLoopContinue({ messages: produced, tools }, { ...config, toolExecution: 'sequential' }, signal, viaModels);
  for await (const event of again) onEvent(event);

  const messages = await runAgentLoop([prompt], context, config, async (event) => onEvent(event), signal, scriptedFn);
  const more = await runAgentLoopContinue({ messages, tools }, config, onEvent, undefined, proxied);

  const last = messages.at(-1);
  if (last?.role === 'assistant') {
    const call = last.content.find((b): b is ToolCall => b.type === 'toolCall');
    if (call) {
      const options: RunToolCallOptions = { tools, assistantMessage: last, context, signal, beforeToolCall, afterToolCall, onUpdate: (r) => void r };
      const outcome = await runToolCall(call, options);
      const result: AgentToolResult<any> = outcome.result;
      log.push(`${outcome.toolCall.name} ${outcome.isError} ${result.content.length} ${outcome.durationMs ?? 0}`);
    }
  }
  return messages.length + more.length + allOpenAi.length + applyProxyEvent({ type: 'start' }).length + proxyOptions.authToken.length;
}

// ---- the Agent ----
const agentOptions: AgentOptions = {
  initialState: { systemPrompt: 'Be terse.', model, thinkingLevel: 'low', tools, messages: history },
  streamFn: streamSimple,
  convertToLlm,
  getApiKey: async () => 'sk-test',
  beforeToolCall,
  afterToolCall,
  finishTurn,
  prepareRequest,
  prepareNextTurnWithContext: async ({ message }) => (message.stopReason === 'toolUse' ? undefined : { thinkingLevel: 'off' }),
  steeringMode: 'one-at-a-time',
  followUpMode: 'all' satisfies QueueMode,
  sessionId: 's',
  thinkingBudgets: { medium: 2048 },
  transport: 'sse',
  maxRetryDelayMs: 5_000,
  toolExecution: 'sequential',
  identity: DEFAULT_AGENT_IDENTITY,
  onPayload: (payload) => payload,
};

// A subclass, overriding accessors and methods as pi declares them.
class LoggingAgent extends Agent {
  override get steeringMode(): QueueMode {
    return super.steeringMode;
  }
  override set steeringMode(mode: QueueMode) {
    log.push(`steering: ${mode}`);
    super.steeringMode = mode;
  }
  override abort(): void {
    log.push('abort');
    super.abort();
  }
  override subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void {
    return super.subscribe(async (event, signal) => {
      log.push(event.type);
      await listener(event, signal);
    });
  }
}

export async function runAgent(): Promise<string> {
  const agent: Agent = new LoggingAgent(agentOptions);
  const unsubscribe = agent.subscribe(async (event, signal) => {
    onEvent(event);
    if (event.type === 'tool_execution_start' && !signal.aborted) {
      agent.steer({ role: 'user', content: 'Also write the result in words.', timestamp: Date.now() });
    }
    if (event.type === 'message_update' && log.length > 10_000) agent.abort();
  });
  agent.followUp({ role: 'note', text: 'follow up', timestamp: Date.now() });
  await agent.prompt('What is 17*23?');
  await agent.prompt({ role: 'user', content: 'and 3*4?', timestamp: Date.now() });
  await agent.prompt('Look at this', [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }]);
  await agent.continue();
  await agent.waitForIdle();

  const state: AgentState = agent.state;
  state.model = fallback;
  state.thinkingLevel = 'high';
  state.tools = [...state.tools, calc];
  state.messages = [...history, ...state.messages];
  const cost = calculateCost(state.model, zeroUsage()).total;
  const answer = state.messages.at(-1);
  const text = answer?.role === 'assistant' ? renderAssistant(answer) : '';
  agent.streamFunction = scriptedFn;
  agent.toolExecution = 'parallel';
  agent.steeringMode = 'all';
  const queued = agent.hasQueuedMessages() ? agent.peekQueuedMessages().length : 0;
  agent.clearAllQueues();

  // The Agent's state goes back into pi-ai: a Context for a one-off completion with the
  // loop's options, whose answer joins the transcript.
  const side: Context = { systemPrompt: state.systemPrompt, messages: convertToLlm(state.messages), tools: state.tools };
  const reply = await completeSimple(state.model, side, config);
  state.messages.push(reply);
  agent.steer(reply);
  const streaming = state.streamingMessage;
  if (streaming?.role === 'assistant') log.push(renderAssistant(streaming));
  const listed = models.getModel('openai', 'gpt-4o');
  if (listed) state.model = listed;
  unsubscribe();
  agent.reset();
  return `${text} ${cost} ${queued} ${state.isStreaming} ${state.pendingToolCalls.size} ${state.errorMessage ?? ''} ${agent.signal?.aborted}`;
}
