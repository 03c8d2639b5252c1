// Servers for the streamProxy tests, all on 127.0.0.1:
// - a scripted OpenAI-compatible LLM (openai-server.mjs) whose answer is chosen by a
//   `scenario:<name>` marker in the first user message;
// - a realistic proxy speaking pi's wire format: it checks the bearer token, runs pi-ai
//   1.6.0's own streamSimple against the LLM with a key only it holds, and forwards each
//   event with `partial` stripped, in irregular chunks (or, `whole`, as one write);
// - a raw server whose handler writes whatever a hostile test needs.
// Every server records each request's method, URL, headers and raw body.
import { createServer } from 'node:http';
import { streamSimple } from '@earendil-works/pi-ai/compat';
import { startOpenAIServer } from './openai-server.mjs';

export const PROXY_TOKEN = 'proxy-secret-7f3a9c';
export const LLM_KEY = 'llm-key-held-by-the-server';

const base = { id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 1, model: 'local-model' };
const chunk = (delta, finish = null, usage) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) });
const pieces = (text, size) => text.match(new RegExp(`.{1,${size}}`, 'gsu')) ?? [];

/** The chunks of one scripted answer: optional thinking (reasoning_content), text, and tool
 * calls whose arguments stream in fragments, interleaved across calls. */
export function answerChunks({ thinking, text, calls = [], finish, usage = { prompt_tokens: 21, completion_tokens: 9, total_tokens: 30 } }) {
  const out = [chunk({ role: 'assistant', content: '' })];
  for (const p of pieces(thinking ?? '', 6)) out.push(chunk({ reasoning_content: p }));
  for (const p of pieces(text ?? '', 5)) out.push(chunk({ content: p }));
  calls.forEach((call, index) => out.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })));
  const fragments = calls.map((call) => pieces(JSON.stringify(call.args), 3 + (call.id.length % 4)));
  for (let round = 0; fragments.some((f) => round < f.length); round++) {
    fragments.forEach((f, index) => {
      if (round < f.length) out.push(chunk({ tool_calls: [{ index, function: { arguments: f[round] } }] }));
    });
  }
  out.push(chunk({}, finish ?? (calls.length > 0 ? 'tool_calls' : 'stop'), usage));
  return out;
}

/** What the scripted LLM says, by scenario. `tools` answers a tool result with text. */
export const SCENARIOS = {
  text: () => answerChunks({ text: 'Hello from behind the proxy — grüße, 你好, 😀!' }),
  thinking: () => answerChunks({ thinking: 'Let me think about 17*23 step by step… 😀', text: 'It is 391.' }),
  calls: () => answerChunks({
    thinking: 'Three lookups at once.',
    text: 'Checking.',
    calls: [
      { id: 'call_a', name: 'lookup', args: { city: 'Zürich', days: 3, units: ['metric', 'kelvin'] } },
      { id: 'call_bb', name: 'lookup', args: { city: '東京', nested: { deep: [1, { x: 'y"z\\' }] } } },
      { id: 'call_ccc', name: 'calc', args: { expression: '17*23', note: 'emoji 😀 and "quotes"' } },
    ],
  }),
  length: () => answerChunks({ text: 'This answer is cut off by the token lim', finish: 'length' }),
  tools: (body) => {
    const results = body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    if (results.length > 0) return answerChunks({ text: `Results: ${results.join(' | ')} — fertig ✓` });
    return answerChunks({
      thinking: 'I need the calculator twice.',
      calls: [
        { id: 'call_1', name: 'calc', args: { a: 17, b: 23 } },
        { id: 'call_2', name: 'calc', args: { a: 6, b: 7 } },
      ],
    });
  },
};

function scenarioOf(body) {
  const first = body.messages.find((m) => m.role === 'user');
  const text = typeof first?.content === 'string' ? first.content : first?.content?.map((b) => b.text ?? '').join('');
  return /scenario:(\w+)/.exec(text ?? '')?.[1] ?? 'text';
}

export async function startLlmServer() {
  return startOpenAIServer((body) => SCENARIOS[scenarioOf(body)](body));
}

