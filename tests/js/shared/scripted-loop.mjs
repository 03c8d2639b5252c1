// What the side-by-side loop tests (ours and pi's) script with: an assistant message, and a
// stream function answering with given final messages in turn.

export const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** An assistant message with `content`, stamped `timestamp` (now, unless given). */
export const assistant = (content, stopReason = 'stop', timestamp = Date.now()) => ({ role: 'assistant', content, api: 'a', provider: 'p', model: 'm', usage, stopReason, timestamp });

/** A stream function of `impl` (ours or pi's) answering with `finals` in turn, then "done". */
export function scriptedStream(impl, finals, final = () => assistant([{ type: 'text', text: 'done' }])) {
  let i = 0;
  return () => {
    const s = impl.createAssistantMessageEventStream();
    const message = finals[i++] ?? final();
    queueMicrotask(() => s.push({ type: 'done', reason: message.stopReason, message }));
    return s;
  };
}

/** A stream made by `make` (ours or pi's `createAssistantMessageEventStream`) that answers at
 * once with `start` and `done` for an assistant message of `content`. */
export function answer(make, content, stopReason) {
  const s = make();
  const message = assistant(content, stopReason, 1);
  s.push({ type: 'start', partial: message });
  s.push({ type: 'done', reason: stopReason, message });
  return s;
}
