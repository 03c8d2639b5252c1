// pi-ai's `Context` shape in a direct `streamSimple` call (the fourth outside tester): its
// `systemPrompt` and `tools` are folded into a leading system message, as pi-ai's
// `normalizeContext` does, so the request carries the system prompt and the tools. Compared
// with pi-ai 1.6.0's streamSimple request by request, as JSON text, for all four APIs.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';

const bodies = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    bodies.push(body);
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"stop here"}}');
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
after(() => server.close());
const base = `http://127.0.0.1:${server.address().port}`;

const APIS = ['openai-completions', 'openai-responses', 'anthropic-messages', 'google-generative-ai'];
const tool = { name: 'read', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };

for (const api of APIS) {
  test(`streamSimple with pi-ai's Context { systemPrompt, messages, tools } sends what pi-ai sends: ${api}`, async () => {
    const model = { id: 'm', name: 'm', api, provider: 'p', baseUrl: api === 'google-generative-ai' ? `${base}/v1beta` : `${base}/v1`, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 10000, maxTokens: 100 };
    const context = { systemPrompt: 'Be brief.', messages: [{ role: 'user', content: 'hi', timestamp: 1 }], tools: [tool] };
    const sent = [];
    for (const fn of [streamSimple, piStreamSimple]) {
      bodies.length = 0;
      const result = await fn(model, context, { apiKey: 'k' }).result();
      assert.equal(result.stopReason, 'error');
      sent.push(bodies[0]);
    }
    assert.equal(sent[0], sent[1]);
    assert.match(sent[0], /Be brief\./);
    assert.match(sent[0], /Reads a file/);
    // The caller's context is not changed.
    assert.deepEqual(Object.keys(context), ['systemPrompt', 'messages', 'tools']);
    assert.equal(context.messages.length, 1);
  });
}
