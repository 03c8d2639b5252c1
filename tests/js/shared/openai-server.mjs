// A local OpenAI Chat Completions–compatible streaming server on 127.0.0.1 for tests: it
// answers each request from a script, as SSE in irregular chunks, and records the bodies.
import { createServer } from 'node:http';

/** `respond(body, index)` returns the chunks (objects) of one streamed answer. With
 * `{ api: 'google' }` it speaks Gemini's streamGenerateContent instead (no `[DONE]`). */
export async function startOpenAIServer(respond, { api = 'openai' } = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', async () => {
      const body = JSON.parse(raw || '{}');
      requests.push({ url: req.url, headers: req.headers, body });
      const chunks = respond(body, requests.length - 1);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const done = api === 'google' ? '' : 'data: [DONE]\n\n';
      const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + done;
      // Irregular chunk boundaries, split inside lines and multi-byte characters.
      const bytes = Buffer.from(text);
      for (let i = 0, step = 7; i < bytes.length; i += step, step = (step * 5) % 23 + 3) {
        res.write(bytes.subarray(i, i + step));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const path = api === 'google' ? '/v1beta' : '/v1';
  return { baseUrl: `http://127.0.0.1:${port}${path}`, requests, close: () => new Promise((r) => server.close(r)) };
}

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'local-model' };

/** Chunks of a streamed text answer. */
export function textChunks(text) {
  const pieces = text.match(/.{1,5}/gsu) ?? [];
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } },
  ];
}

/** Chunks of one streamed tool call with its arguments in fragments. */
export function toolCallChunks(id, name, args) {
  const json = JSON.stringify(args);
  const parts = json.match(/.{1,4}/gsu) ?? [];
  return [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }, finish_reason: null }] },
    ...parts.map((p) => ({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: p } }] }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 } },
  ];
}

const usageMetadata = { promptTokenCount: 11, candidatesTokenCount: 7, totalTokenCount: 18 };

/** Gemini chunks of a streamed text answer. */
export function geminiTextChunks(text) {
  const pieces = text.match(/.{1,5}/gsu) ?? [];
  const chunk = (parts, extra = {}) => ({ candidates: [{ index: 0, content: { role: 'model', parts }, ...extra }], responseId: 'g-1' });
  return [...pieces.map((p) => chunk([{ text: p }])), chunk([{ text: '' }], { finishReason: 'STOP' })].map((c, i, all) => (i === all.length - 1 ? { ...c, usageMetadata } : c));
}

/** Gemini chunks of one function call (Gemini sends a call whole). */
export function geminiToolCallChunks(_id, name, args) {
  return [{ candidates: [{ index: 0, content: { role: 'model', parts: [{ functionCall: { name, args } }] }, finishReason: 'STOP' }], usageMetadata, responseId: 'g-2' }];
}
