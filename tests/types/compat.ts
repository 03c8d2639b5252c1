// pi-agent-wasm's types against pi's own (pi-ai and pi-agent-core 1.6.0), type by type. A
// value of pi's type must be usable where this package expects its type and the other way
// round, so most types must be identical (Equals); where a type is deliberately looser, the
// direction that must hold is checked and the reason given.
import type * as Ai from '@earendil-works/pi-ai';
import type * as Pi from '@earendil-works/pi-agent-core';
import * as S from '@earendil-works/pi-schema';
import type * as W from 'pi-agent-wasm';

/** Identical types (TypeScript's own identity, stricter than mutual assignability). */
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Each assignable to the other. */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assignable<From, To> = [From] extends [To] ? true : false;
/** Mutually assignable with the same property names: no field missing on either side. */
type Same<A, B> = Mutual<A, B> extends true ? Equals<keyof A, keyof B> : false;
declare function ok<T extends true>(): void;

// ---- pi-ai's data model: identical ----
ok<Equals<W.JsonValue, Ai.JsonValue>>();
ok<Equals<W.TextContent, Ai.TextContent>>();
ok<Equals<W.ThinkingContent, Ai.ThinkingContent>>();
ok<Equals<W.ImageContent, Ai.ImageContent>>();
ok<Equals<W.ToolCall, Ai.ToolCall>>();
ok<Equals<W.Usage, Ai.Usage>>();
ok<Equals<W.StopReason, Ai.StopReason>>();
ok<Equals<W.Tool, Ai.Tool>>();
ok<Equals<W.SystemMessage, Ai.SystemMessage>>();
ok<Equals<W.UserMessage, Ai.UserMessage>>();
ok<Equals<W.AssistantMessage, Ai.AssistantMessage>>();
ok<Equals<W.ToolResultMessage, Ai.ToolResultMessage>>();
ok<Equals<W.ToolResultMessage<{ n: number }>, Ai.ToolResultMessage<{ n: number }>>>();
ok<Equals<W.Message, Ai.Message>>();
ok<Equals<W.AssistantMessageEvent, Ai.AssistantMessageEvent>>();
ok<Equals<W.Api, Ai.Api>>();
ok<Equals<W.KnownApi, Ai.KnownApi>>();
ok<Equals<W.ModelCost, Ai.ModelCost>>();
ok<Equals<W.ModelInputLimits, Ai.ModelInputLimits>>();
ok<Equals<W.ThinkingLevelMap, Ai.ThinkingLevelMap>>();
ok<Equals<W.OpenAICompletionsCompat, Ai.OpenAICompletionsCompat>>();
ok<Equals<W.OpenAIResponsesCompat, Ai.OpenAIResponsesCompat>>();
ok<Equals<W.AnthropicMessagesCompat, Ai.AnthropicMessagesCompat>>();
ok<Equals<W.BedrockCompat, Ai.BedrockCompat>>();
ok<Equals<W.MistralConversationsCompat, Ai.MistralConversationsCompat>>();
// Models of every known API, of any API, of an unknown one, and `Model<any>` (pi-agent-core's).
ok<Equals<W.Model<'openai-completions'>, Ai.Model<'openai-completions'>>>();
ok<Equals<W.Model<'openai-responses'>, Ai.Model<'openai-responses'>>>();
ok<Equals<W.Model<'azure-openai-responses'>, Ai.Model<'azure-openai-responses'>>>();
ok<Equals<W.Model<'openai-codex-responses'>, Ai.Model<'openai-codex-responses'>>>();
ok<Equals<W.Model<'anthropic-messages'>, Ai.Model<'anthropic-messages'>>>();
ok<Equals<W.Model<'bedrock-converse-stream'>, Ai.Model<'bedrock-converse-stream'>>>();
ok<Equals<W.Model<'mistral-conversations'>, Ai.Model<'mistral-conversations'>>>();
ok<Equals<W.Model<'google-generative-ai'>, Ai.Model<'google-generative-ai'>>>();
ok<Equals<W.Model<'google-vertex'>, Ai.Model<'google-vertex'>>>();
ok<Equals<W.Model<'pi-messages'>, Ai.Model<'pi-messages'>>>();
ok<Equals<W.Model<Ai.Api>, Ai.Model<Ai.Api>>>();
ok<Equals<W.Model<'my-own-api'>, Ai.Model<'my-own-api'>>>();
ok<Equals<W.Model<string>, Ai.Model<string>>>();
ok<Equals<W.Model<any>, Ai.Model<any>>>();
ok<Equals<W.Model, Ai.Model<Ai.Api>>>();

