// The pi-ai 1.6.0 data model as this package's API sees it: messages, content blocks, models,
// stream events and the stream options. Hand-written to be structurally the same as pi-ai's
// types, so values cross in both directions: pi-ai's `getModel()` models, messages and
// `streamSimple` go into this package's API, and this package's messages and events go into
// code typed with pi-ai's types. tests/types/compat.ts compares each type with pi-ai's.
//
// No dependency on pi-ai, pi-schema or pi-telemetry: where pi-ai uses their types, the
// structure is written out here.

// ---------------------------------------------------------------------------------------
// JSON

/** A JSON value (pi-ai's `JsonValue`). Arrays are `readonly`, so read-only data fits too. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
/** A JSON object: string keys, {@link JsonValue} values. */
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------
// Content blocks and messages

/** A text block of a message. */
export interface TextContent {
  type: "text";
  /** The text. */
  text: string;
  /** Opaque provider data of the block, kept so that later requests can send it back. */
  textSignature?: string;
}
/** A thinking (reasoning) block of an assistant message. */
export interface ThinkingContent {
  type: "thinking";
  /** The thinking text. */
  thinking: string;
  /** Opaque provider signature of the thinking, kept so that later requests can send it back. */
  thinkingSignature?: string;
  /** The thinking was redacted; the opaque payload is in `thinkingSignature`. */
  redacted?: boolean;
}
/** An image block: base64 data and its MIME type. */
export interface ImageContent {
  type: "image";
  /** Base64 data. */
  data: string;
  /** The image's MIME type, e.g. `"image/png"`. */
  mimeType: string;
}
/** A tool call block of an assistant message. */
export interface ToolCall {
  type: "toolCall";
  /** The call's id; its tool result names it as `toolCallId`. */
  id: string;
  /** The name of the tool called. */
  name: string;
  /** The arguments the model sent, as a JSON object. */
  arguments: JsonObject;
  /** Opaque provider signature of the call (Gemini), kept so that later requests can send it back. */
  thoughtSignature?: string;
  /** OpenAI Responses namespace of a namespaced tool. */
  namespace?: string;
  /** Set when the streamed argument text was not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string;
}

/** Token counts and cost of a response, or of a tool's own work. */
export interface Usage {
  /** Input tokens. */
  input: number;
  /** Output tokens. */
  output: number;
  /** Input tokens read from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number;
  /** The part of `cacheWrite` written with 1h retention (Anthropic only). */
  cacheWrite1h?: number;
  /** Reasoning tokens, a subset of `output`, when the provider reports them. */
  reasoning?: number;
  /** All tokens of the response. */
  totalTokens: number;
  /**
   * The cost at the model's {@link ModelCost} rates, per kind of token and in total.
   * `totalFromProvider` is true when `total` is the billed cost the provider reported.
   */
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number; totalFromProvider?: boolean };
}

/**
 * Why a response ended.
 *
 * `"stop"` (it finished), `"length"` (it reached the token limit), `"toolUse"` (it asks for
 * tool calls), `"error"` or `"aborted"` (see `errorMessage`), `"deferred"` (a deferred
 * response's handle), or `"pending"` (not ended: a partial's value).
 */
export type StopReason = "pending" | "stop" | "length" | "toolUse" | "error" | "aborted" | "deferred";
/** A thinking level a model is asked for; `"off"` asks for none. */
export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/** OpenAI grammar variants for constrained sampling. */
export type GrammarFormat = "openai_lark" | "openai_regex";
/** Provider-side constrained sampling of a tool's arguments. */
export type ConstrainedSamplingConfig =
  | { type: "json_schema"; strict: "prefer" | "require" }
  | { type: "grammar"; variants: Partial<Record<GrammarFormat, string>> };

