// Hand-written types of the public surface, the same for every runtime entry. They follow
// @earendil-works/pi-agent-core 1.6.0 (this file) and @earendil-works/pi-ai 1.6.0 (ai.d.ts),
// so code typed against pi compiles against this package by changing the import
// (tests/types/swap checks a pi program both ways; tests/types/compat.ts compares the types).

import type {
  Api,
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventSource,
  AssistantMessageEventStream,
  ClientIdentity,
  EventStream,
  ImageContent,
  JsonValue,
  Message,
  Model,
  SimpleStreamOptions,
  StopReason,
  TextContent,
  ThinkingBudgets,
  ThinkingLevel,
  Tool,
  ToolCall,
  ToolResultMessage,
  Transport,
  TranscriptContext,
  Usage,
} from "./ai.js";

export * from "./ai.js";

// ---------------------------------------------------------------------------------------
// Loading

/**
 * Resolves once the package's WebAssembly module is loaded; rejects with the load error. The
 * loop functions and the `Agent` wait by themselves: this is for preloading, and for
 * `SseDecoder` in browsers.
 */
export declare function ready(): Promise<void>;

// ---------------------------------------------------------------------------------------
// Stream functions

/**
 * The function the loop requests each response with: pi-ai's `streamSimple` (from
 * `@earendil-works/pi-ai/compat`, or a `Models` object's), this package's built-in
 * `streamSimple`, `streamProxy`, or your own. It never throws for request failures: they end
 * the stream with an `"error"`/`"aborted"` message.
 *
 * Its parameters are compared both ways (the method form), as pi's are compared against
 * pi-ai's: a function written for pi-ai's `TranscriptContext` is accepted, although pi-ai
 * brands that type so that no other package can produce it.
 */
export type StreamFn = {
  streamFn(
    model: Model<Api>,
    context: TranscriptContext,
    options?: SimpleStreamOptions,
  ): AssistantMessageEventSource | Promise<AssistantMessageEventSource>;
}["streamFn"];

// ---------------------------------------------------------------------------------------
// Tools

/**
 * `true` exactly when `T` is `any`: only `unknown` and `any` take `unknown`, and of the two
 * only `any` fits in `null`. (`0 extends 1 & T` would not do: with `T extends object`,
 * TypeScript reduces `1 & T` to `never` before `T` is known.)
 */
type IsAny<T> = unknown extends T ? ([T] extends [null] ? true : false) : false;
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/**
 * The value type of a JSON Schema `S`, read from its type alone (no dependency on a schema
 * library), as pi-schema's `Static` does: the type a pi-schema builder recorded (its
 * symbol-keyed brand), TypeBox's static type for the common TypeBox kinds (`"~kind"`,
 * `"~unsafe"`), else `unknown` (plain JSON Schema objects).
 */
type SchemaValue<S> = S extends { readonly "~kind": unknown } | { readonly "~unsafe": unknown }
  ? TypeBoxValue<S>
  : S extends { readonly [key: symbol]: unknown }
    ? [BrandKey<S>] extends [never]
      ? unknown
      : S extends { readonly [K in BrandKey<S>]?: infer T }
        ? unknown extends T
          ? unknown
          : T
        : unknown
    : unknown;
/**
 * The optional symbol-keyed properties of a type literal: where a schema builder keeps the
 * value type (pi-schema's brand). The `[key: symbol]` test above keeps out interfaces and
 * classes, such as TypeBox 0.x schemas with their symbol `Kind`.
 */
type BrandKey<S> = { [K in keyof S]-?: K extends symbol ? ({} extends Pick<S, K> ? K : never) : never }[keyof S];

type TypeBoxValue<S> = S extends { readonly "~kind": infer K }
  ? K extends keyof TypeBoxKinds<S>
    ? TypeBoxKinds<S>[K]
    : unknown
  : S extends { readonly "~unsafe": infer T }
    ? T
    : unknown;