// ---- stream options: the same fields, each assignable both ways. Not identical only because
// pi-telemetry's span type is written out here as far as a span is used (its optional
// metrics and propagation capabilities are left out). ----
ok<Same<W.SimpleStreamOptions, Ai.SimpleStreamOptions>>();
ok<Mutual<W.TelemetrySpan, Required<Ai.SimpleStreamOptions>['telemetry']>>();
ok<Equals<W.ClientIdentity, Ai.ClientIdentity>>();
ok<Equals<W.ThinkingBudgets, Ai.ThinkingBudgets>>();
ok<Equals<W.ProviderResponse, Ai.ProviderResponse>>();
ok<Equals<W.CacheRetention, Ai.CacheRetention>>();
ok<Equals<W.Transport, Ai.Transport>>();
ok<Equals<W.ToolChoice, Ai.ToolChoice>>();
// Models' request options add `transformHeaders`; ours are assignable to them.
ok<Assignable<W.SimpleStreamOptions, Ai.ModelsSimpleStreamOptions>>();

// ---- pi-agent-core: identical ----
ok<Equals<W.AgentMessage, Pi.AgentMessage>>();
ok<Equals<W.AgentEvent, Pi.AgentEvent>>();
ok<Equals<W.AgentToolCall, Pi.AgentToolCall>>();
ok<Equals<W.AgentToolResult, Pi.AgentToolResult>>();
ok<Equals<W.AgentToolResult<{ n: number }>, Pi.AgentToolResult<{ n: number }>>>();
ok<Equals<W.AgentToolCallOutcome, Pi.AgentToolCallOutcome>>();
ok<Equals<W.AgentToolUpdateCallback, Pi.AgentToolUpdateCallback>>();
ok<Equals<W.AgentTool<any>, Pi.AgentTool<any>>>();
ok<Equals<W.AgentTool, Pi.AgentTool>>();
ok<Equals<W.AgentContext, Pi.AgentContext>>();
ok<Equals<W.AgentState, Pi.AgentState>>();
ok<Equals<W.AgentInitialState, Pi.AgentInitialState>>();
ok<Equals<W.BeforeToolCallResult, Pi.BeforeToolCallResult>>();
ok<Equals<W.AfterToolCallResult, Pi.AfterToolCallResult>>();
ok<Equals<W.BeforeToolCallContext, Pi.BeforeToolCallContext>>();
ok<Equals<W.AfterToolCallContext, Pi.AfterToolCallContext>>();
ok<Equals<W.AgentTurnContext, Pi.AgentTurnContext>>();
ok<Equals<W.PrepareNextTurnContext, Pi.PrepareNextTurnContext>>();
ok<Equals<W.AgentTurnDecision, Pi.AgentTurnDecision>>();
ok<Equals<W.FinishTurn, Pi.FinishTurn>>();
ok<Equals<W.AgentLoopTurnUpdate, Pi.AgentLoopTurnUpdate>>();
ok<Equals<W.AgentRequestUpdate, Pi.AgentRequestUpdate>>();
ok<Equals<W.PrepareRequestContext, Pi.PrepareRequestContext>>();
ok<Equals<W.PrepareRequest, Pi.PrepareRequest>>();
ok<Equals<W.ThinkingLevel, Pi.ThinkingLevel>>();
ok<Equals<W.ToolExecutionMode, Pi.ToolExecutionMode>>();
ok<Equals<W.QueueMode, Pi.QueueMode>>();
ok<Equals<W.AgentEventSink, Pi.AgentEventSink>>();
ok<Equals<W.ProxyAssistantMessageEvent, Pi.ProxyAssistantMessageEvent>>();
// Ours adds `fetch` and `timeoutMs`; pi's options go in as they are.
ok<Assignable<Pi.ProxyStreamOptions, W.ProxyStreamOptions>>();
ok<Equals<Omit<W.ProxyStreamOptions, 'fetch' | 'timeoutMs'>, Omit<Pi.ProxyStreamOptions, never>>>();

