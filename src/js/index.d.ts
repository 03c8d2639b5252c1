// Hand-written types of the public surface, the same for every runtime entry. They follow
// @earendil-works/pi-agent-core 1.6.0 (this file) and @earendil-works/pi-ai 1.6.0 (ai.d.ts),
// so code typed against pi compiles against this package by changing the import
// (tests/types/swap checks a pi program both ways; tests/types/compat.ts compares the types).
// The doc comments are the API reference: scripts/api-docs.mjs renders them into docs/api/.

/**
 * The agent loop of `@earendil-works/pi-agent-core` 1.6.0, with pi-ai 1.6.0's data model: the
 * loop functions, the `Agent`, the stream functions and pi's types.
 *
 * Switching from pi is changing the import: the types are pi's. The same API in browsers,
 * Cloudflare Workers and Node; the package picks the entry by export condition. Not in pi:
 * the built-in `streamSimple`, checkpoints and `Agent` snapshots, `ready()` and `SseDecoder`.
 *
 * @module pi-agent-wasm
 */

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
// Errors

/**
 * The `code` of an `Error` this package raises itself; a value your hook, tool or listener throws
 * reaches you unchanged (docs/errors.md says where). Messages are pi's where pi has the same error.
 *
 * - `wasm_load_failed`: the `.wasm` could not be loaded (`cause` holds why); the next call tries again.
 * - `wasm_not_ready`: `new SseDecoder()` in a browser before `await ready()`.
 * - `wasm_crashed`: an object made before the engine crashed and restarted was used.
 * - `invalid_input`: a value from outside had the wrong shape or could not be read.
 * - `no_messages`, `continue_from_assistant`: nothing to continue from.
 * - `no_default_stream_fn`: no `streamFn`, and the default was unset.
 * - `agent_busy`: an `Agent` was asked to start, continue, resume or reset during a run.
 * - `resume_pending`: a restored `Agent` was asked to start a run before `resume()`.
 * - `aborted`: an aborted run stopped waiting for a Promise of yours (`abortGraceMs`).
 */
export type ErrorCode =
  | "wasm_load_failed"
  | "wasm_not_ready"
  | "wasm_crashed"
  | "invalid_input"
  | "no_messages"
  | "continue_from_assistant"
  | "no_default_stream_fn"
  | "agent_busy"
  | "resume_pending"
  | "aborted";

// ---------------------------------------------------------------------------------------
// Loading

/**
 * Resolves once the package's WebAssembly module is loaded; rejects with the load error.
 *
 * The loop functions and the `Agent` wait by themselves: this is for preloading, and for
 * `SseDecoder` in browsers. A failed load (an `Error` with code `wasm_load_failed`) is tried
 * again by the next call.
 */
export declare function ready(): Promise<void>;

// ---------------------------------------------------------------------------------------
// Stream functions

/**
 * The function the loop requests each response with: `(model, context, options?)` to an event
 * stream.
 *
 * pi-ai's `streamSimple` (from `@earendil-works/pi-ai/compat`, or a `Models` object's), this
 * package's built-in `streamSimple`, `streamProxy`, or your own. It never throws for request
 * failures: they end the stream with an `"error"`/`"aborted"` message.
 *
 * Its parameters are compared both ways (the method form), as pi's are compared against
 * pi-ai's: a function written for pi-ai's `TranscriptContext` is accepted, although pi-ai
 * brands that type so that no other package can produce it.
 */
export type StreamFn = {
  /** Requests one response of `model` for `context`, and returns its events. */
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
  /** The tool's own usage, if it has one; not part of the conversation's accounting. */
  usage?: Usage;
  /** Reports failure without throwing: the model sees `content` as an error result. */
  isError?: boolean;
  /** When every result of a batch sets this, the run stops after the batch. */
  terminate?: boolean;
}

/**
 * The callback a tool's `execute` receives to report partial results; each call emits a
 * `tool_execution_update` event. Calls after the tool settled are ignored.
 */
export type AgentToolUpdateCallback<T = any> = (partialResult: AgentToolResult<T>) => void;
/**
 * How the tool calls of one assistant message run: one after another, or concurrently.
 *
 * `"sequential"`: each is prepared, run and finished before the next. `"parallel"`: they are
 * prepared one by one, then the allowed ones run concurrently (`tool_execution_end` in
 * completion order, the tool result messages in the order of the calls).
 */
export type ToolExecutionMode = "sequential" | "parallel";

/**
 * A tool the loop can run: pi-ai's {@link Tool} with a label and an `execute` function.
 *
 * `TParameters` is the type of its JSON Schema: a pi-schema or TypeBox schema types the
 * arguments; a plain JSON Schema object gives `unknown` arguments, and `AgentTool<any>` gives
 * `any`.
 */