/** A tool the model may call. `parameters` is the JSON Schema of its arguments. */
export interface Tool<TParameters extends object = object> {
  /** The name the model calls it by. */
  name: string;
  /** What it does, for the model. */
  description: string;
  /** The JSON Schema of its arguments. */
  parameters: TParameters;
  /** Provider-side constrained sampling of its arguments; `false` for none. */
  constrainedSampling?: false | ConstrainedSamplingConfig;
}
/** A tool by name, as {@link SystemMessage.toolsRemoved} lists it. */
export interface ToolReference {
  /** The tool's name. */
  name: string;
}

/**
 * A system message: the transcript's first one is the system prompt; later ones change it from
 * that point on.
 *
 * `content` adds instructions, `sections` replace or remove named prompt sections,
 * `toolsAdded`/`toolsRemoved` change the tool set. Replaying them in order gives the current
 * prompt and tools (pi-ai 1.6.0's transcript model).
 */
export interface SystemMessage {
  role: "system";
  /** Instruction text: the base prompt on the leading message, added instructions later. */
  content: string | TextContent[];
  /** Named prompt sections; `null` removes one declared earlier. */
  sections?: Record<string, string | null>;
  /** Complete definitions of the tools that become available at this point. */
  toolsAdded?: Tool[];
  /** Tools that stop being available at this point. */
  toolsRemoved?: ToolReference[];
  /** Unix time in milliseconds. */
  timestamp: number;
}
/** A user message: text, or text and image blocks. */
export interface UserMessage {
  role: "user";
  /** The text, or text and image blocks. */
  content: string | (TextContent | ImageContent)[];
  /** Unix time in milliseconds. */
  timestamp: number;
}

/** An error as an {@link AssistantMessageDiagnostic} records it. */
export interface DiagnosticErrorInfo {
  name?: string;
  message: string;
  stack?: string;
  code?: string | number;
}
/** A diagnostic record attached to a response: its type, when, and an error or details. */
export interface AssistantMessageDiagnostic {
  type: string;
  timestamp: number;
  error?: DiagnosticErrorInfo;
  details?: JsonObject;
}
/** A durable handle of a deferred response. */
export interface DeferredHandle {
  provider: string;
  modelId: string;
  api: string;
  id: string;
  expiresAt?: number;
  pollAfterMs?: number;
  data?: JsonValue;
}

/**
 * A model's response: its content blocks, where it came from, its usage and why it stopped.
 *
 * A failed request is a message too: `stopReason` `"error"` or `"aborted"`, with
 * `errorMessage`.
 */
export interface AssistantMessage {
  role: "assistant";
  /** Text, thinking and tool call blocks, in the order the model produced them. */
  content: (TextContent | ThinkingContent | ToolCall)[];
  /** The API it was requested over. */
  api: Api;
  /** The provider it was requested from. */
  provider: ProviderId;
  /** The id of the model requested. */
  model: string;
  /** The model the provider reports as having answered, when it reports one. */
  responseModel?: string;
  /** The provider's id of the response. */
  responseId?: string;
  /** The provider's own name for the effort level used. */
  providerThinkingLevel?: string;
  /** The level the loop requested for this response. */
  thinkingLevel?: ThinkingLevel;
  /** Diagnostic records of the response. */
  diagnostics?: AssistantMessageDiagnostic[];
  /** Tokens and cost of the response. */
  usage: Usage;
  /** Why the response ended. */
  stopReason: StopReason;
  /** The handle of a deferred response (`stopReason` `"deferred"`). */
  deferred?: DeferredHandle;
  /** What failed, when `stopReason` is `"error"` or `"aborted"`. */
  errorMessage?: string;
  /** The provider's own stop reason. */
  rawStopReason?: string;
  /** Whether the provider said the model ended its turn (informational). */
  endTurn?: boolean;
  /** When the request started, in Unix milliseconds. */
  timestamp: number;
  /** Milliseconds from `timestamp` to the end of the response. */
  durationMs?: number;
}

/** A call to another tool that a tool made while it ran (pi-ai's record). */
export interface NestedToolCallRecord {
  id: string;
  name: string;
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}
/** The record of the nested calls a tool made (results are not recorded). */
export interface NestedToolCalls {
  calls: NestedToolCallRecord[];
  /** False when calls were dropped, arguments left out, or calls had not finished. */
  complete: boolean;
}