// ---- pi-agent-core: deliberately looser, so pi's values are accepted ----
// Hooks may return plain values where pi declares Promises (the loop awaits either), and the
// Agent's `streamFn` may be left out (the built-in stream is the default).
ok<Same<W.AgentLoopConfig, Pi.AgentLoopConfig> extends true ? false : true>();
ok<Assignable<Pi.AgentLoopConfig, W.AgentLoopConfig>>();
// Checkpoints (not in pi) add `onCheckpoint` and `onInterruptedToolCall` to the config and
// the options, `restore` to the options, and `snapshot`, `resume`, `discardedUsage` and the
// two hooks to the Agent; waiting tool calls add `toolCallGate`, `needsApproval` and
// `expiresAfterMs` to the config, `needsApproval` and `expiresAfterMs` to the options, and
// those two, `waitingToolCalls`, `approve`, `reject` and `resolveToolCall` to the Agent; the
// bound on an aborted run's waits adds `abortGraceMs` to all three; recording (record, replay
// and fork) adds `record` to all three; nothing else differs.
ok<Equals<Exclude<keyof W.AgentLoopConfig, 'onCheckpoint' | 'onInterruptedToolCall' | 'toolCallGate' | 'needsApproval' | 'expiresAfterMs' | 'abortGraceMs' | 'record'>, keyof Pi.AgentLoopConfig>>();
ok<Assignable<Pi.AgentOptions, W.AgentOptions>>();
ok<Equals<Exclude<keyof W.AgentOptions, 'restore' | 'onCheckpoint' | 'onInterruptedToolCall' | 'needsApproval' | 'expiresAfterMs' | 'abortGraceMs' | 'record'>, keyof Pi.AgentOptions>>();
ok<Assignable<Pi.ToolCallHooks, W.ToolCallHooks>>();
ok<Assignable<Pi.RunToolCallOptions, W.RunToolCallOptions>>();
ok<Equals<keyof W.RunToolCallOptions, keyof Pi.RunToolCallOptions>>();
// The stream function: pi's, pi-ai's provider-level ones (which take pi-ai's branded
// TranscriptContext) and the `Models` one (which takes a Context) are all accepted.
ok<Assignable<Pi.StreamFn, W.StreamFn>>();
ok<Assignable<Ai.ProviderStreams['streamSimple'], W.StreamFn>>();
ok<Assignable<Ai.StreamFunction<Ai.Api, Ai.SimpleStreamOptions>, W.StreamFn>>();
ok<Assignable<Ai.Models['streamSimple'], W.StreamFn>>();
ok<Assignable<W.StreamFn, Pi.StreamFn> extends true ? false : true>(); // ours may return any event source
// The Agent: pi's class has private members, so neither class is assignable to the other;
// what matters is that every public member is there with pi's type.
type PublicKeys<T> = { [K in keyof T]: K }[keyof T];
ok<Equals<Exclude<PublicKeys<W.Agent>, 'snapshot' | 'resume' | 'discardedUsage' | 'onCheckpoint' | 'onInterruptedToolCall' | 'needsApproval' | 'expiresAfterMs' | 'abortGraceMs' | 'waitingToolCalls' | 'approve' | 'reject' | 'resolveToolCall' | 'record'>, PublicKeys<Pi.Agent>>>();
ok<Equals<Parameters<W.Agent['subscribe']>, Parameters<Pi.Agent['subscribe']>>>();
ok<Equals<W.Agent['state'], Pi.Agent['state']>>();