export interface AgentTool<TParameters extends object = object, TDetails = any> extends Tool<TParameters> {
  /** A human-readable name, for UI. */
  label: string;
  /** Adjusts raw arguments before validation. */
  prepareArguments?: (args: unknown) => AgentToolParams<TParameters>;
  /** JSON Schema of `structuredContent` in successful results. */
  outputSchema?: object;
  /**
   * Runs the call with the validated arguments. Throw on failure, or return a result with
   * `isError: true`; either way the model gets an error result. `onUpdate` reports partial
   * results.
   */
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
  /** This tool's execution mode, over the loop's `toolExecution`. */
  executionMode?: ToolExecutionMode;
}

/**
 * Not in pi: a tool whose calls may wait (pi's `AgentTool` stays pi's shape; a tool typed this
 * way is still an `AgentTool`).
 */
export type WaitingAgentTool<TParameters extends object = object, TDetails = any> = Omit<AgentTool<TParameters, TDetails>, "execute"> & {
  /** The tool's own run, after an approval; a client tool has none. */
  execute?: AgentTool<TParameters, TDetails>["execute"];
  /**
   * Whether a call waits for a person's approval before it runs (the run emits
   * `tool_execution_waiting` and waits; `approve`/`reject` answer). A function gets the
   * arguments, the context as the run has it (its messages so far, its tools) and the run's
   * signal; what it returns counts as true or false, and a non-empty string is yes, with
   * the reason shown. It runs after `beforeToolCall` (a call that hook blocks never waits).
   */
  needsApproval?: boolean | ((args: any, context: AgentContext, signal?: AbortSignal) => MaybePromise<unknown>);
  /**
   * A client tool, declared by its schema alone: its calls wait until a client runs it
   * elsewhere and answers with `resolveToolCall` (or `reject`). `execute` is not called.
   */
  client?: boolean;
  /**
   * How long a call waits for its answer, in milliseconds (overrides the config's
   * `expiresAfterMs`). Then it ends with an error result that says it timed out; the time
   * it expires (`expiresAt`) survives a snapshot and restore.
   */
  expiresAfterMs?: number;
};

/** Not in pi: a tool call that waits for an answer (`tool_execution_waiting`). */
export interface WaitingToolCall {
  toolCallId: string;
  toolName: string;
  args: any;
  /** `"approval"`: a person approves or rejects; `"client"`: a client runs the tool. */
  kind: "approval" | "client";
  /** Why it waits, when `needsApproval` said. */
  reason?: string;
  /** When the wait ends with a timed-out error result (ms since the epoch), if it expires. */
  expiresAt?: number;
}

/** What a client answers for its tool's call: the result it computed. */
export interface ClientToolResult {
  content: (TextContent | ImageContent)[];
  details?: any;
  isError?: boolean;
}

/**
 * Not in pi: the answers of tool calls that wait (an `Agent` has its own; the loop functions
 * take one as `config.toolCallGate`). Each method throws an `invalid_input` error, and changes
 * nothing, for an id that is not waiting or an answer of the wrong shape.
 */
export declare class ToolCallGate {
  /** A gate with no waiting calls. */
  constructor();
  /** The calls waiting now, in the order they began to wait. */
  readonly waiting: WaitingToolCall[];
  /** Lets an approval call run its tool. */
  approve(toolCallId: string): void;
  /** Ends a waiting call with an error result saying it was rejected, and `reason`. */
  reject(toolCallId: string, reason?: string): void;
  /** Ends a client call with its client's result. */
  resolveToolCall(toolCallId: string, result: ClientToolResult): void;
}

/** A tool call block of an assistant message. */
export type AgentToolCall = ToolCall;

/** What {@link runToolCall} resolves with: the call, its final result (after the hooks), and whether it failed. */
export interface AgentToolCallOutcome {
  /** The call that ran. */
  toolCall: AgentToolCall;
  /** The final result, after `afterToolCall`. */
  result: AgentToolResult<any>;
  /** Whether the call failed. */
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
  /** The transcript so far; its system messages carry the prompt and tool declarations. */
  messages: AgentMessage[];
  /** The tools the run may execute. */
  tools?: AgentTool<any>[];
}

// ---------------------------------------------------------------------------------------
// Loop configuration

/**
 * How many queued messages a poll takes: `"all"` of them, or `"one-at-a-time"` (the oldest;
 * the rest wait for later polls).
 */
export type QueueMode = "all" | "one-at-a-time";

/** What `beforeToolCall` may return. */
export interface BeforeToolCallResult {
  /** `true`: the tool does not run, and the call gets an error result. */
  block?: boolean;
  /** The text of a blocked call's error result (a default text when absent or empty). */
  reason?: string;
  /** For a blocked call: stop after this batch when every result of the batch says so. */
  terminate?: boolean;
}
/**
 * What `afterToolCall` may return: fields that replace those of the executed result.
 *
 * Each field replaces the result's as a whole (no deep merge); omitted fields keep their
 * values. A `content` given without `structuredContent` drops the structured content.
 */
