// Hand-written types of the public surface, the same for every runtime entry. They follow
// the shapes of @earendil-works/pi-ai and @earendil-works/pi-agent-core 1.6.0, so code typed
// against pi compiles against this package by changing the import.

// ---------------------------------------------------------------------------------------
// Data model (pi-ai)

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
}
export interface ImageContent {
  type: "image";
  /** Base64 data. */
  data: string;
  mimeType: string;
}
export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, any>;
  thoughtSignature?: string;
  namespace?: string;
  /** Set when the streamed argument text was not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cacheWrite1h?: number;
  reasoning?: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number; totalFromProvider?: boolean };
}

export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: Record<string, any>;
  constrainedSampling?: unknown;
}

export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  sections?: Record<string, string | null>;
  toolsAdded?: ToolDeclaration[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}
export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: string;
  provider: string;
  model: string;
  responseModel?: string;
  responseId?: string;
  providerThinkingLevel?: string;
  /** The level the loop requested for this response ("off" when none). */
  thinkingLevel?: ThinkingLevel;
  diagnostics?: unknown[];
  usage: Usage;
  stopReason: StopReason;
  deferred?: unknown;
  errorMessage?: string;
  rawStopReason?: string;
  endTurn?: boolean;
  timestamp: number;
  durationMs?: number;
}
export interface ToolResultMessage<TDetails = any> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  usage?: Usage;
  nestedCalls?: unknown;
  isError: boolean;
  timestamp: number;
  durationMs?: number;
}

/** An LLM message. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** App-defined messages: extend this interface by declaration merging, as with pi. */
export interface CustomAgentMessages {}
/** An LLM message or an app-defined one (any object with a `role`). */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

export interface Model<TApi extends string = string> {
  id: string;
  name: string;
  api: TApi;
  provider: string;
  baseUrl: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
  headers?: Record<string, string>;
  compat?: Record<string, unknown>;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------
// Streams

export type AssistantMessageEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "thinking_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "thinking_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "thinking_end"; contentIndex: number; content: string; partial: AssistantMessage }
  | { type: "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall; partial: AssistantMessage }
  | { type: "done"; reason: "stop" | "length" | "toolUse" | "deferred"; message: AssistantMessage }
  | { type: "error"; reason: "aborted" | "error"; error: AssistantMessage };

/** A push-based async-iterable event queue with a final result (pi-ai's `EventStream`). */
export declare class EventStream<T, R = T> implements AsyncIterable<T> {
  constructor(isComplete: (event: T) => boolean, extractResult: (event: T) => R);
  /** Whether the stream has completed or ended. */
  readonly done: boolean;
  push(event: T): void;
  end(result?: R): void;
  /** Ends the stream with an error: iterators throw it, `result()` rejects with it. */
  fail(error: unknown): void;
  [Symbol.asyncIterator](): AsyncIterator<T>;
  result(): Promise<R>;
}

export declare class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  constructor();
}
export declare function createAssistantMessageEventStream(): AssistantMessageEventStream;

/** `context` as a stream function receives it: only the transcript. */
export interface TranscriptContext {
  messages: Message[];
}

export interface ClientIdentity {
  userAgent?: unknown;
  attribution?: { name: string; url?: string; categories?: string[] } | null;
  version?: string;
}

export interface SimpleStreamOptions {
  signal?: AbortSignal;
  apiKey?: string;
  reasoning?: Exclude<ThinkingLevel, "off">;
  temperature?: number;
  maxTokens?: number;
  headers?: Record<string, string | null>;
  sessionId?: string;
  transport?: "sse" | "websocket" | "websocket-cached" | "auto";
  thinkingBudgets?: { minimal?: number; low?: number; medium?: number; high?: number };
  maxRetryDelayMs?: number;
  identity?: ClientIdentity;
  onPayload?: (payload: unknown, model: Model) => unknown | undefined | Promise<unknown | undefined>;
  onResponse?: (response: { status: number; headers: Record<string, string> }, model: Model) => void | Promise<void>;
  onProviderStreamEvent?: (data: unknown, model: Model) => void | Promise<void>;
  [key: string]: unknown;
}

export type StreamFn = (
  model: Model,
  context: TranscriptContext,
  options?: SimpleStreamOptions,
) => AssistantMessageEventStream | AsyncIterable<AssistantMessageEvent> & { result(): Promise<AssistantMessage> } | Promise<AssistantMessageEventStream>;

// ---------------------------------------------------------------------------------------
// Tools

export interface AgentToolResult<TDetails = any> {
  content: (TextContent | ImageContent)[];
  details: TDetails;
  structuredContent?: unknown;
  usage?: Usage;
  /** Reports failure without throwing. */
  isError?: boolean;
  /** When every result of a batch sets this, the run stops after the batch. */
  terminate?: boolean;
}

export type AgentToolUpdateCallback<TDetails = any> = (partialResult: AgentToolResult<TDetails>) => void | Promise<void>;
export type ToolExecutionMode = "sequential" | "parallel";