// ---- a tool's argument type from its schema, as pi computes it (pi-schema's Static) ----
type Params<T> = Equals<W.AgentToolParams<T>, Pi.AgentToolParams<T>>;
const objSchema = S.obj({ a: S.num(), b: S.opt(S.str()), c: S.arr(S.int()) });
const nested = S.obj({ inner: S.obj({ x: S.nullable(S.str()) }), tag: S.lit('t'), mode: S.oneOf(['a', 'b'] as const) });
const tagged = S.union([S.obj({ kind: S.lit('a') }), S.obj({ kind: S.lit('b'), n: S.num() })]);
const open = S.obj({ path: S.str({ minLength: 1 }) }, { open: true, description: 'open' });
interface Tree {
  name: string;
  children: Tree[];
}
const tree = S.recursive<Tree>('Tree', (self) => S.obj({ name: S.str(), children: S.arr(self) }));
ok<Params<typeof objSchema>>();
ok<Equals<W.AgentToolParams<typeof objSchema>, { a: number; c: number[]; b?: string }>>();
ok<Params<typeof nested>>();
ok<Params<typeof tagged>>();
ok<Params<typeof open>>();
ok<Params<typeof tree>>();
ok<Params<ReturnType<typeof S.map<boolean>>>>();
ok<Params<ReturnType<typeof S.tuple<[S.Schema<string>, S.Schema<number>]>>>>();
ok<Params<S.Schema<string | undefined>>>();
ok<Params<S.Schema<unknown>>>();
ok<Params<S.Schema<any>>>();
ok<Params<S.Schema<never>>>();
ok<Params<S.Schema<undefined>>>();
ok<Params<S.Schema<null | undefined>>>();
ok<Params<S.Schema>>();
ok<Params<ReturnType<typeof S.bytes>>>();
ok<Params<ReturnType<typeof S.bigint>>>();
ok<Params<ReturnType<typeof S.nul>>>();
ok<Params<ReturnType<typeof S.unsafe<{ custom: true }>>>>();
ok<Params<typeof objSchema | typeof tagged>>();
// Plain JSON Schema objects, `object`, `any`, `never`: unknown, unknown, any, never.
const plain = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] } as const;
const plainMutable = { type: 'object', properties: { a: { type: 'number' } } };
ok<Params<typeof plain>>();
ok<Equals<W.AgentToolParams<typeof plain>, unknown>>();
ok<Params<typeof plainMutable>>();
ok<Params<object>>();
ok<Params<{}>>();
ok<Params<Record<string, unknown>>>();
ok<Params<Record<string, any>>>();
ok<Params<any>>();
ok<Equals<W.AgentToolParams<any>, any>>();
ok<Params<never>>();
ok<Params<unknown>>();
// TypeBox 1.x schemas are typed by their `~kind` (TypeBox is not installed: these are the
// shapes its builders return).
type TbString = { '~kind': 'String'; type: 'string' };
type TbNumber = { '~kind': 'Number'; type: 'number' };
type TbOptional<T> = T & { '~optional': true };
type TbReadonly<T> = T & { '~readonly': true };
type TbObject<P> = { '~kind': 'Object'; type: 'object'; properties: P; required: string[] };
type TbArray<I> = { '~kind': 'Array'; type: 'array'; items: I };
type TbUnion<B extends unknown[]> = { '~kind': 'Union'; anyOf: B };
type TbLiteral<V> = { '~kind': 'Literal'; const: V };
type TbEnum<V extends unknown[]> = { '~kind': 'Enum'; enum: V };
type TbTuple<I extends unknown[]> = { '~kind': 'Tuple'; type: 'array'; items: I };
type TbRecord<K extends string, V> = { '~kind': 'Record'; type: 'object'; patternProperties: { [P in K]: V } };
type TbUnsafe<T> = { '~unsafe': T; type: 'object' };
ok<Params<TbString>>();
ok<Params<TbObject<{ a: TbNumber; b: TbOptional<TbString>; c: TbReadonly<TbNumber>; d: TbReadonly<TbOptional<TbArray<TbString>>> }>>>();
ok<Equals<W.AgentToolParams<TbObject<{ a: TbNumber; b: TbOptional<TbString> }>>, { a: number; b?: string }>>();
ok<Params<TbObject<{}>>>();
ok<Params<TbUnion<[TbLiteral<'x'>, TbLiteral<1>, TbObject<{ n: TbNumber }>]>>>();
ok<Params<TbEnum<['a', 'b']>>>();
ok<Params<TbTuple<[TbString, TbNumber]>>>();
ok<Params<TbRecord<'^-?(?:0|[1-9][0-9]*)$', TbString>>>();
ok<Params<TbRecord<'^.*$', TbNumber>>>();
ok<Params<TbUnsafe<{ u: 1 }>>>();
ok<Params<{ '~kind': 'Integer' }>>();
ok<Params<{ '~kind': 'Boolean' }>>();
ok<Params<{ '~kind': 'Null' }>>();
ok<Params<{ '~kind': 'BigInt' }>>();
ok<Params<{ '~kind': 'Undefined' }>>();
ok<Params<{ '~kind': 'Any' }>>();
ok<Params<{ '~kind': 'Unknown' }>>();
ok<Params<{ '~kind': 'Integer' } | { '~kind': 'Boolean' } | { '~kind': 'Null' }>>();
ok<Params<{ '~kind': 'SomethingNew'; type: 'string' }>>();
ok<Params<TbObject<{ nested: TbObject<{ list: TbArray<TbUnion<[TbString, TbNumber]>> }> }>>>();
// TypeBox 0.x schemas (interfaces with a symbol `Kind` and a `static` property) get unknown
// from pi; so they do here.
declare const Kind: unique symbol;
interface TbLegacyObject {
  [Kind]: 'Object';
  static: { a: number };
  type: 'object';
  properties: {};
}
ok<Params<TbLegacyObject>>();
// Other symbol-keyed properties are not a brand.
ok<Params<{ type: 'object'; [Symbol.toStringTag]: 'Schema' }>>();
ok<Equals<W.AgentToolParams<{ type: 'object'; [Symbol.toStringTag]: 'Schema' }>, unknown>>();