export interface AfterToolCallResult {
  /** Replaces the result's content. */
  content?: (TextContent | ImageContent)[];
  /** Replaces the result's details. */
  details?: unknown;
  /** Replaces the result's structured content. */
  structuredContent?: JsonValue;
  /** Replaces the error flag (a non-boolean counts by its truthiness). */
  isError?: boolean;
  /** Replaces the result's usage. */
  usage?: Usage;
  /** Replaces the early-termination hint. */
  terminate?: boolean;
}
/** What `beforeToolCall` (and `onInterruptedToolCall`) receives. */
export interface BeforeToolCallContext {
  /** The assistant message that made the call. */
  assistantMessage: AssistantMessage;
  /** The call's block from `assistantMessage.content`. */
  toolCall: AgentToolCall;
  /** The validated arguments. */
  args: unknown;
  /** The context as the call is prepared. */
  context: AgentContext;
}
/** What `afterToolCall` receives. */
export interface AfterToolCallContext {
  /** The assistant message that made the call. */
  assistantMessage: AssistantMessage;
  /** The call's block from `assistantMessage.content`. */
  toolCall: AgentToolCall;
  /** The validated arguments. */
  args: unknown;
  /** The executed result before this hook's overrides. */
  result: AgentToolResult<any>;
  /** Whether the executed result counts as an error. */
  isError: boolean;
  /** The context as the call is finished. */
  context: AgentContext;
}
/** What `finishTurn` and `prepareNextTurn` receive: the turn that just completed. */
export interface AgentTurnContext {
  /** The assistant message of the turn. */
  message: AssistantMessage;
  /** The turn's tool result messages. */
  toolResults: ToolResultMessage[];
  /** The context with the turn's messages appended. */
  context: AgentContext;
  /** The messages the run would return if it ended now (a prompt run's prompts included). */
  newMessages: AgentMessage[];
}
/** What `prepareNextTurn` receives: the turn that just completed ({@link AgentTurnContext}). */
export interface PrepareNextTurnContext extends AgentTurnContext {}
/** What {@link FinishTurn} may decide: `"end"` the run now, or `"continue"` with one more request. */
export type AgentTurnDecision = { action: "continue" } | { action: "end" };
/**
 * Called after a turn's assistant message and tool results, before `turn_end`: may end the run,
 * or make it continue.
 *
 * `{ action: "end" }` ends the run without polling the queues; `{ action: "continue" }` makes
 * sure one more request follows; `undefined` keeps the normal course. A response that failed or
 * was aborted ends the run whatever this returns.
 */
export type FinishTurn = (
  turn: AgentTurnContext,
  signal?: AbortSignal,
) => AgentTurnDecision | void | Promise<AgentTurnDecision | undefined> | Promise<void>;
/** What `prepareNextTurn` may return: replacements for the next turn, and messages to add. */
export interface AgentLoopTurnUpdate {
  /** The context for the next request. */
  context?: AgentContext;
  /** Messages appended before the next request, with their events. */
  messages?: AgentMessage[];
  /** The model for the next request. */
  model?: Model<any>;
  /** The thinking level for the next request. */
  thinkingLevel?: ThinkingLevel;
}
/** What {@link PrepareRequest} may return: the context, model and thinking level from this request on. */
export type AgentRequestUpdate = Omit<AgentLoopTurnUpdate, "messages">;
/** What {@link PrepareRequest} receives: the state the request is about to be made with. */
export interface PrepareRequestContext {
  /** The context, pending messages appended. */
  context: AgentContext;
  /** The model of the request. */
  model: Model<any>;
  /** The thinking level of the request. */
  thinkingLevel: ThinkingLevel;
}
/**
 * Called right before every model request of the run, the first included.
 *
 * Pending messages are appended by then. What it returns replaces the context, model or
 * thinking level for this request and later ones.
 */
export type PrepareRequest = (
  request: PrepareRequestContext,
  signal?: AbortSignal,
) => AgentRequestUpdate | void | Promise<AgentRequestUpdate | undefined> | Promise<void>;

type MaybePromise<T> = T | Promise<T>;

/**
 * The loop's configuration (pi-agent-core 1.6.0's): the model, the stream options, and the
 * hooks.
 *
 * The stream options are passed on to the stream function. Hooks may return plain values or
 * Promises (pi declares Promises for some; both work). A hook that throws rejects the run with
 * what it threw, as in pi; one that returns a value of the wrong kind (not an array of
 * messages, say) fails the run with an `invalid_input` error, where pi would pass it on to the
 * provider.
 */
/** Not in pi: what records runs, a `Recorder` of `pi-agent-wasm/cassette` (docs/record-replay.md). */
export interface RunRecorder {
  /** Called by the loop at the start of each run. */
  begin(run: unknown): unknown;
}

