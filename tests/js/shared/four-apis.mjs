// The four APIs of the built-in stream side by side, for tests that put each through the
// same server faults: a pi-ai model per API (its base URL pointed at a local server), the
// wire form of a short streamed answer in that API's dialect, the header its key travels
// in, and a raw server on 127.0.0.1 whose handler scripts each response.
import { createServer } from 'node:http';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';
import { getModel } from '@earendil-works/pi-ai/compat';
import { SCENARIO_SERVERS } from './openai-server.mjs';

/** Per API: the pi-ai model, the path its base URL ends in, and the dialect's framing. */
export const APIS = {
  'openai-completions': { model: () => ({ ...getModel('openai', 'gpt-4o-mini'), api: 'openai-completions' }), path: '/v1', named: false, done: 'data: [DONE]\n\n' },
  'openai-responses': { model: () => getModel('openai', 'gpt-5-mini'), path: '/v1', named: true, done: '' },
  'anthropic-messages': { model: () => getModel('anthropic', 'claude-sonnet-4-5'), path: '', named: true, done: '' },
  'google-generative-ai': { model: () => getModel('google', 'gemini-2.5-flash'), path: '/v1beta', named: false, done: '' },
};

/** The SSE body of a streamed text answer in `api`'s dialect. */
export function sseAnswer(api, text) {
  const { named, done } = APIS[api];
  const chunks = SCENARIO_SERVERS[api].textChunks(text);
  return chunks.map((c) => `${named ? `event: ${c.type}\n` : ''}data: ${JSON.stringify(c)}\n\n`).join('') + done;
}

/** The SSE of `api`'s answer up to (not including) its end: start events and some text. */
export function sseStart(api, text) {
  const { named } = APIS[api];
  const chunks = SCENARIO_SERVERS[api].textChunks(text);
  // Everything before the finishing chunks: the start and the text deltas.
  const keep = { 'openai-completions': -1, 'openai-responses': -2, 'anthropic-messages': -3, 'google-generative-ai': -1 }[api];
  return chunks.slice(0, keep).map((c) => `${named ? `event: ${c.type}\n` : ''}data: ${JSON.stringify(c)}\n\n`).join('');
}

/** The key as the server received it, whichever header the API sends it in. */
export function sentKey(req) {
  const auth = req.headers.authorization;
  return auth ? auth.replace(/^Bearer /, '') : req.headers['x-api-key'] ?? req.headers['x-goog-api-key'];
}

/**
 * A server whose `handler(req, res, n)` answers request n (from 0). `close()` destroys open
 * connections, so a test that left a response hanging still ends.
 */
export async function faultServer(handler) {
  const requests = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      requests.push({ url: req.url, headers: req.headers, body: Buffer.concat(parts).toString('utf8') });
      handler(req, res, requests.length - 1);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    requests,
    close: () => { for (const s of sockets) s.destroy(); return new Promise((r) => server.close(r)); },
  };
}

/** `api`'s model with its base URL on `origin` (plus `suffix`, e.g. a query). */
export function modelAt(api, origin, suffix = '') {
  return { ...APIS[api].model(), baseUrl: `${origin}${APIS[api].path}${suffix}` };
}

/**
 * One agent run of the built-in stream against `model`: its events, the messages it
 * resolved with and the final assistant message. `options` go into the loop config.
 */
export async function runLoop(model, key, options = {}, signal = undefined) {
  const events = [];
  const messages = await runAgentLoop(
    [{ role: 'user', content: 'go', timestamp: 1 }],
    { messages: [], tools: [] },
    { model, apiKey: key, convertToLlm: (m) => m, ...options },
    (e) => { events.push(e); },
    signal,
    streamSimple,
  );
  return { events, messages, last: messages.at(-1) };
}