/** The value type of each TypeBox kind, given the schema `S`. */
interface TypeBoxKinds<S> {
  String: string;
  Number: number;
  Integer: number;
  Boolean: boolean;
  Null: null;
  BigInt: bigint;
  Undefined: undefined;
  Unknown: unknown;
  Any: any;
  Literal: S extends { readonly const: infer V } ? V : unknown;
  Enum: S extends { readonly enum: readonly (infer V)[] } ? V : unknown;
  Array: S extends { readonly items: infer I } ? SchemaValue<I>[] : unknown;
  Tuple: S extends { readonly items: infer I extends readonly unknown[] } ? { -readonly [N in keyof I]: SchemaValue<I[N]> } : unknown;
  Union: S extends { readonly anyOf: readonly (infer B)[] } ? SchemaValue<B> : unknown;
  Object: S extends { readonly properties: infer P } ? TypeBoxObject<P> : unknown;
  Record: S extends { readonly patternProperties: infer P } ? Record<TypeBoxRecordKey<keyof P>, SchemaValue<P[keyof P]>> : unknown;
}

type TypeBoxKeysWith<P, Flag extends string> = { [K in keyof P]: P[K] extends { readonly [F in Flag]: true } ? K : never }[keyof P];
/** A TypeBox object's value: `~optional` properties optional, `~readonly` ones readonly. */
type TypeBoxObject<P> = keyof P extends never
  ? object
  : TypeBoxObjectOf<P, TypeBoxKeysWith<P, "~optional">, TypeBoxKeysWith<P, "~readonly">>;
type TypeBoxObjectOf<P, O extends keyof P, R extends keyof P> = Flatten<
  { -readonly [K in Exclude<keyof P, O | R>]: SchemaValue<P[K]> } & { -readonly [K in Exclude<O, R>]?: SchemaValue<P[K]> } & {
    readonly [K in Exclude<R, O>]: SchemaValue<P[K]>;
  } & { readonly [K in O & R]?: SchemaValue<P[K]> }
>;
/** `Type.Record` keys: TypeBox's integer and number key patterns are numbers. */
type TypeBoxRecordKey<Pattern> = Pattern extends "^-?(?:0|[1-9][0-9]*)$" | "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$" ? number : string;

/**
 * The arguments type `execute` receives for parameter schema `TParameters`: the schema's value
 * type (see above), and `any` for `AgentTool<any>`.
 */
export type AgentToolParams<TParameters> = IsAny<TParameters> extends true ? any : SchemaValue<TParameters>;

/** A tool's final or partial result. */
export interface AgentToolResult<T = JsonValue | undefined> {
  /** What the model sees. */
  content: (TextContent | ImageContent)[];
  /** Structured details for logs or UI. */
  details: T;
  /** Machine-readable result matching `outputSchema`; not sent to the model. */
  structuredContent?: JsonValue;
  usage?: Usage;
  /** Reports failure without throwing. */
  isError?: boolean;
  /** When every result of a batch sets this, the run stops after the batch. */
  terminate?: boolean;
}

export type AgentToolUpdateCallback<T = any> = (partialResult: AgentToolResult<T>) => void;
export type ToolExecutionMode = "sequential" | "parallel";

/**
 * A tool the loop can run. `TParameters` is the type of its JSON Schema (a pi-schema or
 * TypeBox schema types the arguments; a plain JSON Schema object gives `unknown` arguments,
 * and `AgentTool<any>` gives `any`).
 */
export interface AgentTool<TParameters extends object = object, TDetails = any> extends Tool<TParameters> {
  label: string;
  /** Adjusts raw arguments before validation. */
  prepareArguments?: (args: unknown) => AgentToolParams<TParameters>;
  /** JSON Schema of `structuredContent` in successful results. */
  outputSchema?: object;
  /** Throw on failure, or return a result with `isError: true`. */
  execute: (
    toolCallId: string,
    params: AgentToolParams<TParameters>,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ) => Promise<AgentToolResult<TDetails>>;
  /**
   * Recovery policy for an effect whose outcome is unknown. A run resumed from a checkpoint
   * runs a call that was cut off while its tool ran again only with `"safe"`; otherwise the
   * call gets an error result saying it was interrupted.
   */
  replay?: "never" | "safe";
  executionMode?: ToolExecutionMode;
}

/** A tool call block of an assistant message. */
export type AgentToolCall = ToolCall;

export interface AgentToolCallOutcome {
  toolCall: AgentToolCall;
  result: AgentToolResult<any>;
  isError: boolean;
  /** Milliseconds `execute()` took; absent when the tool did not run. */
  durationMs?: number;
}

// ---------------------------------------------------------------------------------------
// Messages and context