/**
 * The result of one tool call in the transcript.
 *
 * pi-ai 1.6.0's type, except that `details` is typed `TDetails` as given (pi-ai types it as the
 * JSON form of `TDetails`, and the whole message as `never` when `TDetails` is not JSON).
 */
export interface ToolResultMessage<TDetails = JsonValue> {
  role: "toolResult";
  /** The id of the call ({@link ToolCall.id}). */
  toolCallId: string;
  /** The name of the tool called. */
  toolName: string;
  /** What the model sees. */
  content: (TextContent | ImageContent)[];
  /** Structured details for logs or UI; not sent to the model. */
  details?: TDetails;
  /** The tool's own usage, if it reported one; not part of the conversation's accounting. */
  usage?: Usage;
  /** Calls this tool made to other tools; kept for the record, not sent to the model. */
  nestedCalls?: NestedToolCalls;
  /** Whether the call failed. */
  isError: boolean;
  /** When the result was made, in Unix milliseconds. */
  timestamp: number;
  /** Milliseconds the tool ran. */
  durationMs?: number;
}

/** An LLM message. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

// ---------------------------------------------------------------------------------------
// Models

/**
 * The API names pi-ai 1.6.0 knows.
 *
 * The built-in {@link streamSimple} speaks `"openai-completions"`, `"openai-responses"`,
 * `"anthropic-messages"` and `"google-generative-ai"`; the others need a stream function that
 * speaks them (pi-ai's).
 */
export type KnownApi =
  | "openai-completions"
  | "mistral-conversations"
  | "openai-responses"
  | "azure-openai-responses"
  | "openai-codex-responses"
  | "anthropic-messages"
  | "bedrock-converse-stream"
  | "google-generative-ai"
  | "google-vertex"
  | "pi-messages";
/** A known API name, or any other string (the `& {}` keeps the known names for completion). */
export type Api = KnownApi | (string & {});
/** A provider's id, such as `"openai"` or `"anthropic"`. */
export type ProviderId = string;

// The model and compat types below come from pi-ai's schemas, whose optional fields accept
// `undefined` explicitly (it matters under exactOptionalPropertyTypes), so they do here too.

/** What a model accepts as input. */
export type ModelInputModality = "text" | "image";
/** Prompt cache retention preference; providers map it to their own settings. */
export type CacheRetention = "none" | "short" | "long";
/** Prices per million tokens, by kind of token. */
export interface ModelCostRates {
  /** Per million input tokens. */
  input: number;
  /** Per million output tokens. */
  output: number;
  /** Per million tokens read from the prompt cache. */
  cacheRead: number;
  /** Per million tokens written to the prompt cache. */
  cacheWrite: number;
}
/** Rates that apply above `inputTokensAbove` input tokens. */
export interface ModelCostTier extends ModelCostRates {
  /** The input token count above which these rates apply. */
  inputTokensAbove: number;
}
/** Cost per million tokens. */
export interface ModelCost extends ModelCostRates {
  /** Rates for requests above a number of input tokens. */
  tiers?: ModelCostTier[] | undefined;
}
/** How images should be resized before they are sent to a model (catalogue data). */
export interface ModelImageResizeOptions {
  maxWidth?: number | undefined;
  maxHeight?: number | undefined;
  maxBytes?: number | undefined;
  jpegQuality?: number | undefined;
}
/** A model's image limits: resizing, and images per message and per request (catalogue data). */
export interface ModelImageInputLimits {
  resize?: ModelImageResizeOptions | undefined;
  maxPerMessage?: number | undefined;
  maxPerRequest?: number | undefined;
}
/** A model's input limits: request size and images (catalogue data). */
export interface ModelInputLimits {
  maxRequestBytes?: number | undefined;
  images?: ModelImageInputLimits | undefined;
}
/** Provider values per thinking level; `null` marks a level unsupported. */
export type ThinkingLevelMap = { [L in ThinkingLevel]?: string | null | undefined };
/** Prompt cache lifetimes per {@link CacheRetention} tier. */
export interface ModelPromptCache {
  short?: number | undefined;
  long?: number | undefined;
}
/**
 * Sampling parameters merged into an OpenAI-compatible request body as they are, over its
 * named fields (e.g. `top_p`, `top_k`).
 */
