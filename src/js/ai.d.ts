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

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export type JsonObject = { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------------
// Content blocks and messages

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}
export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  thinkingSignature?: string;
  /** The thinking was redacted; the opaque payload is in `thinkingSignature`. */
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
  arguments: JsonObject;
  thoughtSignature?: string;
  /** OpenAI Responses namespace of a namespaced tool. */
  namespace?: string;
  /** Set when the streamed argument text was not a JSON object; `arguments` is then `{}`. */
  argumentsError?: string;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The part of `cacheWrite` written with 1h retention (Anthropic only). */
  cacheWrite1h?: number;
  /** Reasoning tokens, a subset of `output`, when the provider reports them. */
  reasoning?: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number; totalFromProvider?: boolean };
}

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
  name: string;
  description: string;
  parameters: TParameters;
  constrainedSampling?: false | ConstrainedSamplingConfig;
}
export interface ToolReference {
  name: string;
}

export interface SystemMessage {
  role: "system";
  content: string | TextContent[];
  /** Named prompt sections; `null` removes one declared earlier. */
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: ToolReference[];
  timestamp: number;
}
export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface DiagnosticErrorInfo {
  name?: string;
  message: string;
  stack?: string;
  code?: string | number;
}
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

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: Api;
  provider: ProviderId;
  model: string;
  responseModel?: string;
  responseId?: string;
  providerThinkingLevel?: string;
  /** The level the loop requested for this response. */
  thinkingLevel?: ThinkingLevel;
  diagnostics?: AssistantMessageDiagnostic[];
  usage: Usage;
  stopReason: StopReason;
  deferred?: DeferredHandle;
  errorMessage?: string;
  rawStopReason?: string;
  endTurn?: boolean;
  timestamp: number;
  durationMs?: number;
}

/** A call another tool made while it ran. */
export interface NestedToolCallRecord {
  id: string;
  name: string;
  arguments?: JsonObject;
  argumentsBytes?: number;
  status: "ok" | "error" | "unfinished";
  durationMs?: number;
  error?: string;
}
export interface NestedToolCalls {
  calls: NestedToolCallRecord[];
  complete: boolean;
}

export interface ToolResultMessage<TDetails = JsonValue> {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  usage?: Usage;
  nestedCalls?: NestedToolCalls;
  isError: boolean;
  timestamp: number;
  durationMs?: number;
}

/** An LLM message. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

// ---------------------------------------------------------------------------------------
// Models

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
export type ProviderId = string;

// The model and compat types below come from pi-ai's schemas, whose optional fields accept
// `undefined` explicitly (it matters under exactOptionalPropertyTypes), so they do here too.

export type ModelInputModality = "text" | "image";
export type CacheRetention = "none" | "short" | "long";
export interface ModelCostRates {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}
/** Rates that apply above `inputTokensAbove` input tokens. */
export interface ModelCostTier extends ModelCostRates {
  inputTokensAbove: number;
}
/** Cost per million tokens. */
export interface ModelCost extends ModelCostRates {
  tiers?: ModelCostTier[] | undefined;
}
export interface ModelImageResizeOptions {
  maxWidth?: number | undefined;
  maxHeight?: number | undefined;
  maxBytes?: number | undefined;
  jpegQuality?: number | undefined;
}
export interface ModelImageInputLimits {
  resize?: ModelImageResizeOptions | undefined;
  maxPerMessage?: number | undefined;
  maxPerRequest?: number | undefined;
}
export interface ModelInputLimits {
  maxRequestBytes?: number | undefined;
  images?: ModelImageInputLimits | undefined;
}
/** Provider values per thinking level; `null` marks a level unsupported. */
export type ThinkingLevelMap = { [L in ThinkingLevel]?: string | null | undefined };
/** Prompt cache lifetimes per retention tier. */
export interface ModelPromptCache {
  short?: number | undefined;
  long?: number | undefined;
}
export type SamplingParams = Record<string, unknown>;
export type SamplingParamsByThinkingLevel = { [L in ThinkingLevel]?: SamplingParams };

export type SessionAffinityFormat = "openai" | "openai-nosession" | "openrouter";
export type ThinkingTokenBudgetField = "thinking_budget" | "thinking_budget_tokens" | "thinking_token_budget";
export type ChatTemplateKwargValue =
  | string
  | number
  | boolean
  | null
  | { $var: "thinking.budget" | "thinking.effort" | "thinking.enabled"; omitWhenOff?: boolean | undefined };
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

/** A chat model, as pi-ai's catalog (`getModel()`) describes it. */
export interface Model<TApi extends Api = Api> {
  id: string;
  name: string;
  api: TApi;
  provider: ProviderId;
  baseUrl: string;
  input: ModelInputModality[];
  inputLimits?: ModelInputLimits;
  /** Cost per million tokens. */
  cost: ModelCost;
  headers?: Record<string, string>;
  type?: "chat";
  reasoning: boolean;
  thinkingLevelMap?: ThinkingLevelMap;
  promptCache?: ModelPromptCache;
  contextWindow: number;
  maxTokens: number;
  samplingParams?: SamplingParams;
  samplingParamsByThinkingLevel?: SamplingParamsByThinkingLevel;
  /** Compatibility overrides; auto-detected from `baseUrl` when absent. */
  compat?: ModelCompat<TApi>;
}