/** App-defined messages: extend this interface by declaration merging, as with pi. */
export interface CustomAgentMessages {}
/** An LLM message or an app-defined one. */
export type AgentMessage = Message | CustomAgentMessages[keyof CustomAgentMessages];

/** The context a loop runs on. */
export interface AgentContext {
  messages: AgentMessage[];
  tools?: AgentTool<any>[];
}

// ---------------------------------------------------------------------------------------
// Loop configuration

export type QueueMode = "all" | "one-at-a-time";

export interface BeforeToolCallResult {
  block?: boolean;
  reason?: string;
  terminate?: boolean;
}
export interface AfterToolCallResult {
  content?: (TextContent | ImageContent)[];
  details?: unknown;
  structuredContent?: JsonValue;
  isError?: boolean;
  usage?: Usage;
  terminate?: boolean;
}
export interface BeforeToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  /** The validated arguments. */
  args: unknown;
  context: AgentContext;
}
export interface AfterToolCallContext {
  assistantMessage: AssistantMessage;
  toolCall: AgentToolCall;
  args: unknown;
  /** The executed result before this hook's overrides. */
  result: AgentToolResult<any>;
  isError: boolean;
  context: AgentContext;
}
export interface AgentTurnContext {
  message: AssistantMessage;
  toolResults: ToolResultMessage[];
  context: AgentContext;
  newMessages: AgentMessage[];
}
export interface PrepareNextTurnContext extends AgentTurnContext {}
export type AgentTurnDecision = { action: "continue" } | { action: "end" };
export type FinishTurn = (
  turn: AgentTurnContext,
  signal?: AbortSignal,
) => AgentTurnDecision | void | Promise<AgentTurnDecision | undefined> | Promise<void>;
export interface AgentLoopTurnUpdate {
  context?: AgentContext;
  messages?: AgentMessage[];
  model?: Model<any>;
  thinkingLevel?: ThinkingLevel;
}
export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;
export interface PrepareRequestContext {
  context: AgentContext;
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
}
export type PrepareRequest = (
  request: PrepareRequestContext,
  signal?: AbortSignal,
) => AgentRequestUpdate | void | Promise<AgentRequestUpdate | undefined> | Promise<void>;

type MaybePromise<T> = T | Promise<T>;

/**
 * The loop's configuration: the stream options (passed on to the stream function) and the
 * hooks. Hooks may return plain values or Promises (pi declares Promises for some; both work).
 */
export interface AgentLoopConfig extends SimpleStreamOptions {
  model: Model<any>;
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => MaybePromise<AgentMessage[]>;
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  prepareNextTurn?: (context: PrepareNextTurnContext) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  getSteeringMessages?: () => MaybePromise<AgentMessage[]>;
  getFollowUpMessages?: () => MaybePromise<AgentMessage[]>;
  /** Default: `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => MaybePromise<AfterToolCallResult | undefined>;
  /**
   * Not in pi. Called after every event but streamed updates (`message_update`,
   * `tool_execution_update`), once the event's `emit` settled, with where the run stands.
   * Awaited when it returns a Promise; a throw rejects the run. Store it (it is JSON) to
   * finish the run later with {@link runAgentLoopResume}.
   */
  onCheckpoint?: (checkpoint: LoopCheckpoint, event?: AgentEvent) => void | Promise<void>;
  /**
   * Not in pi. In a run resumed from a checkpoint, for each call that was cut off while its
   * tool ran: `"rerun"` runs it again, a result object becomes its result, and `undefined`
   * leaves it to the tool's `replay` (`"safe"` runs again; otherwise an error result saying
   * it was interrupted). A throw becomes the call's error result.
   */
  onInterruptedToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<"rerun" | AgentToolResult<any> | undefined>;
}

// ---------------------------------------------------------------------------------------
// Checkpoints (not in pi)

/** The format version of checkpoints and snapshots. */
export declare const CHECKPOINT_VERSION: 1;

/**
 * Where a run stands in its transcript: plain JSON, read back by this package only. `at` is
 * the stage: before a request (`"request"`; a response being streamed is requested again),
 * running the turn's tool calls (`"tools"`), between turns (`"next"`), or finished
 * (`"done"`). `new` counts the transcript's last messages that the run added.
 */
export interface CheckpointPosition {
  v: 1;
  at: "request" | "tools" | "next" | "done";
  new: number;
  model: Model<any>;
  reasoning?: ThinkingLevel;
  [field: string]: unknown;
}