export type SamplingParams = Record<string, unknown>;
/** {@link SamplingParams} per thinking level, merged over the model's `samplingParams`. */
export type SamplingParamsByThinkingLevel = { [L in ThinkingLevel]?: SamplingParams };

/** How session affinity is sent to an OpenAI-compatible server (a compatibility setting). */
export type SessionAffinityFormat = "openai" | "openai-nosession" | "openrouter";
/** The request field that carries a thinking token budget (a compatibility setting). */
export type ThinkingTokenBudgetField = "thinking_budget" | "thinking_budget_tokens" | "thinking_token_budget";
/** A value of `chatTemplateKwargs`: a literal, or (`$var`) one of the request's thinking settings. */
export type ChatTemplateKwargValue =
  | string
  | number
  | boolean
  | null
  | { $var: "thinking.budget" | "thinking.effort" | "thinking.enabled"; omitWhenOff?: boolean | undefined };
/** Latency or throughput thresholds by percentile, in OpenRouter's routing preferences. */
type LatencyPercentiles = { p50?: number | undefined; p75?: number | undefined; p90?: number | undefined; p99?: number | undefined };
/** OpenRouter provider routing preferences. */
export interface OpenRouterRouting {
  allow_fallbacks?: boolean | undefined;
  require_parameters?: boolean | undefined;
  data_collection?: "allow" | "deny" | undefined;
  zdr?: boolean | undefined;
  enforce_distillable_text?: boolean | undefined;
  order?: string[] | undefined;
  only?: string[] | undefined;
  ignore?: string[] | undefined;
  quantizations?: string[] | undefined;
  sort?: string | { by?: string | undefined; partition?: string | null | undefined };
  max_price?: {
    prompt?: string | number | undefined;
    completion?: string | number | undefined;
    image?: string | number | undefined;
    audio?: string | number | undefined;
    request?: string | number | undefined;
  };
  preferred_min_throughput?: number | LatencyPercentiles | undefined;
  preferred_max_latency?: number | LatencyPercentiles | undefined;
}
/** Vercel AI Gateway routing preferences. */
export interface VercelGatewayRouting {
  only?: string[] | undefined;
  order?: string[] | undefined;
}
/** Compatibility settings of OpenAI-compatible Chat Completions servers. */
export interface OpenAICompletionsCompat {
  supportsStore?: boolean | undefined;
  supportsDeveloperRole?: boolean | undefined;
  supportsReasoningEffort?: boolean | undefined;
  supportsUsageInStreaming?: boolean | undefined;
  supportsFinishReason?: boolean | undefined;
  maxTokensField?: "max_completion_tokens" | "max_tokens" | undefined;
  requiresToolResultName?: boolean | undefined;
  requiresAssistantAfterToolResult?: boolean | undefined;
  requiresNonNullAssistantContent?: boolean | undefined;
  requiresToolsWithToolHistory?: boolean | undefined;
  requiresThinkingAsText?: boolean | undefined;
  requiresReasoningContentOnAssistantMessages?: boolean | undefined;
  thinkingFormat?:
    | "ant-ling"
    | "baseten"
    | "chat-template"
    | "deepseek"
    | "openai"
    | "openrouter"
    | "qwen"
    | "qwen-chat-template"
    | "string-thinking"
    | "together"
    | "zai"
    | undefined;
  chatTemplateKwargs?: Record<string, ChatTemplateKwargValue> | undefined;
  chatTemplateArgs?: Record<string, ChatTemplateKwargValue> | undefined;
  openRouterRouting?: OpenRouterRouting | undefined;
  vercelGatewayRouting?: VercelGatewayRouting | undefined;
  zaiToolStream?: boolean | undefined;
  thinkingTokenBudgetField?: ThinkingTokenBudgetField | undefined;
  supportsThinkingTokenBudget?: boolean | undefined;
  supportsOpenAIGrammarTools?: boolean | undefined;
  supportsMidConvoSystemMessages?: boolean | undefined;
  supportsMidConvoToolAdditions?: boolean | undefined;
  supportsStrictMode?: boolean | undefined;
  cacheControlFormat?: "anthropic" | undefined;
  sendSessionAffinityHeaders?: boolean | undefined;
  sessionAffinityFormat?: SessionAffinityFormat | undefined;
  promptCacheKeyMode?: "auto" | "disabled" | "enabled" | undefined;
  supportsLongCacheRetention?: boolean | undefined;
  vllmPriority?: number | undefined;
}
/** Compatibility settings of OpenAI Responses APIs. */
export interface OpenAIResponsesCompat {
  supportsDeveloperRole?: boolean | undefined;
  supportsMidConvoSystemMessages?: boolean | undefined;
  sessionAffinityFormat?: SessionAffinityFormat | undefined;
  promptCacheKeyMode?: "auto" | "disabled" | "enabled" | undefined;
  supportsLongCacheRetention?: boolean | undefined;
  supportsStrictMode?: boolean | undefined;
  supportsOpenAIGrammarTools?: boolean | undefined;
  supportsAdditionalTools?: boolean | undefined;
  supportsToolSearch?: boolean | undefined;
  supportsExplicitPromptCacheMode?: boolean | undefined;
  supportsMidConvoEffort?: boolean | undefined;
  supportsMaxOutputTokens?: boolean | undefined;
}
/** An Anthropic refusal fallback model with its local pricing. */
export interface AnthropicAllowedFallbackModel {
  provider: string;
  model: string;
  cost: ModelCost;
}
/** Compatibility settings of Anthropic Messages-compatible APIs. */
export interface AnthropicMessagesCompat {
  supportsEagerToolInputStreaming?: boolean | undefined;
  supportsLongCacheRetention?: boolean | undefined;
  sendSessionAffinityHeaders?: boolean | undefined;
  sessionAffinityFormat?: "openrouter" | undefined;
  supportsCacheControlOnTools?: boolean | undefined;
  supportsTemperature?: boolean | undefined;
  forceAdaptiveThinking?: boolean | undefined;
  allowEmptySignature?: boolean | undefined;
  supportsStrictTools?: boolean | undefined;
  supportsMidConvoEffort?: boolean | undefined;
  supportsMidConvoSystemMessages?: boolean | undefined;
  supportsMidConvoToolChanges?: boolean | undefined;
  supportsMessageThreads?: boolean | undefined;
  allowedFallbackModels?: AnthropicAllowedFallbackModel[] | undefined;
}
/** Compatibility settings of Amazon Bedrock models. */
export interface BedrockCompat {
  supportsStrictMode?: boolean | undefined;
}
/** Compatibility settings of the Mistral chat API. */
export interface MistralConversationsCompat {
  supportsMidConvoSystemMessages?: boolean | undefined;
  supportsStrictMode?: boolean | undefined;
}
/** The `compat` field's type for an API (none for APIs without compatibility settings). */
export type ModelCompat<TApi extends Api> = TApi extends "openai-completions"
  ? OpenAICompletionsCompat
  : TApi extends "openai-responses" | "azure-openai-responses" | "openai-codex-responses"
    ? OpenAIResponsesCompat
    : TApi extends "anthropic-messages"
      ? AnthropicMessagesCompat
      : TApi extends "bedrock-converse-stream"
        ? BedrockCompat
        : TApi extends "mistral-conversations"
          ? MistralConversationsCompat
          : never;

