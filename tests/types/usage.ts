// Typed usage sample: `tsc --noEmit -p tests/types` must accept it against the package's
// published types (resolved by name through the "types" export condition).
import { SseDecoder, type SseEvent } from 'pi-agent-wasm';

const decoder = new SseDecoder();
const events: SseEvent[] = decoder.feed(new TextEncoder().encode('data: x\n\n'));
const rest: SseEvent[] = decoder.finish();
const names: string[] = [...events, ...rest].map((e) => `${e.type}:${e.data}:${e.lastEventId}`);
const truncated: boolean = decoder.truncated;
const retry: number | undefined = decoder.retry;
decoder.free();

// @ts-expect-error feed takes bytes, not a string
decoder.feed('data: x');

export { names, truncated, retry };

// ---- the loop API, typed as a pi user would write it ----
import { num, obj } from '@earendil-works/pi-schema';
import {
  agentLoop,
  runAgentLoop,
  runToolCall,
  createAssistantMessageEventStream,
  setDefaultStreamFn,
  type AgentTool,
  type AgentEvent,
  type AgentLoopConfig,
  type AgentMessage,
  type AssistantMessage,
  type Model,
  type StreamFn,
} from 'pi-agent-wasm';

const model: Model = {
  id: 'm', name: 'M', api: 'openai-completions', provider: 'local', baseUrl: 'http://127.0.0.1:1/v1',
  reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100,
};

// The first type argument is the schema's type, as in pi: a pi-schema (or TypeBox) schema
// types `execute`'s arguments.
const calcParams = obj({ a: num(), b: num() });
const calc: AgentTool<typeof calcParams, { product: number }> = {
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies',
  parameters: calcParams,
  async execute(_id, { a, b }, _signal, onUpdate) {
    onUpdate?.({ content: [{ type: 'text', text: 'working' }], details: { product: 0 } });
    return { content: [{ type: 'text', text: String(a * b) }], details: { product: a * b } };
  },
};

// A plain JSON Schema carries no type: `AgentTool<any>` gives `any` arguments, as in pi.
const echo: AgentTool<any> = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its text',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: async (_id, { text }) => ({ content: [{ type: 'text', text: String(text) }], details: {} }),
};
// ...and `AgentTool` alone gives `unknown` ones, to be narrowed.
const untyped: AgentTool = {
  name: 'untyped',
  label: 'Untyped',
  description: 'Reads its arguments itself',
  parameters: { type: 'object' },
  // @ts-expect-error the arguments are unknown without a typed schema
  execute: async (_id, { text }) => ({ content: [{ type: 'text', text }], details: undefined }),
};

const streamFn: StreamFn = (m, context) => {
  const s = createAssistantMessageEventStream();
  const message: AssistantMessage = {
    role: 'assistant', content: [{ type: 'text', text: `${context.messages.length}` }], api: m.api, provider: m.provider,
    model: m.id, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: 'stop', timestamp: Date.now(),
  };
  s.push({ type: 'done', reason: 'stop', message });
  return s;
};
setDefaultStreamFn(streamFn);

const config: AgentLoopConfig = {
  model,
  convertToLlm: (messages) => messages.filter((m): m is Exclude<AgentMessage, never> => 'role' in m) as never,
  beforeToolCall: async ({ toolCall }) => (toolCall.name === 'rm' ? { block: true, reason: 'no' } : undefined),
  finishTurn: () => ({ action: 'end' }),
  temperature: 0.2,
};

function onEvent(event: AgentEvent): void {
  switch (event.type) {
    case 'message_update':
      if (event.assistantMessageEvent.type === 'text_delta') console.log(event.assistantMessageEvent.delta);
      break;
    case 'tool_execution_end':
      console.log(event.toolName, event.isError, event.durationMs ?? 0);
      break;
    case 'agent_end':
      console.log(event.messages.length);
      break;
  }
}

export async function typedRun(): Promise<number> {
  const messages: AgentMessage[] = await runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [calc, echo, untyped] }, config, onEvent);
  for await (const e of agentLoop([{ role: 'user', content: 'again', timestamp: 2 }], { messages }, config)) onEvent(e);
  const outcome = await runToolCall({ type: 'toolCall', id: 'x', name: 'calc', arguments: { a: 2, b: 3 } }, {
    tools: [calc], assistantMessage: messages[1] as AssistantMessage, context: { messages },
  });
  return outcome.isError ? 0 : messages.length;
}

// The Agent class (spec §11).
import { Agent, type AgentEvent as AgentLoopEvent, type AgentState } from "pi-agent-wasm";
const agent = new Agent({ initialState: { systemPrompt: "Be terse.", thinkingLevel: "low" }, steeringMode: "all" });
const unsubscribe: () => void = agent.subscribe(async (event: AgentLoopEvent, signal: AbortSignal) => {
  if (event.type === "tool_execution_start" && !signal.aborted) agent.steer({ role: "user", content: "and?", timestamp: 1 });
});
const state: AgentState = agent.state;
const prompt: string = state.systemPrompt;
state.messages = [];
void prompt;
void agent.prompt("hi", [{ type: "image", data: "", mimeType: "image/png" }]).then(() => agent.waitForIdle());
void agent.continue();
agent.followUpMode = "one-at-a-time";
agent.abort();
agent.reset();
unsubscribe();

// ---- the built-in stream's own option, and the built-in stream as a loop's streamFn ----
import { streamSimple, type BuiltinStreamOptions } from 'pi-agent-wasm';

const bounded: BuiltinStreamOptions = { apiKey: 'k', timeoutMs: 30_000, maxEventBytes: 8 * 1024 * 1024 };
void streamSimple(model, { messages: [] }, bounded);
const smallWorker: StreamFn = (m, c, o) => streamSimple(m, c, { ...o, maxEventBytes: 8 * 1024 * 1024 });
void smallWorker;
// @ts-expect-error maxEventBytes is a number of bytes
void streamSimple(model, { messages: [] }, { maxEventBytes: '8MB' });
