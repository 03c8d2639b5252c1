// Empty pieces of pi-ai's data model, one home for the JS side (the Agent's failure
// message, streamProxy's first partial, a response whose module could not load).

/** A usage with every count and cost at zero. */
export function emptyUsage() {
  return {
    input: 0,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** pi's initial assistant message for `model` (L-162): no content, zero usage, `pending`.
 * A model whose fields cannot be read (a throwing getter, a Proxy) leaves them unset. */
export function emptyAssistantMessage(model) {
  const field = (key) => {
    try {
      return model?.[key];
    } catch {
      return undefined;
    }
  };
  return {
    role: 'assistant',
    stopReason: 'pending',
    content: [],
    api: field('api'),
    provider: field('provider'),
    model: field('id'),
    usage: emptyUsage(),
    timestamp: Date.now(),
  };
}
