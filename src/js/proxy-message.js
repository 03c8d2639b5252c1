// The partial assistant message of streamProxy, rebuilt from the server's events (pi's
// events without `partial`, spec L-162): each event edits the partial as pi-agent-core's
// proxy does and comes back as the full event to push. Depends on streaming-json.js only.
//
// pi's texts are kept for the violations pi reports. Beyond pi, an event that would corrupt
// the message is refused instead: a start past the end of `content` (holes), a delta that
// is not a string ("undefined" appended), a `toolcall_end` without a started call or
// without its `toolCall` (pi drops the call), a `done` with an unknown reason.
import { ToolArguments } from './streaming-json.js';
import { emptyAssistantMessage } from './messages.js';

const DONE_REASONS = new Set(['stop', 'length', 'toolUse']);

/** A failure whose message is ready for the final error event. */
export class ProxyFailure extends Error {}

export class ProxyMessage {
  /** Argument readers of the tool calls still streaming, by content index. */
  #toolArguments = new Map();

  /** `redact` cleans a server-sent error message of the token. */
  constructor(model, redact) {
    this.partial = emptyAssistantMessage(model);
    this.redact = redact;
  }

  /** Applies one proxy event; returns the event to push (with `partial`), or undefined for
   * an event to skip. Throws a ProxyFailure for an event that breaks the protocol. */
  apply(event) {
    if (event === null || typeof event !== 'object' || Array.isArray(event)) throw new ProxyFailure('Proxy event is not an object');
    const partial = this.partial;
    const content = partial.content;
    const { type } = event;
    switch (type) {
      case 'start':
        return { type, partial };
      case 'text_start':
      case 'thinking_start':
      case 'toolcall_start': {
        const index = event.contentIndex;
        // A start past the end would leave holes in `content` (pi allows it).
        if (!Number.isInteger(index) || index < 0 || index > content.length) {
          throw new ProxyFailure(`Received ${type} for content index ${JSON.stringify(index)}, but the message has ${content.length} blocks`);
        }
        if (type === 'text_start') content[index] = { type: 'text', text: '' };
        else if (type === 'thinking_start') content[index] = { type: 'thinking', thinking: '' };
        else {
          content[index] = { type: 'toolCall', id: event.id, name: event.toolName, arguments: {} };
          this.#toolArguments.set(index, new ToolArguments());
        }
        return { type, contentIndex: index, partial };
      }
      case 'text_delta':
      case 'thinking_delta': {
        const index = event.contentIndex;
        const field = type === 'text_delta' ? 'text' : 'thinking';
        const block = this.#block(event, field, type);
        if (typeof event.delta !== 'string') throw new ProxyFailure(`Received ${type} without a string delta`);
        block[field] += event.delta;
        return { type, contentIndex: index, delta: event.delta, partial };
      }
      case 'text_end':
      case 'thinking_end': {
        const field = type === 'text_end' ? 'text' : 'thinking';
        const block = this.#block(event, field, type);
        block[type === 'text_end' ? 'textSignature' : 'thinkingSignature'] = event.contentSignature;
        return { type, contentIndex: event.contentIndex, content: block[field], partial };
      }
      case 'toolcall_delta': {
        const index = event.contentIndex;
        const block = this.#block(event, 'toolCall', type);
        const args = this.#toolArguments.get(index);
        if (args === undefined) throw new ProxyFailure('Received toolcall_delta for non-toolCall content');
        if (typeof event.delta !== 'string') throw new ProxyFailure(`Received ${type} without a string delta`);
        // A new block object per delta, as pi does, so reactive consumers see the change.
        content[index] = { ...block, arguments: args.append(event.delta) };
        return { type, contentIndex: index, delta: event.delta, partial };
      }
      case 'toolcall_end': {
        const index = event.contentIndex;
        // pi silently drops an end for a call that never started, and with it the call.
        const block = this.#block(event, 'toolCall', type);
        const call = event.toolCall;
        if (call === null || typeof call !== 'object' || Array.isArray(call)) throw new ProxyFailure('Received toolcall_end without a toolCall');
        Object.assign(block, call);
        this.#toolArguments.delete(index);
        return { type, contentIndex: index, toolCall: block, partial };
      }
      case 'done': {
        const { reason } = event;
        if (!DONE_REASONS.has(reason)) throw new ProxyFailure(`Received done with invalid reason ${JSON.stringify(reason)}`);
        partial.stopReason = reason;
        this.#setEndFields(event);
        return { type, reason, message: partial };
      }
      case 'error': {
        const reason = event.reason === 'aborted' ? 'aborted' : 'error';
        partial.stopReason = reason;
        partial.errorMessage = typeof event.errorMessage === 'string' && event.errorMessage !== ''
          ? this.redact(event.errorMessage)
          : 'The proxy server reported an error without a message';
        this.#setEndFields(event);
        return { type, reason, error: partial };
      }
      default:
        // Unknown event types are skipped (pi logs them).
        return undefined;
    }
  }

  /** The block an update names, checked to be of `kind` (pi's error text otherwise). */
  #block(event, kind, type) {
    const block = Number.isInteger(event.contentIndex) ? this.partial.content[event.contentIndex] : undefined;
    if (block === undefined || block === null || block.type !== kind) {
      throw new ProxyFailure(`Received ${type} for non-${kind} content`);
    }
    return block;
  }

  /** `usage` (kept at zeros when the server sent none: pi sets it to undefined) and
   * `providerThinkingLevel` of a terminal event. */
  #setEndFields(event) {
    const { usage } = event;
    if (usage !== null && typeof usage === 'object' && !Array.isArray(usage)) this.partial.usage = usage;
    if (event.providerThinkingLevel !== undefined) this.partial.providerThinkingLevel = event.providerThinkingLevel;
  }
}