export interface AgentTool<TParams = any, TDetails = any> {
  name: string;
  label: string;
  description: string;
  /** JSON Schema of the arguments (TypeBox schemas are JSON Schema). */
  parameters: Record<string, any>;
  constrainedSampling?: unknown;
  outputSchema?: Record<string, any>;
  executionMode?: ToolExecutionMode;
  prepareArguments?: (rawArgs: unknown) => unknown;
  execute(
    toolCallId: string,
    params: TParams,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ): AgentToolResult<TDetails> | Promise<AgentToolResult<TDetails>>;
}

export type AgentToolCall = ToolCall;

export interface AgentToolCallOutcome {
  toolCall: AgentToolCall;
  result: AgentToolResult<any>;
  isError: boolean;
  durationMs?: number;
}

// ---------------------------------------------------------------------------------------
// Loop configuration

export interface AgentContext {
  messages: AgentMessage[];
  tools?: AgentTool<any>[];
  [key: string]: unknown;
}

export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  terminate?: boolean;
}
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  usage?: Usage;
  terminate?: boolean;
}
export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: unknown;
  context: AgentContext;
}
export interface AfterToolCallContext extends BeforeToolCallContext {
  result: AgentToolResult<any>;
  isError: boolean;
}
export interface AgentTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  context: AgentContext;
  newMessages: AgentMessage[];
}
export type PrepareNextTurnContext = AgentTurnContext;
export type AgentTurnDecision = { action: "continue" } | { action: "end" };
export type FinishTurn = (
  turn: AgentTurnContext,
  signal?: AbortSignal,
) => AgentTurnDecision | void | Promise<AgentTurnDecision | undefined> | Promise<void>;
export interface AgentLoopTurnUpdate {
  context?: AgentContext;
  messages?: AgentMessage[];
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}
export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;
export interface PrepareRequestContext {
  context: AgentContext;
  model: Model;
  thinkingLevel: ThinkingLevel;
}
export type PrepareRequest = (
  request: PrepareRequestContext,
  signal?: AbortSignal,
) => AgentRequestUpdate | void | Promise<AgentRequestUpdate | undefined> | Promise<void>;

type MaybePromise<T> = T | Promise<T>;

export interface AgentLoopConfig extends SimpleStreamOptions {
  model: Model;
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => MaybePromise<AgentMessage[]>;
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  toolExecution?: ToolExecutionMode;
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined | void>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => MaybePromise<AfterToolCallResult | undefined | void>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  prepareNextTurn?: (turn: PrepareNextTurnContext) => MaybePromise<AgentLoopTurnUpdate | undefined | void>;
  getSteeringMessages?: () => MaybePromise<AgentMessage[]>;
  getFollowUpMessages?: () => MaybePromise<AgentMessage[]>;
}

// ---------------------------------------------------------------------------------------
// Events

export type AgentEvent =
  | { type: "agent_start" }
  | { type: "agent_end"; messages: AgentMessage[] }
  | { type: "turn_start" }
  | { type: "turn_end"; message: AgentMessage; toolResults: ToolResultMessage[] }
  | { type: "message_start"; message: AgentMessage }
  | { type: "message_update"; message: AgentMessage; assistantMessageEvent: AssistantMessageEvent }
  | { type: "message_end"; message: AgentMessage }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: any }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; args: any; partialResult: any }
  | { type: "tool_execution_end"; toolCallId: string; toolName: string; result: any; isError: boolean; durationMs?: number };

export type AgentEventSink = (event: AgentEvent) => Promise<void> | void;

// ---------------------------------------------------------------------------------------
// Entry points

/** pi's request identity for agent loops. */
export declare const DEFAULT_AGENT_IDENTITY: ClientIdentity;

export declare function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

export declare function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

export declare function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

export declare function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

export interface RunToolCallOptions {
  tools: AgentTool<any>[];
  assistantMessage: AssistantMessage;
  context: AgentContext;
  signal?: AbortSignal;
  onUpdate?: AgentToolUpdateCallback;
  beforeToolCall?: AgentLoopConfig["beforeToolCall"];
  afterToolCall?: AgentLoopConfig["afterToolCall"];
}