/**
 * A chat model, as pi-ai's catalog (`getModel()`) describes it: plain data.
 *
 * pi-ai's catalogue models work as they are, as do those of `pi-agent-wasm/models` and objects
 * written by hand.
 */
export interface Model<TApi extends Api = Api> {
  /** The id the provider knows the model by. */
  id: string;
  /** A display name. */
  name: string;
  /** The API to request it over; the built-in stream chooses its protocol by it. */
  api: TApi;
  /** The provider's id. */
  provider: ProviderId;
  /** The API's base URL, e.g. `"https://api.openai.com/v1"`. */
  baseUrl: string;
  /** What it accepts as input. */
  input: ModelInputModality[];
  /** Input limits (catalogue data). */
  inputLimits?: ModelInputLimits;
  /** Cost per million tokens. */
  cost: ModelCost;
  /** Headers added to each request. */
  headers?: Record<string, string>;
  /** Absent or `"chat"`: a chat model. */
  type?: "chat";
  /** Whether the model can think (reason) before it answers. */
  reasoning: boolean;
  /** The provider's value for each thinking level; a missing level uses the default. */
  thinkingLevelMap?: ThinkingLevelMap;
  /** Prompt cache lifetimes, when known. */
  promptCache?: ModelPromptCache;
  /** The context window, in tokens. */
  contextWindow: number;
  /** The most output tokens of one response. */
  maxTokens: number;
  /** Default sampling parameters; a request's own override them key by key. */
  samplingParams?: SamplingParams;
  /** Sampling parameters by the thinking level in effect. */
  samplingParamsByThinkingLevel?: SamplingParamsByThinkingLevel;
  /** Compatibility overrides; auto-detected from `baseUrl` when absent. */
  compat?: ModelCompat<TApi>;
}