/** A run's state after an event: its transcript (the context's messages, then the run's in
 * `message_end` order) and its position. */
export interface LoopCheckpoint {
  version: 1;
  messages: AgentMessage[];
  position: CheckpointPosition;
}

/** An `Agent` as plain data (`agent.snapshot()`), for `new Agent({ restore })`. */
export interface AgentSnapshot {
  version: 1;
  messages: AgentMessage[];
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  steering: AgentMessage[];
  followUps: AgentMessage[];
  /** Present while a run is in progress: `resume()` on the restored agent finishes it. */
  position?: CheckpointPosition;
  /** The usage of responses cut off and requested again. */
  discardedUsage: Usage[];
}

/**
 * Finishes a run from a checkpoint. The transcript and position come from `checkpoint`;
 * tools and the context's other keys from `context` (its `messages` are not read). Emits
 * what the run had still to emit (no `agent_start`) and resolves with every message of the
 * run, those before the checkpoint included.
 */
export declare function runAgentLoopResume(
  checkpoint: LoopCheckpoint,
  context: Omit<AgentContext, "messages"> & { messages?: AgentMessage[] },
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

/** {@link runAgentLoopResume} as an event stream. */
export declare function agentLoopResume(
  checkpoint: LoopCheckpoint,
  context: Omit<AgentContext, "messages"> & { messages?: AgentMessage[] },
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

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

/** pi's request identity for agent loops; `config.identity` overrides it field by field. */
export declare const DEFAULT_AGENT_IDENTITY: ClientIdentity;

/** Starts a loop with new prompt messages. Without `streamFn`, the default stream function. */
export declare function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

/** Continues a loop from the context (its last message must convert to a user or tool result message). */
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

/** The `beforeToolCall` and `afterToolCall` hooks of {@link AgentLoopConfig}. */
export type ToolCallHooks = Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

export interface RunToolCallOptions extends ToolCallHooks {
  /** Tools the call resolves against. */
  tools: readonly AgentTool<any>[];
  /** Passed to the hooks as the message that issued the call. */
  assistantMessage: AssistantMessage;
  context: AgentContext;
  signal?: AbortSignal;
  onUpdate?: (partialResult: AgentToolResult<any>) => Promise<void> | void;
}

/**
 * Runs one tool call through the loop's steps (preparation, validation, `beforeToolCall`,
 * execution, `afterToolCall`) without events. Failures come back as `isError: true`.
 */
export declare function runToolCall(toolCall: AgentToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome>;

/** Sets the stream function used when a call passes none; `undefined` leaves none. */
export declare function setDefaultStreamFn(streamFn: StreamFn | undefined): void;
/** The default stream function (the built-in `streamSimple` until set); throws when none is set. */
export declare function getDefaultStreamFn(): StreamFn;
/**
 * The built-in stream function for `model.api` `"openai-completions"` (OpenAI and compatible
 * servers), `"openai-responses"`, `"anthropic-messages"` and `"google-generative-ai"`,
 * requested over `fetch` and decoded in wasm. Reads `apiKey`, `signal`, `maxTokens`,
 * `temperature`, `toolChoice`, `reasoning`, `headers`, `identity`, `maxRetries`,
 * `maxRetryDelayMs`, `timeoutMs`, `fetch`, `onPayload`, `onResponse`, `sessionId`,
 * `cacheRetention`, `thinkingBudgets`, `metadata` and `maxEventBytes` from the options (in a
 * loop: from the config). Inside a loop its deltas never cross into JS one by one.
 */
export declare const streamSimple: {
  streamFn(
    model: Model<Api>,
    context: TranscriptContext,
    options?: BuiltinStreamOptions,
  ): AssistantMessageEventSource | Promise<AssistantMessageEventSource>;
}["streamFn"];

/** The built-in `streamSimple`'s options: pi-ai's, and bounds of this package's own. */
export interface BuiltinStreamOptions extends SimpleStreamOptions {
  /**
   * The longest SSE line, and the most data one event may gather, in bytes (default 64 MiB,
   * far above real traffic). Past it the response ends as an error naming this option.
   */
  maxEventBytes?: number;
}

// ---------------------------------------------------------------------------------------
// Proxy stream function

/** A stream event as a proxy server sends it: without `partial`, which the client rebuilds. */
export type ProxyAssistantMessageEvent =
  | { type: "start" }
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; contentSignature?: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; contentSignature?: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall }
  | { type: "done"; reason: Extract<StopReason, "stop" | "length" | "toolUse">; usage: Usage; providerThinkingLevel?: string }
  | { type: "error"; reason: Extract<StopReason, "aborted" | "error">; errorMessage?: string; usage: Usage; providerThinkingLevel?: string };

export interface ProxyStreamOptions
  extends Pick<
    SimpleStreamOptions,
    | "temperature"
    | "samplingParams"
    | "maxTokens"
    | "reasoning"
    | "cacheRetention"
    | "sessionId"
    | "disableContinuation"
    | "headers"
    | "metadata"
    | "transport"
    | "thinkingBudgets"
    | "maxRetryDelayMs"
    // This package's additions (not in pi): the fetch to use, and the longest wait for the
    // response and then for each piece of its body.
    | "fetch"
    | "timeoutMs"
  > {
  /** Aborts the proxy request. */
  signal?: AbortSignal;
  /** Sent to the proxy server as a bearer token. */
  authToken: string;
  /** The proxy server's URL, e.g. `"https://genai.example.com"`. */
  proxyUrl: string;
}

/** A stream function for apps that route model requests through their own server (pi's proxy protocol). */
export declare function streamProxy(model: Model<any>, context: TranscriptContext, options: ProxyStreamOptions): AssistantMessageEventStream;

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

/** The state an `Agent` owns. The same object for the Agent's lifetime. */
export interface AgentState {
  /** The system prompt the transcript's system messages replay to (read only). */
  readonly systemPrompt: string;
  model: Model<any>;
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

export type AgentInitialState = Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">>;

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
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined>;
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => MaybePromise<AfterToolCallResult | undefined>;
  finishTurn?: FinishTurn;
  prepareRequest?: PrepareRequest;
  /** Legacy: receives the run's abort signal, not the turn. */
  prepareNextTurn?: (signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  prepareNextTurnWithContext?: (context: PrepareNextTurnContext, signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: ThinkingBudgets;
  transport?: Transport;
  maxRetryDelayMs?: number;
  toolExecution?: ToolExecutionMode;
  identity?: ClientIdentity;
  /**
   * Not in pi: starts from a snapshot (`agent.snapshot()`, possibly through JSON): its
   * transcript, model, thinking level, queues and queue modes. Tools, hooks and the stream
   * function are supplied here again. A run in progress in the snapshot is finished by
   * `resume()`.
   */
  restore?: AgentSnapshot;
  /**
   * Not in pi: awaited with `agent.snapshot()` after the listeners of every event but
   * streamed updates (with the event), and right before each tool's `execute` (without):
   * save there to survive a restart.
   */
  onCheckpoint?: (snapshot: AgentSnapshot, event?: AgentEvent) => void | Promise<void>;
  /** Not in pi: see {@link AgentLoopConfig.onInterruptedToolCall}. */
  onInterruptedToolCall?: AgentLoopConfig["onInterruptedToolCall"];
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
  thinkingBudgets?: ThinkingBudgets;
  transport: Transport;
  maxRetryDelayMs?: number;
  toolExecution: ToolExecutionMode;
  identity?: ClientIdentity;
  /** Not in pi. */
  onCheckpoint?: AgentOptions["onCheckpoint"];
  /** Not in pi. */
  onInterruptedToolCall?: AgentOptions["onInterruptedToolCall"];
  constructor(options?: AgentOptions);
  /** Listeners run in subscription order and are awaited: a barrier for the loop. */
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
  get state(): AgentState;
  /** Accessors, as in pi (and at run time), so subclasses may override them as accessors. */
  get steeringMode(): QueueMode;
  set steeringMode(mode: QueueMode);
  get followUpMode(): QueueMode;
  set followUpMode(mode: QueueMode);
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
  /** Not in pi: the agent as plain data, at any moment, for `new Agent({ restore })`. */
  snapshot(): AgentSnapshot;
  /** Not in pi: finishes the run of the snapshot this agent was restored from (nothing when
   * it had none). */
  resume(): Promise<void>;
  /** Not in pi: the usage of responses cut off by an interruption and requested again. */
  readonly discardedUsage: Usage[];
}
