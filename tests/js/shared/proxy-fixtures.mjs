// Shared fixtures of the streamProxy tests: the model, contexts and tools, proxy events,
// and running both implementations (this package's and pi-agent-core's) against a raw
// server.
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, startRawServer, writeInChunks } from './proxy-server.mjs';
import { runProxy } from './proxy-run.mjs';
import { USAGE } from './proxy-fuzz.mjs';

export const model = {
  id: 'local-model', name: 'Local', api: 'openai-completions', provider: 'local', baseUrl: 'http://llm.invalid/v1',
  reasoning: true, input: ['text'], cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32000, maxTokens: 4096,
};
const lookup = {
  name: 'lookup', label: 'Lookup', description: 'Looks a city up',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
/** A context whose first user message picks the scripted LLM's answer (proxy-server.mjs). */
export const context = (scenario) => ({
  systemPrompt: 'Be terse.',
  messages: [{ role: 'user', content: `scenario:${scenario} go`, timestamp: 1 }],
  tools: [lookup],
});
export const calc = {
  name: 'calc', label: 'Calculator', description: 'Multiplies a*b',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => ({ content: [{ type: 'text', text: String(a * b) }], details: { a, b } }),
};

/** Proxy events (pi's wire format). */
export const ev = {
  start: { type: 'start' },
  textStart: { type: 'text_start', contentIndex: 0 },
  delta: (delta, contentIndex = 0) => ({ type: 'text_delta', contentIndex, delta }),
  textEnd: { type: 'text_end', contentIndex: 0 },
  done: { type: 'done', reason: 'stop', usage: USAGE },
};
export const HELLO = [ev.start, ev.textStart, ev.delta('Hello'), ev.delta(', wörld 😀'), ev.textEnd, ev.done];

/** Both implementations against a raw server scripted by `handler`; `extra` adds options. */
export async function bothRaw(handler, extra = {}) {
  const server = await startRawServer(handler);
  try {
    const o = await runProxy(ours.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN, ...extra });
    const p = await runProxy(pi.streamProxy, model, context('text'), { proxyUrl: server.url, authToken: PROXY_TOKEN, ...extra });
    return { o, p, server };
  } finally {
    await server.close();
  }
}

/** A handler that streams `text` as a 200 in writes of `sizes` bytes (cycled). */
export const streamed = (text, { sizes = [7], type = 'text/event-stream', end = true } = {}) => async (req, res) => {
  res.writeHead(200, { 'content-type': type });
  await writeInChunks(res, Buffer.from(text), sizes);
  if (end) res.end();
};
/** A handler that answers `status` with one body. */
export const answer = (status, type, body) => (req, res) => {
  res.writeHead(status, { 'content-type': type }).end(body);
};
