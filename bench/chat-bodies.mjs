// The response bodies of benchmark (C): a Chat Completions tool call whose arguments stream
// in n chunks, and an n-chunk text answer. Shared by the Node and Chromium runs.
const head = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench-model' };
const line = (choice, extra = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;

export function toolBody(n) {
  let s = line({ delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'sink', arguments: '{"text": "' } }] }, finish_reason: null });
  const piece = line({ delta: { tool_calls: [{ index: 0, function: { arguments: 'lorem ipsum ' } }] }, finish_reason: null });
  s += piece.repeat(n);
  s += line({ delta: { tool_calls: [{ index: 0, function: { arguments: '"}' } }] }, finish_reason: null });
  s += line({ delta: {}, finish_reason: 'tool_calls' }, { usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: n + 10 } });
  return Buffer.from(s + 'data: [DONE]\n\n');
}
export function textBody(n) {
  let s = line({ delta: { role: 'assistant', content: '' }, finish_reason: null });
  s += line({ delta: { content: 'word ' }, finish_reason: null }).repeat(n);
  s += line({ delta: {}, finish_reason: 'stop' }, { usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: n + 10 } });
  return Buffer.from(s + 'data: [DONE]\n\n');
}


/** A local server answering Chat Completions requests with the two bodies (the text one
 * once the last message is a tool result). `files` maps other paths to [type, bytes] for
 * the Chromium page. */
export async function startBenchServer(chunks, files = {}) {
  const { createServer } = await import('node:http');
  const bodies = [toolBody(chunks / 2), textBody(chunks / 2)];
  const server = createServer((req, res) => {
    const file = files[new URL(req.url, 'http://x').pathname];
    if (file) {
      res.writeHead(200, { 'content-type': file[0] });
      res.end(file[1]);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(404);
      res.end();
      return;
    }
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const last = JSON.parse(raw).messages.at(-1);
      const body = last.role === 'tool' ? bodies[1] : bodies[0];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < body.length; i += 65536) res.write(body.subarray(i, i + 65536));
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    baseUrl: `${origin}/v1`,
    totalBytes: bodies[0].length + bodies[1].length,
    close: () => new Promise((r) => server.close(r)),
  };
}