/** pi-ai's event without `partial`: the proxy wire format of pi-agent-core's proxy.d.ts. */
export function toProxyEvent(event) {
  const { type } = event;
  const block = event.partial?.content?.[event.contentIndex];
  switch (type) {
    case 'start':
      return { type };
    case 'text_start': case 'thinking_start':
      return { type, contentIndex: event.contentIndex };
    case 'text_delta': case 'thinking_delta': case 'toolcall_delta':
      return { type, contentIndex: event.contentIndex, delta: event.delta };
    case 'text_end':
      return { type, contentIndex: event.contentIndex, contentSignature: block.textSignature };
    case 'thinking_end':
      return { type, contentIndex: event.contentIndex, contentSignature: block.thinkingSignature };
    case 'toolcall_start':
      return { type, contentIndex: event.contentIndex, id: block.id, toolName: block.name };
    case 'toolcall_end':
      return { type, contentIndex: event.contentIndex, toolCall: event.toolCall };
    case 'done':
      return { type, reason: event.reason, usage: event.message.usage, ...(event.message.providerThinkingLevel !== undefined ? { providerThinkingLevel: event.message.providerThinkingLevel } : {}) };
    case 'error':
      return { type, reason: event.reason, errorMessage: event.error.errorMessage, usage: event.error.usage };
    default:
      return undefined;
  }
}

/** Irregular chunk sizes (3..40 bytes), the same sequence every time. */
function* sizes() {
  for (let step = 11; ; step = (step * 7) % 37 + 3) yield step;
}
const tick = () => new Promise((r) => setImmediate(r));

function record(req, requests) {
  return new Promise((resolve) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      const entry = { method: req.method, url: req.url, headers: { ...req.headers }, body: Buffer.concat(parts).toString('utf8') };
      requests.push(entry);
      resolve(entry);
    });
  });
}

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
}

/**
 * The realistic proxy. `whole: true` sends each response in one write (so the client reads
 * it in one chunk); otherwise events go out as the LLM streams them, cut at irregular byte
 * offsets (inside lines and UTF-8 characters). `stallAfter: n` sends n events, then holds the
 * response open until the client goes away. `upstream` overrides the LLM base URL; the
 * route is `${basePath}/api/stream`.
 */
export async function startProxyServer({ llmBaseUrl, whole = false, stallAfter, upstream, basePath = '' } = {}) {
  const requests = [];
  const closed = [];
  const server = createServer(async (req, res) => {
    const entry = await record(req, requests);
    if (req.method !== 'POST' || req.url !== `${basePath}/api/stream`) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `No route ${req.method} ${req.url}` }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${PROXY_TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    const { model, context, options } = JSON.parse(entry.body);
    const controller = new AbortController();
    res.on('close', () => {
      closed.push(requests.indexOf(entry));
      controller.abort();
    });
    const events = streamSimple({ ...model, baseUrl: upstream ?? llmBaseUrl }, context, { ...options, apiKey: LLM_KEY, signal: controller.signal });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const step = sizes();
    let pending = Buffer.alloc(0);
    let size = step.next().value;
    let sent = 0;
    for await (const event of events) {
      const wire = toProxyEvent(event);
      if (wire === undefined) continue;
      pending = Buffer.concat([pending, Buffer.from(`data: ${JSON.stringify(wire)}\n\n`)]);
      sent += 1;
      if (stallAfter !== undefined && sent === stallAfter) {
        res.write(pending);
        return; // held open: the client has to abort
      }
      if (whole) continue;
      while (pending.length >= size && !res.destroyed) {
        res.write(pending.subarray(0, size));
        pending = pending.subarray(size);
        size = step.next().value;
        await tick();
      }
    }
    if (!res.destroyed) res.end(pending);
  });
  return { ...(await listen(server)), requests, closed };
}

/** A server whose `handler(req, res, entry)` scripts the response. */
export async function startRawServer(handler) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const entry = await record(req, requests);
    await handler(req, res, entry);
  });
  return { ...(await listen(server)), requests };
}

/** Writes `bytes` in the given chunk sizes (cycled), one per macrotask. */
export async function writeInChunks(res, bytes, chunkSizes = [7]) {
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const n = chunkSizes[k % chunkSizes.length];
    res.write(bytes.subarray(i, i + n));
    i += n;
    await tick();
  }
}

/** The wire form of proxy events: one `data:` line each, blank line after. */
export const sse = (events, eol = '\n') => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}${eol}${eol}`).join('');
