// A local OpenAI Chat Completions–compatible streaming server on 127.0.0.1 for tests: it
// answers each request from a script, as SSE in irregular chunks, and records the bodies.
import { createServer } from 'node:http';

/** `respond(body, index)` returns the chunks (objects) of one streamed answer. With
 * `{ api: 'google' }` it speaks Gemini's streamGenerateContent instead (no `[DONE]`); with
 * `'responses'` or `'anthropic'` each chunk is an event named by its `type`. */
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
      const named = api === 'responses' || api === 'anthropic';
      const done = api === 'openai' ? 'data: [DONE]\n\n' : '';
      const text = chunks.map((c) => `${named ? `event: ${c.type}\n` : ''}data: ${JSON.stringify(c)}\n\n`).join('') + done;
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
  const path = { google: '/v1beta', anthropic: '/anthropic' }[api] ?? '/v1';
  return { baseUrl: `http://127.0.0.1:${port}${path}`, requests, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
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

const responsesUsage = { input_tokens: 11, output_tokens: 7, total_tokens: 18 };
const response = (status, output = []) => ({ id: 'resp_1', object: 'response', status, model: 'local-model', output, ...(status === 'completed' ? { usage: responsesUsage } : {}) });

/** OpenAI Responses events of a streamed text answer. */
export function responsesTextChunks(text) {
  const pieces = text.match(/.{1,5}/gsu) ?? [];
  const done = { id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
  return [
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: { ...done, status: 'in_progress', content: [] } },
    ...pieces.map((delta) => ({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta })),
    { type: 'response.output_item.done', output_index: 0, item: done },
    { type: 'response.completed', response: response('completed', [done]) },
  ];
}

/** OpenAI Responses events of one function call with its arguments in fragments. */
export function responsesToolCallChunks(id, name, args) {
  const json = JSON.stringify(args);
  const done = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: id, name, arguments: json };
  return [
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: { ...done, status: 'in_progress', arguments: '' } },
    ...(json.match(/.{1,4}/gsu) ?? []).map((delta) => ({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta })),
    { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 0, arguments: json },
    { type: 'response.output_item.done', output_index: 0, item: done },
    { type: 'response.completed', response: response('completed', [done]) },
  ];
}

const messageStart = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'local-model', content: [], usage: { input_tokens: 11, output_tokens: 1 } } };
const messageEnd = (reason) => [
  { type: 'message_delta', delta: { stop_reason: reason }, usage: { output_tokens: 7 } },
  { type: 'message_stop' },
];

/** Anthropic Messages events of a streamed text answer. */
export function anthropicTextChunks(text) {
  return [
    messageStart,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...(text.match(/.{1,5}/gsu) ?? []).map((t) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })),
    { type: 'content_block_stop', index: 0 },
    ...messageEnd('end_turn'),
  ];
}

/** Anthropic Messages events of one tool_use block with its input in fragments. */
export function anthropicToolCallChunks(id, name, args) {
  return [
    messageStart,
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name, input: {} } },
    ...(JSON.stringify(args).match(/.{1,4}/gsu) ?? []).map((p) => ({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: p } })),
    { type: 'content_block_stop', index: 0 },
    ...messageEnd('tool_use'),
  ];
}

/** Per API: the server dialect and the chunk helpers of the tool scenario. */
export const SCENARIO_SERVERS = {
  'openai-completions': { server: 'openai', textChunks, toolCallChunks },
  'openai-responses': { server: 'responses', textChunks: responsesTextChunks, toolCallChunks: responsesToolCallChunks },
  'anthropic-messages': { server: 'anthropic', textChunks: anthropicTextChunks, toolCallChunks: anthropicToolCallChunks },
  'google-generative-ai': { server: 'google', textChunks: geminiTextChunks, toolCallChunks: geminiToolCallChunks },
};

/** A server that plays the tool scenario of agent-scenario.mjs in `api`'s dialect. */
export async function startScenarioServer(api) {
  const { scenarioAnswer } = await import('./agent-scenario.mjs');
  const { server, textChunks: text, toolCallChunks: call } = SCENARIO_SERVERS[api];
  return startOpenAIServer((body) => scenarioAnswer(body, { textChunks: text, toolCallChunks: call, api }), { api: server });
}
