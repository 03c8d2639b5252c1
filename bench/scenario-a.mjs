// Scenario (A) of bench/loop.mjs, shared with bench/cassette.mjs (recording's cost): 20 turns
// × 500 text deltas, 4 parallel trivial tools on most turns, time per delivered event.
export const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
export const model = { id: 'bench', api: 'bench', provider: 'bench' };
export const base = { role: 'assistant', api: 'bench', provider: 'bench', model: 'bench', usage };

/** A response with `deltas` text deltas and, unless last, `tools` tool calls; the live
 * partial is mutated in place as pi-ai's providers do. */
export function textResponse(makeStream, deltas, toolCalls) {
  const s = makeStream();
  const partial = { ...base, content: [], stopReason: 'pending', timestamp: Date.now() };
  s.push({ type: 'start', partial });
  partial.content.push({ type: 'text', text: '' });
  s.push({ type: 'text_start', contentIndex: 0, partial });
  for (let i = 0; i < deltas; i++) {
    partial.content[0].text += 'token ';
    s.push({ type: 'text_delta', contentIndex: 0, delta: 'token ', partial });
  }
  s.push({ type: 'text_end', contentIndex: 0, content: partial.content[0].text, partial });
  for (let c = 0; c < toolCalls; c++) {
    const call = { type: 'toolCall', id: `t${c}`, name: 'noop', arguments: { i: c } };
    partial.content.push(call);
    s.push({ type: 'toolcall_start', contentIndex: c + 1, partial });
    s.push({ type: 'toolcall_end', contentIndex: c + 1, toolCall: call, partial });
  }
  partial.stopReason = toolCalls > 0 ? 'toolUse' : 'stop';
  s.push({ type: 'done', reason: partial.stopReason, message: partial });
  return s;
}

export const noop = { name: 'noop', label: 'noop', description: 'noop', parameters: { type: 'object' }, execute: async () => ({ content: [], details: {} }) };

export async function scenarioA(impl, extra = {}) {
  let turn = 0;
  let events = 0;
  const streamFn = () => {
    turn += 1;
    return textResponse(impl.stream, 500, turn < 20 ? 4 : 0);
  };
  const config = { model, convertToLlm: (m) => m, ...extra };
  const t0 = performance.now();
  await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [noop] }, config, async () => { events += 1; }, undefined, streamFn);
  return { ms: performance.now() - t0, events };
}