export declare function runToolCall(toolCall: AgentToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome>;

export declare function setDefaultStreamFn(streamFn: StreamFn | undefined): void;
/**
 * The built-in stream function for `model.api` `"openai-completions"` (OpenAI and compatible
 * servers), `"openai-responses"`, `"anthropic-messages"` and `"google-generative-ai"`,
 * requested over `fetch` and decoded in wasm. Reads `apiKey`, `signal`, `maxTokens`,
 * `temperature`, `toolChoice`, `headers`, `maxRetries`, `maxRetryDelayMs`, `timeoutMs`,
 * `fetch`, `onPayload`, `onResponse`, `sessionId`, `cacheRetention`, `thinkingBudgets` and
 * `metadata` from the options (in a loop: from the config).
 * Inside a loop its deltas never cross into JS one by one.
 */
export declare const streamSimple: StreamFn;
export declare function getDefaultStreamFn(): StreamFn;

// ---------------------------------------------------------------------------------------
// Utilities

/** One dispatched Server-Sent Event, as the WHATWG event-stream interpretation defines it. */
export interface SseEvent {
  /** The `event:` field, or `"message"` when the event named none. */
  type: string;
  /** The `data:` lines joined with `"\n"`. */
  data: string;
  /** The last event ID at dispatch time (`""` when never set). */
  lastEventId: string;
}

/**
 * Incremental Server-Sent Events decoder. Feed the body in chunks of any size (CR, LF and
 * CRLF line ends, multi-byte UTF-8 and the leading BOM may be split anywhere); each call
 * returns the events that chunk completed.
 */
export declare class SseDecoder {
  constructor();
  /** Feeds one chunk of the body; returns the events it completed, in order. */
  feed(chunk: Uint8Array): SseEvent[];
  /**
   * Ends the stream. Returns the events completed by a final unterminated line. An event
   * still missing its blank line is discarded, as the standard says; `truncated` reports it.
   */
  finish(): SseEvent[];
  /** After `finish()`: whether the stream ended inside an event. */
  readonly truncated: boolean;
  /** The last valid `retry:` value in milliseconds, if any. */
  readonly retry: number | undefined;
  /** Releases the decoder's wasm memory now instead of at garbage collection. */
  free(): void;
}

// ---------------------------------------------------------------------------------------
// Agent (spec §11)

export type QueueMode = "all" | "one-at-a-time";

/** The state an `Agent` owns. The same object for the Agent's lifetime. */
export interface AgentState {
  /** The system prompt the transcript's system messages replay to (read only). */
  readonly systemPrompt: string;
  model: Model;
  thinkingLevel: ThinkingLevel;
  /** The live array; assigning stores a copy. */
  tools: AgentTool<any>[];
  /** The live transcript; assigning stores a copy. */
  messages: AgentMessage[];
  readonly isStreaming: boolean;
  readonly streamingMessage?: AgentMessage;
  readonly pendingToolCalls: ReadonlySet<string>;
  readonly errorMessage?: string;
}

export interface AgentInitialState {
  systemPrompt?: string;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
  tools?: AgentTool<any>[];
  messages?: AgentMessage[];
}

export interface AgentOptions {
  initialState?: AgentInitialState;
  convertToLlm?: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => MaybePromise<AgentMessage[]>;
  /** Defaults to the default stream function (this package's built-in `streamSimple`). */
  streamFn?: StreamFn;
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  onPayload?: SimpleStreamOptions["onPayload"];
  onResponse?: SimpleStreamOptions["onResponse"];
  onProviderStreamEvent?: SimpleStreamOptions["onProviderStreamEvent"];
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined | void>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => MaybePromise<AfterToolCallResult | undefined | void>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  /** Legacy: receives the run's abort signal, not the turn. */
  prepareNextTurn?: (signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined | void>;
  prepareNextTurnWithContext?: (context: PrepareNextTurnContext, signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined | void>;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: SimpleStreamOptions["thinkingBudgets"];
  transport?: SimpleStreamOptions["transport"];
  maxRetryDelayMs?: number;
  toolExecution?: ToolExecutionMode;
  identity?: ClientIdentity;
}

/**
 * The stateful wrapper around the loop: owns the transcript and tools, queues steering and
 * follow-up messages, awaits its listeners in order for every event, and exposes abort and
 * idle. pi-agent-core 1.6.0's `Agent`.
 */
export declare class Agent {
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  transformContext?: AgentOptions["transformContext"];
  streamFunction: StreamFn;
  getApiKey?: AgentOptions["getApiKey"];
  onPayload?: AgentOptions["onPayload"];
  onResponse?: AgentOptions["onResponse"];
  onProviderStreamEvent?: AgentOptions["onProviderStreamEvent"];
  beforeToolCall?: AgentOptions["beforeToolCall"];
  afterToolCall?: AgentOptions["afterToolCall"];
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  prepareNextTurn?: AgentOptions["prepareNextTurn"];
  prepareNextTurnWithContext?: AgentOptions["prepareNextTurnWithContext"];
  sessionId?: string;
  thinkingBudgets?: AgentOptions["thinkingBudgets"];
  transport: NonNullable<AgentOptions["transport"]>;
  maxRetryDelayMs?: number;
  toolExecution: ToolExecutionMode;
  identity?: ClientIdentity;
  constructor(options?: AgentOptions);
  /** Listeners run in subscription order and are awaited: a barrier for the loop. */
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
  get state(): AgentState;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  steer(message: AgentMessage): void;
  followUp(message: AgentMessage): void;
  clearSteeringQueue(): void;
  clearFollowUpQueue(): void;
  clearAllQueues(): void;
  hasQueuedMessages(): boolean;
  peekQueuedMessages(): AgentMessage[];
  get signal(): AbortSignal | undefined;
  abort(): void;
  waitForIdle(): Promise<void>;
  reset(): void;
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  continue(): Promise<void>;
}