// ---------------------------------------------------------------------------------------
// Stream events and streams

/**
 * An event of one response stream (pi-ai 1.6.0's protocol).
 *
 * `start`, then the updates of each content block (`*_start`, `*_delta`, `*_end`, by
 * `contentIndex`), then `done` with the final message or `error` with the failed one. `partial`
 * is the response so far.
 */
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

/**
 * A push-based async-iterable event queue with a final result: pi-ai 1.6.0's `EventStream`,
 * with `fail()` and a public `done` added.
 *
 * pi-ai's class is nominal, so this one is not assignable to pi-ai's type (nor pi-ai's to this
 * one).
 */
export declare class EventStream<T, R = T> implements AsyncIterable<T> {
  /**
   * An empty stream.
   *
   * @param isComplete - Whether an event completes the stream.
   * @param extractResult - The result of the stream, from its completing event.
   */
  constructor(isComplete: (event: T) => boolean, extractResult: (event: T) => R);
  /** Whether the stream has completed, ended or failed. Not in pi-ai (there it is protected). */
  readonly done: boolean;
  /**
   * Queues an event for the iterators; ignored once the stream is done. A completing event
   * finishes the stream and resolves `result()` with `extractResult(event)`; it is still
   * delivered.
   */
  push(event: T): void;
  /** Finishes the stream; resolves `result()` when `result` is given. */
  end(result?: R): void;
  /**
   * Ends the stream with an error: iterators throw it once the queued events are read, and
   * `result()` rejects with it. Not in pi-ai.
   */
  fail(error: unknown): void;
  /** Iterates the events in push order, until the stream is done. */
  [Symbol.asyncIterator](): AsyncIterator<T>;
  /** The stream's result: from its completing event, or given to `end()`. */
  result(): Promise<R>;
}

/**
 * The event stream of one response (pi-ai 1.6.0's); a stream function you write may return one.
 *
 * It completes on `done` (its result is the event's `message`) or `error` (the event's
 * `error`), and sets the final message's `durationMs` to the time since the stream was made,
 * unless the message has one or started before the stream.
 */
export declare class AssistantMessageEventStream extends EventStream<AssistantMessageEvent, AssistantMessage> {
  /** An empty stream; push the response's events into it. */
  constructor();
}
/** A new {@link AssistantMessageEventStream} (pi-ai 1.6.0's factory). */
export declare function createAssistantMessageEventStream(): AssistantMessageEventStream;

/**
 * What a stream function may return: this package's `AssistantMessageEventStream`, pi-ai's,
 * or any async iterable of the events with a `result()`.
 */
