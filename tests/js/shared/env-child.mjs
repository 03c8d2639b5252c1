// One request in a child process whose environment the parent test controls, through this
// package ("ours": the built-in streamSimple, its loop) or through pi ("pi": pi-ai's compat
// streamSimple, pi-agent-core's loop). argv[2] is a JSON spec:
//   { impl, mode: 'stream' | 'loop', provider, modelId, baseUrl, options, hookKey }
// `options` are the stream options (mode 'stream') or the loop config's extra fields
// (mode 'loop'); `hookKey` makes the loop's getApiKey return it. Prints one JSON line: the
// final message's outcome and every event, serialised.
const spec = JSON.parse(process.argv[2]);

const { streamSimple, getModel, runAgentLoop } = spec.impl === 'ours'
  ? { ...(await import('pi-agent-wasm')), ...(await import('pi-agent-wasm/models')) }
  : { ...(await import('@earendil-works/pi-ai/compat')), runAgentLoop: (await import('@earendil-works/pi-agent-core')).runAgentLoop };

const model = { ...getModel(spec.provider, spec.modelId), baseUrl: spec.baseUrl };
const prompt = { role: 'user', content: 'hi', timestamp: 1 };
const events = [];
let final;
if (spec.mode === 'loop') {
  const config = { model, convertToLlm: (m) => m, ...spec.options };
  if (spec.hookKey !== undefined) config.getApiKey = () => spec.hookKey;
  const messages = await runAgentLoop([prompt], { messages: [], tools: [] }, config, (e) => { events.push(e); }, undefined, streamSimple);
  final = messages.at(-1);
} else {
  const stream = streamSimple(model, { messages: [prompt] }, spec.options);
  for await (const e of stream) events.push(e);
  final = await stream.result();
}
const text = final.content?.map((b) => b.text ?? '').join('');
process.stdout.write(JSON.stringify({
  stopReason: final.stopReason,
  errorMessage: final.errorMessage,
  text,
  events: JSON.stringify(events),
}));