export interface AgentLoopConfig extends SimpleStreamOptions {
  /** The model of the run's requests (until a hook replaces it). */
  model: Model<any>;
  /** Converts the transcript to LLM messages before each request: map or drop app-defined messages. */
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  /** Transforms the transcript before `convertToLlm` (pruning, injected context). */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => MaybePromise<AgentMessage[]>;
  /** The API key of each request, by provider; when it gives none, `apiKey` is used. */
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  /** Decides after each turn whether the run ends or continues. */
  finishTurn?: FinishTurn;
  /** Called before every request; may replace the context, model or thinking level. */
  prepareRequest?: PrepareRequest;
  /** Called after `turn_end` when the run goes on, before the next turn; may replace its state or add messages. */
  prepareNextTurn?: (context: PrepareNextTurnContext) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  /** Messages to add after the current turn's tool calls (steering), before the next request. */
  getSteeringMessages?: () => MaybePromise<AgentMessage[]>;
  /** Messages to add when the run would otherwise end; the run then continues. */
  getFollowUpMessages?: () => MaybePromise<AgentMessage[]>;
  /** How a message's tool calls run. Default: `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** Called before a tool runs, after its arguments were validated; may block the call. */
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined>;
  /** Called after a tool ran, before its `tool_execution_end`; may override parts of the result. */
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
  /**
   * Not in pi: records the run into a cassette (a `Recorder` of `pi-agent-wasm/cassette`): every
   * input the loop does not decide itself, so that `replay` can run it again offline.
   */
  record?: RunRecorder;
  /** Not in pi: answers the run's waiting tool calls (see {@link WaitingAgentTool}). */
  toolCallGate?: ToolCallGate;
  /** Not in pi: whether a call of any tool needs approval (as {@link WaitingAgentTool}). */
  needsApproval?: (call: { toolCallId: string; toolName: string; args: any; context: AgentContext }, signal?: AbortSignal) => MaybePromise<unknown>;
  /** Not in pi: how long a waiting call waits, in ms, unless its tool says (a tool's own `expiresAfterMs` wins: see {@link WaitingAgentTool}). */
  expiresAfterMs?: number;
  /**
   * Not in pi: once the run's signal is aborted, how long (ms, 5000 by default) the run waits
   * for a Promise of yours (a tool's `execute`, the stream function, a hook, a listener)
   * before it goes on as if that Promise had rejected with an `Operation aborted` error
   * (`code: "aborted"`), where pi would wait forever. A tool's call then gets an error result;
   * a stream, hook or listener ends the run as its rejection would. `Infinity` waits as pi does.
   * A number of at least 0 (`undefined` or `null`: 5000); anything else is `invalid_input`.
   * The bound starts at the signal's `abort` event. See docs/errors.md.
   */
  abortGraceMs?: number;
}

// ---------------------------------------------------------------------------------------
// Checkpoints (not in pi)

/** The format version of checkpoints and snapshots. */
export declare const CHECKPOINT_VERSION: 1;

/**
 * Where a run stands in its transcript: plain JSON, read back by this package only.
 *
 * `at` is the stage: before a request (`"request"`; a response being streamed is requested
 * again), running the turn's tool calls (`"tools"`), between turns (`"next"`), or finished
 * (`"done"`). `new` counts the transcript's last messages that the run added.
 */
export interface CheckpointPosition {
  /** The position's format version. */
  v: 1;
  /** The stage the run is at. */
  at: "request" | "tools" | "next" | "done";
  /** How many of the transcript's last messages the run added. */
  new: number;
  /** The model of the run's next request. */
  model: Model<any>;
  /** The thinking level of the run's next request. */
  reasoning?: ThinkingLevel;
  /** The stage's own fields: opaque, read back by this package only. */
  [field: string]: unknown;
}

/** A run's state after an event: its transcript (the context's messages, then the run's in
 * `message_end` order) and its position. */
export interface LoopCheckpoint {
  /** {@link CHECKPOINT_VERSION}. */
  version: 1;
  /** The run's transcript. */
  messages: AgentMessage[];
  /** Where the run stands in it. */
  position: CheckpointPosition;
  /** Tool calls waiting for an answer, as in {@link AgentSnapshot.waiting}. */
  waiting?: AgentSnapshot["waiting"];
}

/** An `Agent` as plain data (`agent.snapshot()`), for `new Agent({ restore })`. */
export interface AgentSnapshot {
  /** {@link CHECKPOINT_VERSION}. */
  version: 1;
  /** The transcript. */
  messages: AgentMessage[];
  /** The agent's model. */
  model: Model<any>;
  /** The agent's thinking level. */
  thinkingLevel: ThinkingLevel;
  /** The steering queue's mode. */
  steeringMode: QueueMode;
  /** The follow-up queue's mode. */
  followUpMode: QueueMode;
  /** Queued steering messages, those a run took and has not sent included. */
  steering: AgentMessage[];
  /** Queued follow-up messages, those a run took and has not sent included. */
  followUps: AgentMessage[];
  /** Present while a run is in progress: `resume()` on the restored agent finishes it. */
  position?: CheckpointPosition;
  /** The usage of responses cut off and requested again. */
  discardedUsage: Usage[];
  /** Tool calls waiting for an answer, and answers their run has not taken yet. */
  waiting?: (WaitingToolCall & { answer?: { approved: boolean; reason?: string } | { result: ClientToolResult } })[];
}

/**
 * Not in pi: finishes a run from a checkpoint (`config.onCheckpoint`'s).
 *
 * The transcript and position come from `checkpoint`; tools and the context's other keys from
 * `context` (its `messages` are not read). Emits what the run had still to emit (no
 * `agent_start`) and resolves with every message of the run, those before the checkpoint
 * included.
 */
