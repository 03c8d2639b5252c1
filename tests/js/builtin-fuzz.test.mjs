// Untrusted bytes from the network (brief: "everything from outside is untrusted"): the
// built-in stream is fed 300 seeded bodies of valid chunks mixed with wrong types, cut JSON,
// random bytes and bad UTF-8, served in random splits. Every run must resolve (never reject,
// never hang), end with turn_end/agent_end, hold every new message in agent_end, and give
// every tool call of a non-error message exactly one result.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';

function rng(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const head = { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm' };
const chunk = (choice, extra = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;

function body(seed) {
  const r = rng(seed);
  const parts = [];
  const n = 1 + Math.floor(r() * 12);
  for (let i = 0; i < n; i++) {
    parts.push(pick(r, [
      () => chunk({ delta: { content: pick(r, ['hi', 'ünï 😀', '', ' ']) } }),
      () => chunk({ delta: { reasoning_content: 'hmm' } }),
      () => chunk({ delta: { tool_calls: [{ index: Math.floor(r() * 2), id: pick(r, ['a', 'b', undefined]), function: { name: pick(r, ['echo', 'nope', undefined]), arguments: pick(r, ['{"x":', '1}', '"', '{}', 'null', ']']) } }] } }),
      () => chunk({ delta: { tool_calls: pick(r, [null, 3, 'x', [null], [{ function: 7 }], [{ index: 'z' }]]) } }),
      () => chunk({ delta: pick(r, [5, 'x', null, [], { content: { nested: true } }, { content: [1, { text: 2 }] }]) }),
      () => `data: ${JSON.stringify({ ...head, choices: pick(r, ['x', 3, null, [], [null], [7]]) })}\n\n`,
      () => `data: ${JSON.stringify({ ...head, choices: [], usage: pick(r, ['abc', { prompt_tokens: 'x' }, { prompt_tokens: 5, completion_tokens: 2 }, null]) })}\n\n`,
      () => chunk({ delta: {}, finish_reason: pick(r, ['stop', 'tool_calls', 'length', 'weird', 7, null]) }),
      () => `data: {"choices": [tru\n\n`,
      () => 'data: [DONE]\n\n',
      () => ': keep-alive\n\n',
      () => 'event: ping\ndata: 1\n\n',
      () => '\r\n\r\n',
    ])());
  }
  let bytes = Buffer.from(parts.join(''));
  if (r() < 0.2) bytes = Buffer.concat([bytes, Buffer.from([0xff, 0xfe, 0xc3])]);
  if (r() < 0.2) bytes = bytes.subarray(0, Math.floor(r() * bytes.length));
  return { bytes, r };
}

const server = createServer((req, res) => {
  const seed = Number(new URL(req.url, 'http://x').searchParams.get('seed') ?? req.headers['x-seed']);
  req.resume();
  req.on('end', async () => {
    const { bytes, r } = body(seed);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < bytes.length;) {
      const step = 1 + Math.floor(r() * 40);
      res.write(bytes.subarray(i, i + step));
      i += step;
      if (r() < 0.3) await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
after(() => new Promise((resolve) => server.close(resolve)));

const echo = {
  name: 'echo', label: 'echo', description: 'echo', parameters: { type: 'object', properties: { x: { type: 'number' } } },
  execute: async (_id, args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }], details: {} }),
};

const ONLY = process.env.SEED ? Number(process.env.SEED) : undefined;
test('300 seeded hostile bodies: every run ends cleanly, every executed tool call has one result (L-48)', async () => {
  const baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
  const stopReasons = new Set();
  for (let seed = ONLY ?? 1; seed <= (ONLY ?? 300); seed++) {
    const events = [];
    const model = {
      id: 'm', name: 'm', api: 'openai-completions', provider: 'fuzz', baseUrl, reasoning: false, input: ['text'],
      cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100,
      headers: { 'x-seed': String(seed) },
    };
    // The loop would continue while the model keeps calling tools; the same body answers every turn.
    let turns = 0;
    const messages = await runAgentLoop(
      [{ role: 'user', content: 'go', timestamp: 1 }],
      { messages: [], tools: [echo] },
      { model, apiKey: 'k', convertToLlm: (m) => m, finishTurn: () => (++turns >= 3 ? { action: 'end' } : undefined) },
      (e) => { events.push(e); },
      undefined,
      streamSimple,
    );
    if (ONLY) console.log(JSON.stringify(messages, null, 1).slice(0, 4000), body(seed).bytes.toString());
    const types = events.map((e) => e.type);
    assert.equal(types.at(-1), 'agent_end', `seed ${seed}`);
    assert.equal(types.at(-2), 'turn_end', `seed ${seed}`);
    assert.deepEqual(events.at(-1).messages, messages, `seed ${seed}`);
    // Each assistant message's tool calls are answered by the results that follow it, one
    // each, unless the message ended as an error (L-48: the run exits without executing).
    messages.forEach((m, i) => {
      if (m.role !== 'assistant') return;
      const calls = m.content.filter((b) => b.type === 'toolCall');
      const next = messages.slice(i + 1);
      const end = next.findIndex((x) => x.role !== 'toolResult');
      const results = end < 0 ? next : next.slice(0, end);
      if (m.stopReason === 'error' || m.stopReason === 'aborted') {
        assert.equal(results.length, 0, `seed ${seed}: L-48`);
        return;
      }
      assert.deepEqual(results.map((t) => t.toolCallId), calls.map((c) => c.id), `seed ${seed}: one result per call, in order`);
    });
    for (const m of messages.filter((x) => x.role === 'assistant')) {
      stopReasons.add(m.stopReason);
      if (m.stopReason === 'error') assert.ok(typeof m.errorMessage === 'string' && m.errorMessage.length > 0, `seed ${seed}`);
    }
  }
  // The corpus reaches both clean and failed endings.
  assert.ok(stopReasons.has('error'));
  assert.ok(stopReasons.has('stop') || stopReasons.has('toolUse'));
});