// ---- known limits, kept honest: each line must stay an error ----
// pi-ai brands TranscriptContext with a symbol only pi-ai can produce, so the context a
// stream function gets here cannot be handed to pi-ai's provider-level streamSimple (which
// requires the brand) without a cast. Passing such a function as the stream function itself
// works (checked above), and pi-ai's compat and Models streamSimple take any Context.
declare const context: Parameters<W.StreamFn>[1];
// @ts-expect-error the brand is missing
const branded: Ai.TranscriptContext = context;
// pi-ai's EventStream class has private members, so no other class is assignable to it: the
// stream agentLoop returns cannot be annotated with pi-ai's EventStream type.
declare const loop: W.EventStream<W.AgentEvent, W.AgentMessage[]>;
// @ts-expect-error pi-ai's class is nominal
const piStream: Ai.EventStream<W.AgentEvent, W.AgentMessage[]> = loop;
// A generic tool factory that types the arguments with pi-schema's own Static<T>: for a
// generic T, this package's AgentToolParams<T> is a deferred conditional type of its own, which
// TypeScript cannot relate to pi-schema's (pi's AgentToolParams is defined through Static).
// Non-generic uses are identical (above); generic code types the arguments with
// AgentToolParams<T> instead.
export function makeTool<T extends S.Schema>(schema: T, run: (args: S.Static<T>) => string, runOurs: (args: W.AgentToolParams<T>) => string): W.AgentTool<T>[] {
  return [
    // @ts-expect-error AgentToolParams<T> is not Static<T> while T is unknown
    { name: 't', label: 't', description: 't', parameters: schema, execute: async (_id, args) => ({ content: [{ type: 'text', text: run(args) }], details: {} }) },
    { name: 't', label: 't', description: 't', parameters: schema, execute: async (_id, args) => ({ content: [{ type: 'text', text: runOurs(args) }], details: {} }) },
  ];
}
export { branded, piStream };