export declare function runAgentLoopResume(
  checkpoint: LoopCheckpoint,
  context: Omit<AgentContext, "messages"> & { messages?: AgentMessage[] },
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

/**
 * Not in pi: {@link runAgentLoopResume} as an event stream.
 */
export declare function agentLoopResume(
  checkpoint: LoopCheckpoint,
  context: Omit<AgentContext, "messages"> & { messages?: AgentMessage[] },
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

// ---------------------------------------------------------------------------------------
// Events

/**
 * An event of a run (pi-agent-core 1.6.0's).
 *
 * `agent_start`; per turn `turn_start`, then `message_start`, `message_update` (streamed
 * responses) and `message_end` for each message, `tool_execution_start`/`_update`/`_end` for
 * each tool call, and `turn_end`; last `agent_end` with the run's messages.
 */
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

/**
 * Not in pi: the event of a call that waits for an answer (see {@link WaitingAgentTool}).
 * Listeners get it only in runs whose tools wait; it is not in {@link AgentEvent}, which stays
 * pi's union: test `(event as AgentEvent | ToolExecutionWaitingEvent).type === "tool_execution_waiting"`.
 */
export type ToolExecutionWaitingEvent = { type: "tool_execution_waiting" } & WaitingToolCall;

/** Receives a run's events; the loop awaits what it returns before it goes on. */
export type AgentEventSink = (event: AgentEvent) => Promise<void> | void;

// ---------------------------------------------------------------------------------------
// Entry points

/** pi's request identity for agent loops; `config.identity` overrides it field by field. */
export declare const DEFAULT_AGENT_IDENTITY: ClientIdentity;

/**
 * Starts a run with new prompt messages and returns its events as a stream (pi-agent-core
 * 1.6.0's `agentLoop`).
 *
 * The stream's `result()` is the run's new messages, the prompts included. Events are pushed
 * without waiting for the consumer. Without `streamFn`, the default stream function ({@link
 * setDefaultStreamFn}: the built-in {@link streamSimple} unless set).
 *
 * Not as in pi: a run that rejects ends the stream with its error (the iterator throws,
 * `result()` rejects), where pi's consumers wait forever.
 */
export declare function agentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

/**
 * {@link agentLoop} continuing from the context without a new prompt (a retry, or after tool
 * results).
 *
 * The context's last message must convert to a user or tool result message. Throws when the
 * context has no messages or ends with an assistant message, as pi does.
 */
export declare function agentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): EventStream<AgentEvent, AgentMessage[]>;

/**
 * Runs a loop with new prompt messages, awaiting `emit` for each event, and resolves with the
 * run's new messages (pi-agent-core 1.6.0's `runAgentLoop`).
 *
 * `emit` is a barrier: the loop waits for what it returns. The new messages include the
 * prompts. `streamFn` as in {@link agentLoop}. Provider failures are data (an assistant message
 * with `stopReason` `"error"`); the Promise rejects with what a hook or `emit` threw.
 */
export declare function runAgentLoop(
  prompts: AgentMessage[],
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

/**
 * {@link runAgentLoop} continuing from the context without a new prompt; resolves with the
 * messages the run added.
 *
 * Rejects when the context has no messages or ends with an assistant message, as pi does.
 * Unlike pi, it never appends to the caller's `context.messages`.
 */
export declare function runAgentLoopContinue(
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal?: AbortSignal,
  streamFn?: StreamFn,
): Promise<AgentMessage[]>;

/** The `beforeToolCall` and `afterToolCall` hooks of {@link AgentLoopConfig}. */
export type ToolCallHooks = Pick<AgentLoopConfig, "beforeToolCall" | "afterToolCall">;

/** The options of {@link runToolCall}: the tools, the hooks, and what the hooks are given. */
export interface RunToolCallOptions extends ToolCallHooks {
  /** Tools the call resolves against. */
  tools: readonly AgentTool<any>[];
  /** Passed to the hooks as the message that issued the call. */
  assistantMessage: AssistantMessage;
  /** Passed to the hooks as the current context. */
  context: AgentContext;
  /** Aborts the call; an aborted signal is checked first, before the hooks run. */
  signal?: AbortSignal;
  /** Receives the tool's partial results. */
  onUpdate?: (partialResult: AgentToolResult<any>) => Promise<void> | void;
}

/**
 * Runs one tool call through the loop's steps without events or messages (pi-agent-core 1.6.0's
 * `runToolCall`).
 *
 * The steps: argument preparation, validation, `beforeToolCall`, execution, `afterToolCall`; a
 * tool that calls another tool uses it so that the same hooks apply. Never rejects for tool
 * failures: an aborted signal, an unknown tool, invalid arguments, a blocked call and a thrown
 * error come back as `isError: true`.
 */
export declare function runToolCall(toolCall: AgentToolCall, options: RunToolCallOptions): Promise<AgentToolCallOutcome>;

/**
 * Sets the stream function that the loop functions and new `Agent`s use when given none
 * (pi-agent-core 1.6.0's).
 *
 * `undefined` leaves none, as pi starts: then they fail with pi's "No default stream function
 * configured" error. Unlike pi, the built-in {@link streamSimple} is the default until this is
 * called.
 */
export declare function setDefaultStreamFn(streamFn: StreamFn | undefined): void;
/** The default stream function (the built-in `streamSimple` until set); throws pi's error when none is set. */
export declare function getDefaultStreamFn(): StreamFn;
/**
 * The built-in stream function: requests over `fetch` and decodes in wasm, for `model.api`
 * `"openai-completions"` (OpenAI and compatible servers), `"openai-responses"`,
 * `"anthropic-messages"` and `"google-generative-ai"`.
 *
 * Not in pi-agent-core; request bodies and events follow pi-ai 1.6.0's `streamSimple`. It reads
 * `apiKey`, `signal`, `maxTokens`, `temperature`, `toolChoice`, `reasoning`, `headers`,
 * `identity`, `maxRetries`, `maxRetryDelayMs`, `timeoutMs`, `fetch`, `env`, `onPayload`,
 * `onResponse`, `sessionId`, `cacheRetention`, `thinkingBudgets`, `metadata` and
 * `maxEventBytes` from the options (in a loop: from the config). Inside a loop its deltas never
 * cross into JS one by one.
 *
 * It never throws for a failure: HTTP and network errors, malformed events and aborts end the
 * stream with an error message.
 */
export declare const streamSimple: {
  /** Requests one response of `model` for `context` over `fetch`, and returns its events. */
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

/**
 * The options of {@link streamProxy}: pi's (the proxy URL and token, a signal, and the stream
 * options sent to the server), plus `fetch` and `timeoutMs`, which are not in pi.
 */
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

/**
 * pi-agent-core 1.6.0's stream function for apps whose server holds the model key.
 *
 * POSTs `{ model, context, options }` to `${proxyUrl}/api/stream` with `Authorization: Bearer
 * <authToken>`, and rebuilds the response from the server's events ({@link
 * ProxyAssistantMessageEvent}, one JSON per `data:` line). Plain JS over `fetch`: no
 * WebAssembly involved.
 *
 * On well-formed streams the request and events are pi's. Unlike pi's, it never throws, rejects
 * or hangs (every failure ends the stream with an `error` event naming the cause), and
 * `authToken` never appears in an event.
 */
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
 * Incremental Server-Sent Events decoder, the one the built-in stream uses. Not in pi.
 *
 * Feed the body in chunks of any size (CR, LF and CRLF line ends, multi-byte UTF-8 and the
 * leading BOM may be split anywhere); each call returns the events that chunk completed. A
 * decoder made before an engine crash throws a `wasm_crashed` error when used: make a new one.
 */
export declare class SseDecoder {
  /**
   * Needs the module loaded: where it loads synchronously (Node, Workers) it is loaded here;
   * elsewhere (browsers) `await ready()` first, else this throws a `wasm_not_ready` error.
   */
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
  /** The model of the next request. */
  model: Model<any>;
  /** The thinking level of the next request (`"off"`: none). */
  thinkingLevel: ThinkingLevel;
  /** The live array; assigning stores a copy. */
  tools: AgentTool<any>[];
  /** The live transcript; assigning stores a copy. */
  messages: AgentMessage[];
  /** Whether a run is in progress; true until its `agent_end` listeners settled. */
  readonly isStreaming: boolean;
  /** The message being streamed, if any. */
  readonly streamingMessage?: AgentMessage;
  /** The ids of the tool calls running now. */
  readonly pendingToolCalls: ReadonlySet<string>;
  /** The error message of the last turn that failed or was aborted in the current or last run. */
  readonly errorMessage?: string;
}

/**
 * The initial state of an {@link Agent}: model, thinking level, tools, messages, system prompt.
 *
 * `systemPrompt` and `tools` become the leading system message unless `messages` starts with
 * one.
 */
export type AgentInitialState = Partial<Omit<AgentState, "pendingToolCalls" | "isStreaming" | "streamingMessage" | "errorMessage">>;

/**
 * The options of `new Agent(options)` (pi-agent-core 1.6.0's).
 *
 * Unlike pi's, `streamFn` is optional, and `restore`, `onCheckpoint` and
 * `onInterruptedToolCall` are this package's. The hooks are those of {@link AgentLoopConfig}.
 */
export interface AgentOptions {
  /** The starting state: model, thinking level, tools, messages, system prompt. */
  initialState?: AgentInitialState;
  /** Converts the transcript to LLM messages; by default keeps the four LLM roles and drops other messages. */
  convertToLlm?: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  /** Transforms the transcript before `convertToLlm`. */
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => MaybePromise<AgentMessage[]>;
  /**
   * Defaults to the default stream function (this package's built-in `streamSimple`, unless
   * {@link setDefaultStreamFn} changed it); read when the agent is made, which throws when
   * there is none.
   */
  streamFn?: StreamFn;
  /** The API key of each request, by provider. */
  getApiKey?: (provider: string) => MaybePromise<string | undefined>;
  /** Passed to the stream function: inspects or replaces request bodies. */
  onPayload?: SimpleStreamOptions["onPayload"];
  /** Passed to the stream function: sees each response's status and headers. */
  onResponse?: SimpleStreamOptions["onResponse"];
  /** Passed to the stream function: sees each provider event. */
  onProviderStreamEvent?: SimpleStreamOptions["onProviderStreamEvent"];
  /** Called before each tool runs; may block the call. */
  beforeToolCall?: (context: BeforeToolCallContext, signal?: AbortSignal) => MaybePromise<BeforeToolCallResult | undefined>;
  /** Called after each tool ran; may override parts of its result. */
  afterToolCall?: (context: AfterToolCallContext, signal?: AbortSignal) => MaybePromise<AfterToolCallResult | undefined>;
  /** Decides after each turn whether the run ends or continues. */
  finishTurn?: FinishTurn;
  /** Called before every request; may replace the context, model or thinking level. */
  prepareRequest?: PrepareRequest;
  /** Legacy: receives the run's abort signal, not the turn. */
  prepareNextTurn?: (signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  /** Called before each next turn with the completed one; wins over `prepareNextTurn`. */
  prepareNextTurnWithContext?: (context: PrepareNextTurnContext, signal?: AbortSignal) => MaybePromise<AgentLoopTurnUpdate | undefined>;
  /** How many steering messages a poll takes. Default: `"one-at-a-time"`. */
  steeringMode?: QueueMode;
  /** How many follow-up messages a poll takes. Default: `"one-at-a-time"`. */
  followUpMode?: QueueMode;
  /** Passed to the stream function as `sessionId`. */
  sessionId?: string;
  /** Passed to the stream function as `thinkingBudgets`. */
  thinkingBudgets?: ThinkingBudgets;
  /** Passed to the stream function as `transport`. Default: `"auto"`. */
  transport?: Transport;
  /** Passed to the stream function as `maxRetryDelayMs`. */
  maxRetryDelayMs?: number;
  /** How a message's tool calls run. Default: `"parallel"`. */
  toolExecution?: ToolExecutionMode;
  /** How requests identify the app, over {@link DEFAULT_AGENT_IDENTITY} field by field. */
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
  /** Not in pi: records every run of the agent into a cassette (see {@link AgentLoopConfig.record}). */
  record?: RunRecorder;
  /** Not in pi: see {@link AgentLoopConfig.needsApproval}. */
  needsApproval?: AgentLoopConfig["needsApproval"];
  /** Not in pi: see {@link AgentLoopConfig.expiresAfterMs}. */
  expiresAfterMs?: number;
  /** Not in pi: see {@link AgentLoopConfig.abortGraceMs}. */
  abortGraceMs?: number;
}

/**
 * The stateful wrapper around the loop (pi-agent-core 1.6.0's `Agent`): owns the transcript and
 * tools, queues steering and follow-up messages, and awaits its listeners.
 *
 * Listeners are awaited in order for every event; `abort()` and `waitForIdle()` control the
 * run. Its option fields are read when a run starts, so an assignment applies from the next
 * run. A run that fails (a hook or listener throws, the stream function is missing) ends with
 * pi's synthetic error message instead of rejecting.
 *
 * Not as in pi: messages a failed run took from a queue but never sent go back to their queue,
 * each failure message has its own `usage` object, and the snapshot API (`snapshot()`,
 * `resume()`, `restore`) is this package's.
 */
export declare class Agent {
  /** Converts the transcript to LLM messages before each request. */
  convertToLlm: (messages: AgentMessage[]) => MaybePromise<Message[]>;
  /** Transforms the transcript before `convertToLlm`. */
  transformContext?: AgentOptions["transformContext"];
  /** The stream function of the agent's runs. */
  streamFunction: StreamFn;
  /** The API key of each request, by provider. */
  getApiKey?: AgentOptions["getApiKey"];
  /** Passed to the stream function. */
  onPayload?: AgentOptions["onPayload"];
  /** Passed to the stream function. */
  onResponse?: AgentOptions["onResponse"];
  /** Passed to the stream function. */
  onProviderStreamEvent?: AgentOptions["onProviderStreamEvent"];
  /** Called before each tool runs; may block the call. */
  beforeToolCall?: AgentOptions["beforeToolCall"];
  /** Called after each tool ran; may override parts of its result. */
  afterToolCall?: AgentOptions["afterToolCall"];
  /** Decides after each turn whether the run ends or continues. */
  finishTurn?: FinishTurn;
  /** Called before every request; may replace the context, model or thinking level. */
  prepareRequest?: PrepareRequest;
  /** Legacy: receives the run's abort signal, not the turn. */
  prepareNextTurn?: AgentOptions["prepareNextTurn"];
  /** Called before each next turn with the completed one; wins over `prepareNextTurn`. */
  prepareNextTurnWithContext?: AgentOptions["prepareNextTurnWithContext"];
  /** Passed to the stream function as `sessionId`. */
  sessionId?: string;
  /** Passed to the stream function as `thinkingBudgets`. */
  thinkingBudgets?: ThinkingBudgets;
  /** Passed to the stream function as `transport`. */
  transport: Transport;
  /** Passed to the stream function as `maxRetryDelayMs`. */
  maxRetryDelayMs?: number;
  /** How a message's tool calls run. */
  toolExecution: ToolExecutionMode;
  /** How requests identify the app, over {@link DEFAULT_AGENT_IDENTITY}. */
  identity?: ClientIdentity;
  /** Not in pi: see {@link AgentOptions.onCheckpoint}. */
  onCheckpoint?: AgentOptions["onCheckpoint"];
  /** Not in pi: see {@link AgentOptions.record}. */
  record?: AgentOptions["record"];
  /** Not in pi: see {@link AgentLoopConfig.onInterruptedToolCall}. */
  onInterruptedToolCall?: AgentOptions["onInterruptedToolCall"];
  /**
   * Unlike pi's, `options` may be left out (the default stream function is used). Throws
   * when no stream function is given and none is set, and, with `restore`, an
   * `invalid_input` error for a snapshot field of the wrong kind.
   */
  constructor(options?: AgentOptions);
  /**
   * Adds a listener of every event, with the run's abort signal; returns the function that
   * removes it. Listeners run in subscription order and are awaited: a barrier for the loop.
   * The agent is idle only once the `agent_end` listeners settled.
   */
  subscribe(listener: (event: AgentEvent, signal: AbortSignal) => Promise<void> | void): () => void;
  /** The agent's state: the same object for the agent's lifetime. */
  get state(): AgentState;
  /**
   * How many steering messages a poll takes. Accessors, as in pi (and at run time), so
   * subclasses may override them as accessors.
   */
  get steeringMode(): QueueMode;
  /** Sets how many steering messages a poll takes. */
  set steeringMode(mode: QueueMode);
  /** How many follow-up messages a poll takes. */
  get followUpMode(): QueueMode;
  /** Sets how many follow-up messages a poll takes. */
  set followUpMode(mode: QueueMode);
  /** Queues a message to add after the current turn's tool calls, before the next request. */
  steer(message: AgentMessage): void;
  /** Queues a message to add when the agent would otherwise stop. */
  followUp(message: AgentMessage): void;
  /** Empties the steering queue. */
  clearSteeringQueue(): void;
  /** Empties the follow-up queue. */
  clearFollowUpQueue(): void;
  /** Empties both queues. */
  clearAllQueues(): void;
  /** Whether either queue holds a message. */
  hasQueuedMessages(): boolean;
  /** The messages the next poll would take, steering first, without taking them. */
  peekQueuedMessages(): AgentMessage[];
  /** The abort signal of the run in progress, if any. */
  get signal(): AbortSignal | undefined;
  /** Aborts the run in progress, if any: it ends with an `"aborted"` message. */
  abort(): void;
  /** Resolves once the run in progress, and its `agent_end` listeners, are done. */
  waitForIdle(): Promise<void>;
  /**
   * Empties the transcript back to its replayed system message, and the queues; the model,
   * thinking level, tools and hooks stay. Drops a restored run that was not resumed. Throws
   * while a run is in progress.
   */
  reset(): void;
  /**
   * Starts a run with a message or messages and resolves when the agent is idle again.
   * Rejects while a run is in progress (queue with `steer()` or `followUp()` then), and on
   * an agent restored in the middle of a run until `resume()`.
   */
  prompt(message: AgentMessage | AgentMessage[]): Promise<void>;
  /** Starts a run with a user message: `input` as its text, then the `images`. */
  prompt(input: string, images?: ImageContent[]): Promise<void>;
  /**
   * Continues from the transcript, whose last message must not be an assistant's; after an
   * assistant message, the queued messages start the run instead (steering first, then
   * follow-ups), and with none queued it rejects.
   */
  continue(): Promise<void>;
  /**
   * Not in pi: the agent as plain data (JSON), at any moment, running or not, for
   * `new Agent({ ...options, restore })`. A response being streamed is not kept: it is
   * requested again on resumption, and its usage so far goes to `discardedUsage`.
   */
  snapshot(): AgentSnapshot;
  /** Not in pi: finishes the run of the snapshot this agent was restored from (nothing when
   * it had none). */
  resume(): Promise<void>;
  /** Not in pi: the usage of responses cut off by an interruption and requested again. */
  readonly discardedUsage: Usage[];
  /** Not in pi: see {@link AgentOptions.needsApproval}. */
  needsApproval?: AgentOptions["needsApproval"];
  /** Not in pi: see {@link AgentOptions.expiresAfterMs}. */
  expiresAfterMs?: number;
  /** Not in pi: see {@link AgentOptions.abortGraceMs}. */
  abortGraceMs?: number;
  /** Not in pi: the tool calls waiting for an answer. */
  readonly waitingToolCalls: WaitingToolCall[];
  /** Not in pi: lets a call that waits for approval run its tool. */
  approve(toolCallId: string): void;
  /** Not in pi: ends a waiting call with an error result saying it was rejected. */
  reject(toolCallId: string, reason?: string): void;
  /** Not in pi: ends a client tool's call with its client's result. */
  resolveToolCall(toolCallId: string, result: ClientToolResult): void;
}