// ---------------------------------------------------------------------------------------
// Stream events and streams

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

/**
 * What a stream function may return: this package's `AssistantMessageEventStream`, pi-ai's,
 * or any async iterable of the events with a `result()`.
 */
export interface AssistantMessageEventSource extends AsyncIterable<AssistantMessageEvent> {
  result(): Promise<AssistantMessage>;
}

/**
 * `context` as a stream function receives it: the transcript, whose system messages carry
 * the prompt and the tool declarations. (pi-ai brands its type so only its `normalizeContext`
 * makes one; a brand cannot be reproduced without depending on pi-ai.)
 */
export interface TranscriptContext {
  messages: Message[];
}

// ---------------------------------------------------------------------------------------
// Stream options

export type ToolChoice = "auto" | "none";
export type Transport = "sse" | "websocket" | "websocket-cached" | "auto";
/** Token budgets per thinking level (token-based providers only). */
export interface ThinkingBudgets {
  minimal?: number;
  low?: number;
  medium?: number;
  high?: number;
}
export type ProviderHeaders = Record<string, string | null>;
export type FetchFunction = typeof globalThis.fetch;
export interface ProviderResponse {
  status: number;
  headers: Record<string, string>;
}

/** The `User-Agent` mode: `"detailed"`, `"short"` or a custom value. */
export type UserAgentMode = "short" | "detailed" | { custom: string };
/** Who requests are attributed to (OpenRouter, NVIDIA NIM and OpenCode headers). */
export interface ClientAttribution {
  name: string;
  url: string;
  categories?: string[];
}
/** How requests identify the calling app. */
export interface ClientIdentity {
  userAgent?: UserAgentMode;
  /** `null` turns off attribution set by a merged identity. */
  attribution?: ClientAttribution | null;
  version?: string;
}

/** pi-telemetry's span, as far as a stream function's options need it. */
export type TelemetryAttributeValue = string | number | boolean | readonly string[] | readonly number[] | readonly boolean[];
export interface TelemetrySpanAttributes {
  [name: string]: TelemetryAttributeValue | undefined;
}
export interface TelemetrySpanLink {
  context: TelemetryContext;
  attributes?: TelemetrySpanAttributes;
}
export interface TelemetrySpanOptions {
  name: string;
  attributes?: TelemetrySpanAttributes;
  links?: readonly TelemetrySpanLink[];
}
export type TelemetrySpanStatus = { status: "ok" } | { status: "error"; error?: { name: string; message: string } };
export interface TelemetryContext {
  startSpan<T>(options: TelemetrySpanOptions, callback: (span: TelemetrySpan) => T | Promise<T>): Promise<T>;
}
export interface TelemetrySpan extends TelemetryContext {
  addLink(link: TelemetrySpanLink): void;
  addEvent(name: string, attributes?: TelemetrySpanAttributes): void;
  setAttributes(attributes: TelemetrySpanAttributes): void;
  setStatus(status: TelemetrySpanStatus): void;
}

/**
 * pi-ai's `SimpleStreamOptions`, every field. The built-in `streamSimple` reads `apiKey`,
 * `signal`, `maxTokens`, `temperature`, `toolChoice`, `reasoning`, `headers`, `identity`,
 * `maxRetries`, `maxRetryDelayMs`, `timeoutMs`, `fetch`, `onPayload`, `onResponse`,
 * `sessionId`, `cacheRetention`, `thinkingBudgets` and `metadata`; a stream function you pass
 * gets them all.
 */
export interface SimpleStreamOptions {
  signal?: AbortSignal;
  /** Parent span for telemetry (pi-ai's stream functions; the built-in one ignores it). */
  telemetry?: TelemetrySpan;
  /** Sent only in the API's key header, never in an event or error text. */
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
  identity?: ClientIdentity;
  /** The longest wait for the response, then for each piece of the body. */
  timeoutMs?: number;
  /** Retries of 408/409/429/5xx and network errors (default 0 in the built-in stream). */
  maxRetries?: number;
  /** The longest server-requested retry delay to wait for (default 60000; 0: no cap). */
  maxRetryDelayMs?: number;
  onProviderStreamEvent?: (data: unknown, model: Model<Api>) => void | Promise<void>;
  temperature?: number;
  samplingParams?: SamplingParams;
  maxTokens?: number;
  transport?: Transport;
  cacheRetention?: CacheRetention;
  sessionId?: string;
  disableContinuation?: boolean;
  websocketConnectTimeoutMs?: number;
  /** Request metadata; Anthropic reads `user_id`. */
  metadata?: Record<string, unknown>;
  toolChoice?: ToolChoice;
  reasoning?: Exclude<ThinkingLevel, "off">;
  deferred?: boolean | { window?: "15m" | "1h" | "24h" };
  thinkingBudgets?: ThinkingBudgets;
}