export interface AssistantMessageEventSource extends AsyncIterable<AssistantMessageEvent> {
  /** The final message of the response. */
  result(): Promise<AssistantMessage>;
}

/**
 * `context` as a stream function receives it: the transcript, whose system messages carry the
 * prompt and the tool declarations.
 *
 * pi-ai brands its type so that only its `normalizeContext` makes one; a brand cannot be
 * reproduced without depending on pi-ai.
 */
export interface TranscriptContext {
  /** The transcript, system messages included. */
  messages: Message[];
}

// ---------------------------------------------------------------------------------------
// Stream options

/** Whether the model may call tools: `"auto"` (it decides) or `"none"`. */
export type ToolChoice = "auto" | "none";
/** The transport preferred where a provider offers several. The built-in stream uses SSE over `fetch`. */
export type Transport = "sse" | "websocket" | "websocket-cached" | "auto";
/** Token budgets per thinking level (token-based providers only). */
export interface ThinkingBudgets {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}
/** Request headers; a `null` value removes a default header of that name. */
export type ProviderHeaders = Record<string, string | null>;
/** A `fetch` function, typed as the global one. */
export type FetchFunction = typeof globalThis.fetch;
/** A provider's HTTP response as `onResponse` sees it: before its body is read. */
export interface ProviderResponse {
  /** The HTTP status. */
  status: number;
  /** The response headers. */
  headers: Record<string, string>;
}

/** The `User-Agent` mode: `"detailed"`, `"short"` or a custom value. */
export type UserAgentMode = "short" | "detailed" | { custom: string };
/** Who requests are attributed to (OpenRouter, NVIDIA NIM and OpenCode headers). */
export interface ClientAttribution {
  /** The app's name. */
  name: string;
  /** The app's URL. */
  url: string;
  /** The app's categories, e.g. `["cli-agent"]`. */
  categories?: string[];
}
/** How requests identify the calling app. */
export interface ClientIdentity {
  /** The `User-Agent` mode. The built-in stream sends no `User-Agent` (browsers refuse to set it). */
  userAgent?: UserAgentMode;
  /** `null` turns off attribution set by a merged identity. */
  attribution?: ClientAttribution | null;
  /** The version in a detailed `User-Agent`. */
  version?: string;
}

// pi-telemetry's span, as far as a stream function's options need it.

/** A span attribute's value (pi-telemetry's). */
export type TelemetryAttributeValue = string | number | boolean | readonly string[] | readonly number[] | readonly boolean[];
/** A span's attributes by name (pi-telemetry's). */
export interface TelemetrySpanAttributes {
  [name: string]: TelemetryAttributeValue | undefined;
}
/** A link from a span to another span's context (pi-telemetry's). */
export interface TelemetrySpanLink {
  context: TelemetryContext;
  attributes?: TelemetrySpanAttributes;
}
/** The name, attributes and links of a span to start (pi-telemetry's). */
export interface TelemetrySpanOptions {
  name: string;
  attributes?: TelemetrySpanAttributes;
  links?: readonly TelemetrySpanLink[];
}
/** A span's outcome (pi-telemetry's). */
export type TelemetrySpanStatus = { status: "ok" } | { status: "error"; error?: { name: string; message: string } };
/** Where spans are started: a tracer's root, or a parent span (pi-telemetry's). */
export interface TelemetryContext {
  /** Runs `callback` inside a new span and resolves with what it returns. */
  startSpan<T>(options: TelemetrySpanOptions, callback: (span: TelemetrySpan) => T | Promise<T>): Promise<T>;
}
/** A telemetry span (pi-telemetry's), as a stream function's `telemetry` option gets it. */
export interface TelemetrySpan extends TelemetryContext {
  /** Links the span to another span's context. */
  addLink(link: TelemetrySpanLink): void;
  /** Records a named event on the span. */
  addEvent(name: string, attributes?: TelemetrySpanAttributes): void;
  /** Sets attributes of the span. */
  setAttributes(attributes: TelemetrySpanAttributes): void;
  /** Sets the span's outcome. */
  setStatus(status: TelemetrySpanStatus): void;
}

