// Ending what an engine crash interrupted (issue 12). After a trap the wasm side of a run,
// a tool call or a response never settles (wasm.js `guarded`), so the JS side, which saw
// every event go by, closes each in pi's own grammar: the run ends with an error assistant
// message, `turn_end` and `agent_end`, and every tool call it started gets its one result.
import { emptyAssistantMessage } from './messages.js';

/** Reads `object[key]`, or undefined when that throws (a hostile config). */
function read(object, key) {
  try {
    return object?.[key];
  } catch {
    return undefined;
  }
}

/** A tool call's error result (L-116). */
function errorResult(text) {
  return { content: [{ type: 'text', text }], details: {} };
}

/**
 * Watches the events of one run (`runAgentLoop`/`runAgentLoopContinue`). `emit` is what the
 * run emits through; `close(text, config)` ends the run after a crash, with `text` as the
 * error message, and resolves to the run's messages as the run would have.
 */
export function watchRun(emit, resumed) {
  // A resumed run (from a checkpoint) had started before: `resumed` says where it stood.
  let agentStarted = resumed !== undefined;
  let turnOpen = resumed?.turnOpen ?? false;
  /** The messages of the run (`agent_end.messages`), and once it ended, that array. */
  const messages = resumed?.messages ?? [];
  let ended;
  /** The message started and not yet ended (the latest copy of a streamed partial). */
  let open;
  /** The assistant message of the open turn, once ended, and the turn's tool results. */
  let assistant = resumed?.assistant;
  let results = resumed?.results ?? [];
  /** Tool executions of the open turn: id -> undefined while running, its end event after. */
  const executions = new Map();
  /** What the last emit returned: a listener still running when the engine crashed. */
  let last;
  let closing = false;

  function record(event) {
    switch (event.type) {
      case 'agent_start':
        agentStarted = true;
        break;
      case 'turn_start':
        turnOpen = true;
        assistant = undefined;
        results = [];
        executions.clear();
        break;
      case 'message_start':
      case 'message_update':
        open = event.message;
        break;
      case 'message_end':
        open = undefined;
        messages.push(event.message);
        if (event.message.role === 'assistant') assistant = event.message;
        else if (event.message.role === 'toolResult') results.push(event.message);
        break;
      case 'tool_execution_start':
        executions.set(event.toolCallId, undefined);
        break;
      case 'tool_execution_end':
        executions.set(event.toolCallId, event);
        break;
      case 'turn_end':
        turnOpen = false;
        assistant = undefined;
        break;
      case 'agent_end':
        ended = event.messages;
        break;
      default:
        break;
    }
  }

  /** The run's emit. After a crash, events that JS code still produces (a JS stream's
   * updates, read on behalf of the dead run) are dropped. */
  function watched(event) {
    if (closing) return undefined;
    record(event);
    last = emit(event);
    return last;
  }

  async function send(event) {
    record(event);
    await emit(event);
  }

  /** Every tool call of the turn's assistant message without a result gets one (L-124's
   * rule: no call without a result), in call order, as pi emits them. */
  async function closeTools(text) {
    const stop = assistant.stopReason;
    if (stop === 'error' || stop === 'aborted' || !Array.isArray(assistant.content)) return;
    const done = new Set(results.map((r) => r.toolCallId));
    for (const call of assistant.content) {
      if (call?.type !== 'toolCall' || done.has(call.id)) continue;
      let end = executions.get(call.id);
      if (end === undefined) {
        if (!executions.has(call.id)) {
          await send({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, args: call.arguments });
        }
        end = { type: 'tool_execution_end', toolCallId: call.id, toolName: call.name, result: errorResult(text), isError: true };
        await send(end);
      }
      const message = {
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: end.result?.content ?? [],
        details: end.result?.details,
        ...(end.result?.usage === undefined ? {} : { usage: end.result.usage }),
        isError: end.isError,
        ...(end.durationMs === undefined ? {} : { durationMs: end.durationMs }),
        timestamp: Date.now(),
      };
      await send({ type: 'message_start', message });
      await send({ type: 'message_end', message });
    }
  }

  async function close(text, config) {
    closing = true;
    // A listener that was running finishes first; if it threw, the run fails with that, as
    // it would have without the crash (L-82).
    await last;
    if (ended) return ended;
    const model = read(config, 'model');
    const thinkingLevel = read(config, 'reasoning') ?? 'off';
    if (!agentStarted) await send({ type: 'agent_start' });
    if (!turnOpen) await send({ type: 'turn_start' });
    let failure;
    if (open?.role === 'assistant') {
      // The response being streamed ends as an error, with what it had (L-123's shape).
      failure = { ...open, stopReason: 'error', errorMessage: text, thinkingLevel };
    } else {
      if (open) await send({ type: 'message_end', message: open });
      if (assistant) {
        await closeTools(text);
        await send({ type: 'turn_end', message: assistant, toolResults: results.slice() });
        await send({ type: 'turn_start' });
      }
      failure = { ...emptyAssistantMessage(model), stopReason: 'error', errorMessage: text, thinkingLevel };
      await send({ type: 'message_start', message: { ...failure } });
    }
    await send({ type: 'message_end', message: failure });
    await send({ type: 'turn_end', message: failure, toolResults: [] });
    await send({ type: 'agent_end', messages });
    return messages;
  }

  return { emit: watched, close };
}

/** The outcome of a `runToolCall` the engine crashed under: an error result, as for a tool
 * that threw (L-38). */
export function crashedToolCall(toolCall, text) {
  return { toolCall, result: errorResult(text), isError: true };
}

/**
 * Watches the events a built-in response pushes (`streamSimple`). `close(text)` ends it after
 * a crash with an `error` event whose message keeps what was streamed, unless it ended.
 */
export function watchResponse(push, model) {
  let partial;
  let ended = false;
  let closing = false;
  return {
    push(event) {
      if (closing) return undefined;
      if (event.partial !== undefined) partial = event.partial;
      if (event.type === 'done' || event.type === 'error') ended = true;
      return push(event);
    },
    close(text) {
      closing = true;
      if (ended) return;
      const message = { ...(partial ?? emptyAssistantMessage(model)), stopReason: 'error', errorMessage: text };
      push({ type: 'error', reason: 'error', error: message });
    },
  };
}
