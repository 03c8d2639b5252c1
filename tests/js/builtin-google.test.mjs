// The built-in google-generative-ai stream (Gemini streamGenerateContent?alt=sse) against a
// real HTTP server on 127.0.0.1, event for event against pi-ai 1.6.0's streamSimple on the
// same wire transcripts (tests/fixtures/google), with the request bodies compared too. Tool
// call ids Gemini leaves out are generated from the clock by both and compared by shape.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFileSync, readdirSync } from 'node:fs';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';

const FIXTURES = new URL('../fixtures/google/', import.meta.url);
const KEY = 'AIza-local-secret-0123456789';
const servers = [];
after(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

async function serve(bodies) {
  const requests = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', async () => {
      requests.push({ url: req.url, headers: req.headers, body: JSON.parse(raw) });
      const text = bodies[Math.min(requests.length - 1, bodies.length - 1)];
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const bytes = Buffer.from(text);
      for (let i = 0, step = 5; i < bytes.length; i += step, step = (step * 7) % 29 + 2) {
        res.write(bytes.subarray(i, i + step));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { baseUrl: `http://127.0.0.1:${server.address().port}/v1beta`, requests };
}

const tool = {
  name: 'read', label: 'Read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' }, mode: { const: 'text' } } },
  execute: async (_id, args) => ({ content: [{ type: 'text', text: `body of ${args.path}` }], details: {} }),
};
const GENERATED = /^[a-z_]*_\d{13}_\d+$/;
function normalize(v) {
  return JSON.parse(JSON.stringify(v, (k, x) => {
    if (k === 'timestamp' || k === 'durationMs') return 0;
    if (typeof x === 'string' && GENERATED.test(x)) return 'GENERATED-ID';
    return x;
  }));
}
const read = (f) => readFileSync(new URL(f, FIXTURES), 'utf8');

async function runWith(streamFn, fixture, extra = {}) {
  const server = await serve([read(fixture), read('text.sse')]);
  const model = { ...getModel('google', 'gemini-2.5-flash'), baseUrl: server.baseUrl };
  const events = [];
  const messages = await runAgentLoop(
    [{ role: 'user', content: 'go', timestamp: 1 }],
    { messages: [{ role: 'system', content: 'Be brief.', timestamp: 0 }], tools: [tool] },
    { model, apiKey: KEY, convertToLlm: (m) => m, ...extra },
    (e) => { events.push(e); }, undefined, streamFn,
  );
  return { events: normalize(events), messages: normalize(messages), requests: normalize(server.requests) };
}

const IMPROVED = new Set(['partial_args.sse']);
const MID_CHUNK_FAILURE = new Set(['unknown_reason.sse']);
for (const fixture of readdirSync(FIXTURES).filter((f) => f.endsWith('.sse') && !IMPROVED.has(f))) {
  test(`google: built-in stream = pi-ai streamSimple, events and requests: ${fixture}`, async () => {
    const ours = await runWith(streamSimple, fixture);
    const theirs = await runWith(piStreamSimple, fixture);
    if (MID_CHUNK_FAILURE.has(fixture)) {
      // pi-ai fails this chunk after a for-await exit that yields to the consumer, so its
      // event copies catch the partial half-updated; the events and messages must agree.
      const kinds = (events) => events.map((e) => e.assistantMessageEvent?.type ?? e.type);
      assert.deepEqual(kinds(ours.events), kinds(theirs.events));
      assert.deepEqual(ours.messages, theirs.messages);
    } else {
      assert.deepEqual(ours.events, theirs.events);
    }
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body));
    assert.deepEqual(ours.requests.map((r) => r.url), theirs.requests.map((r) => r.url));
    for (const r of ours.requests) assert.equal(r.headers['x-goog-api-key'], KEY);
    assert.ok(!JSON.stringify(ours.events).includes(KEY));
  });
}

test('google: request options match pi-ai (reasoning levels, maxTokens, temperature, toolChoice)', async () => {
  for (const extra of [{ reasoning: 'high', maxTokens: 100, temperature: 0.5 }, { reasoning: 'minimal' }, { toolChoice: 'any' }, { toolChoice: 'none', reasoning: 'off' }]) {
    const ours = await runWith(streamSimple, 'text.sse', extra);
    const theirs = await runWith(piStreamSimple, 'text.sse', extra);
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body), JSON.stringify(extra));
  }
});

test('google: a const schema becomes an enum in pi-ai\'s key order, byte for byte (const left out where it stood; an enum of null kept)', async () => {
  const shaped = {
    ...tool,
    parameters: {
      type: 'object',
      properties: {
        mode: { const: 'text', type: 'string', description: 'the mode', default: 'text' },
        kind: { const: 'a', enum: null, title: 'k' },
      },
    },
  };
  const withTool = async (streamFn) => {
    const server = await serve([read('text.sse')]);
    const model = { ...getModel('google', 'gemini-2.5-flash'), baseUrl: server.baseUrl };
    await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [shaped] },
      { model, apiKey: KEY, convertToLlm: (m) => m }, () => {}, undefined, streamFn);
    return JSON.stringify(server.requests[0].body.tools);
  };
  const ours = await withTool(streamSimple);
  assert.equal(ours, await withTool(piStreamSimple));
  assert.ok(ours.includes('"mode":{"type":"string","description":"the mode","default":"text","enum":["text"]}'), ours);
});

test('google: a function call streamed as partialArgs fragments is one call with all arguments (pi-ai makes one empty call per fragment)', async () => {
  const ours = await runWith(streamSimple, 'partial_args.sse');
  const theirs = await runWith(piStreamSimple, 'partial_args.sse');
  const callsOf = (messages) => messages.find((m) => m.role === 'assistant').content.filter((b) => b.type === 'toolCall');
  const ourCalls = callsOf(ours.messages);
  assert.equal(ourCalls.length, 1);
  assert.equal(ourCalls[0].name, 'write');
  assert.deepEqual(ourCalls[0].arguments, { path: 'notes.txt', text: 'line one, line two', opts: { append: true }, tags: ['a'], count: 2 });
  assert.ok(callsOf(theirs.messages).length > 1, 'pi-ai splits the call');
  const updates = ours.events.filter((e) => e.type === 'message_update').map((e) => e.assistantMessageEvent.type);
  assert.equal(updates.filter((t) => t === 'toolcall_start').length, 1);
  assert.equal(updates.filter((t) => t === 'toolcall_end').length, 1);
});

test('google: a tool-using run end to end (the scenario Chromium and workerd run too)', async () => {
  const { startOpenAIServer, geminiTextChunks, geminiToolCallChunks } = await import('./shared/openai-server.mjs');
  const { scenarioAnswer, runToolScenario, EXPECTED_SCENARIO } = await import('./shared/agent-scenario.mjs');
  const pkg = await import('pi-agent-wasm');
  const server = await startOpenAIServer((body) => scenarioAnswer(body, { textChunks: geminiTextChunks, toolCallChunks: geminiToolCallChunks, google: true }), { api: 'google' });
  try {
    const { usage, ...rest } = await runToolScenario(pkg, server.baseUrl, 'google-generative-ai');
    assert.deepEqual(rest, EXPECTED_SCENARIO);
    assert.equal(usage.input, 11);
    assert.equal(server.requests.length, 2);
    assert.equal(server.requests[0].headers['x-goog-api-key'], 'local-key');
  } finally {
    await server.close();
  }
});