/**
 * The options of a stream function: pi-ai 1.6.0's `SimpleStreamOptions`, every field.
 *
 * In a loop they come from the {@link AgentLoopConfig}. The built-in `streamSimple` reads
 * `apiKey`, `env`, `signal`, `maxTokens`, `temperature`, `toolChoice`, `reasoning`, `headers`,
 * `identity`, `maxRetries`, `maxRetryDelayMs`, `timeoutMs`, `fetch`, `onPayload`, `onResponse`,
 * `sessionId`, `cacheRetention`, `thinkingBudgets` and `metadata`; a stream function you pass
 * gets them all.
 */
export interface SimpleStreamOptions {
  /** Aborts the request; the response then ends with `stopReason` `"aborted"`. */
  signal?: AbortSignal;
  /** Parent span for telemetry (pi-ai's stream functions; the built-in one ignores it). */
  telemetry?: TelemetrySpan;
  /**
   * Sent only in the API's key header, never in an event or error text. Without one (or a
   * blank one), the built-in stream looks the key up as pi-ai does: in `env`, then in
   * `process.env` where there is one.
   */
  apiKey?: string;
  /** The `fetch` requests go through (default: the global one), e.g. a Workers service binding. */
  fetch?: FetchFunction;
  /** Provider environment values, looked up before `process.env` for the API key (as pi-ai). */
  env?: Record<string, string>;
  /** Inspects or replaces the request body; `undefined` keeps it. */
  onPayload?: (payload: unknown, model: Model<Api>) => unknown | undefined | Promise<unknown | undefined>;
  /** Called with the response status and headers before the body is read. */
  onResponse?: (response: ProviderResponse, model: Model<Api>) => void | Promise<void>;
  /** Added to (and overriding) the model's headers; `null` removes a default header. */
  headers?: ProviderHeaders;
  /** How requests identify the calling app; in a loop, over {@link DEFAULT_AGENT_IDENTITY}. */
  identity?: ClientIdentity;
  /** The longest wait for the response, then for each piece of the body (built-in stream: none by default). */
  timeoutMs?: number;
  /** Retries of 408/409/429/5xx and network errors (default 0 in the built-in stream). */
  maxRetries?: number;
  /** The longest server-requested retry delay to wait for (default 60000; 0: no cap). */
  maxRetryDelayMs?: number;
  /** Sees each provider event before it is converted (pi-ai's stream functions; the built-in one does not read it). */
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => void | Promise<void>;
  /** The sampling temperature. */
  temperature?: number;
  /** Sampling parameters merged into the request body (pi-ai's; the built-in stream uses only the model's). */
  samplingParams?: SamplingParams;
  /** The most output tokens of the response. */
  maxTokens?: number;
  /** The preferred transport (pi-ai's; the built-in stream uses SSE over `fetch`). */
  transport?: Transport;
  /** The prompt cache retention preference; providers map it to their own settings. */
  cacheRetention?: CacheRetention;
  /** A session id, for providers that cache or route requests by session. */
  sessionId?: string;
  /** Neither use nor record server-side continuation state (pi-ai's; the built-in stream does not read it). */
  disableContinuation?: boolean;
  /** The WebSocket connect timeout (pi-ai's; the built-in stream does not read it). */
  websocketConnectTimeoutMs?: number;
  /** Request metadata; Anthropic reads `user_id`. */
  metadata?: Record<string, unknown>;
  /** Whether the model may call tools; absent: the provider's default. */
  toolChoice?: ToolChoice;
  /** The thinking level to ask for. In an `Agent`'s runs: its `thinkingLevel` (none for `"off"`). */
  reasoning?: Exclude<ThinkingLevel, "off">;
  /** Asks a capable provider for a deferred response (pi-ai's; the built-in stream does not read it). */
  deferred?: boolean | { window?: "15m" | "1h" | "24h" };
  /** Token budgets per thinking level (token-based providers). */
  thinkingBudgets?: ThinkingBudgets;
}
