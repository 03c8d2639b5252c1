// The measured part of benchmark (C), shared by Node (bench/provider.mjs) and Chromium
// (bench/provider-browser.mjs): one full agent run per sample against the bench server's
// Chat Completions endpoint, this package and pi alternating, medians reported.

const sink = {
  name: 'sink', label: 'sink', description: 'takes text',
  parameters: { type: 'object', properties: { text: { type: 'string' } } },
  execute: async (_id, a) => ({ content: [{ type: 'text', text: String(a.text.length) }], details: {} }),
};

function benchModel(baseUrl) {
  return {
    id: 'bench-model', name: 'bench', api: 'openai-completions', provider: 'bench', baseUrl, reasoning: false,
    input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e9, maxTokens: 1e9,
    compat: { supportsStore: false, supportsDeveloperRole: false },
  };
}

/** One run of `impl` ({ runAgentLoop, streamSimple }): its time and update count. */
export async function once(impl, baseUrl) {
  let updates = 0;
  const t0 = performance.now();
  const messages = await impl.runAgentLoop(
    [{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [sink] },
    { model: benchModel(baseUrl), apiKey: 'bench', convertToLlm: (m) => m },
    (e) => { if (e.type === 'message_update') updates += 1; }, undefined, impl.streamSimple,
  );
  const ms = performance.now() - t0;
  const last = messages.at(-1);
  if (last.stopReason !== 'stop' || !messages.some((m) => m.role === 'toolResult')) {
    const shape = messages.map((m) => `${m.role}:${m.stopReason ?? ''}:${m.errorMessage ?? JSON.stringify(m.content).slice(0, 120)}`);
    throw new Error(`run did not finish: ${shape.join(' | ')}`);
  }
  return { ms, updates };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Warms both up, then `rounds` alternating runs each; medians in ms and the ratio. */
export async function compare(impls, baseUrl, rounds = 5) {
  await once(impls.ours, baseUrl);
  await once(impls.pi, baseUrl);
  const results = { ours: [], pi: [] };
  for (let i = 0; i < rounds; i++) {
    for (const name of i % 2 ? ['pi', 'ours'] : ['ours', 'pi']) results[name].push(await once(impls[name], baseUrl));
  }
  const ours = median(results.ours.map((r) => r.ms));
  const pi = median(results.pi.map((r) => r.ms));
  return { ours, pi, ratio: pi / ours, updates: results.ours[0].updates };
}
