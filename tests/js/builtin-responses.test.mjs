// The built-in openai-responses stream against a real HTTP server on 127.0.0.1, event for
// event against pi-ai 1.6.0's streamSimple on the same wire transcripts
// (tests/fixtures/openai-responses), with the request bodies compared too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { harness } from './shared/provider-diff.mjs';

const KEY = 'sk-local-secret-0123456789';
const FIXTURES = new URL('../fixtures/openai-responses/', import.meta.url);
const h = harness({ fixtures: FIXTURES, provider: 'openai', key: KEY, basePath: '/v1' });
after(h.close);
const read = h.read;
const runWith = (fn, bodies, extra = {}, serveOptions = {}, modelId = 'gpt-5-mini', history = []) =>
  h.runWith(fn, bodies, { extra, serveOptions, modelId, history });

const IMPROVED = new Set(['no_output_index.sse', 'minimal_shapes.sse']);
for (const fixture of readdirSync(FIXTURES).filter((f) => f.endsWith('.sse') && !IMPROVED.has(f))) {
  test(`responses: built-in stream = pi-ai streamSimple, events and requests: ${fixture}`, async () => {
    const bodies = [read(fixture), read('text.sse')];
    const ours = await runWith(streamSimple, bodies);
    const theirs = await runWith(piStreamSimple, bodies);
    assert.deepEqual(ours.events, theirs.events);
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body));
    assert.deepEqual(ours.requests.map((r) => r.url), theirs.requests.map((r) => r.url));
    for (const r of ours.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!JSON.stringify(ours.events).includes(KEY));
  });
}

test('responses: request options match pi-ai (reasoning, maxTokens, temperature, toolChoice, session cache key)', async () => {
  const cases = [
    [{ reasoning: 'high', maxTokens: 100, temperature: 0.5 }],
    [{ reasoning: 'minimal', maxTokens: 3 }],
    [{ toolChoice: 'required' }],
    [{ sessionId: 'session-42', cacheRetention: 'long' }],
    [{ sessionId: 'session-43', cacheRetention: 'none' }],
    [{ reasoning: 'low' }, 'gpt-4o'],
  ];
  for (const [extra, modelId] of cases) {
    const ours = await runWith(streamSimple, [read('text.sse')], extra, {}, modelId);
    const theirs = await runWith(piStreamSimple, [read('text.sse')], extra, {}, modelId);
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body), JSON.stringify(extra));
    for (const h of ['session-id', 'x-client-request-id', 'x-session-id']) {
      assert.equal(ours.requests[0].headers[h], theirs.requests[0].headers[h], h);
    }
  }
});

test('responses: a replayed transcript (reasoning items, message ids, calls, results, images) is sent as pi-ai sends it', async () => {
  const same = { api: 'openai-responses', provider: 'openai', model: 'gpt-5-mini', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 };
  const history = [
    { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }], timestamp: 1 },
    { ...same, role: 'assistant', stopReason: 'toolUse', content: [
      { type: 'thinking', thinking: 'plan', thinkingSignature: JSON.stringify({ id: 'rs_9', type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }], encrypted_content: 'e' }) },
      { type: 'text', text: 'Checking.', textSignature: JSON.stringify({ v: 1, id: 'msg_9', phase: 'commentary' }) },
      { type: 'text', text: 'Second.' },
      { type: 'toolCall', id: 'call_9|fc_9', name: 'read', arguments: { path: 'x', n: 1.5e21 } },
    ] },
    { role: 'toolResult', toolCallId: 'call_9|fc_9', toolName: 'read', content: [{ type: 'text', text: 'data' }, { type: 'image', data: 'aW1n', mimeType: 'image/jpeg' }], isError: false, timestamp: 3 },
    { ...same, provider: 'anthropic', api: 'anthropic-messages', model: 'claude', role: 'assistant', stopReason: 'toolUse', content: [
      { type: 'thinking', thinking: 'foreign', thinkingSignature: 'sig' },
      { type: 'toolCall', id: 'toolu_01+weird/id', name: 'read', arguments: {} },
    ] },
    { role: 'toolResult', toolCallId: 'toolu_01+weird/id', toolName: 'read', content: [], isError: false, timestamp: 4 },
    { ...same, model: 'gpt-4.1', role: 'assistant', stopReason: 'toolUse', content: [
      { type: 'toolCall', id: 'call_x|fc_x', name: 'read', arguments: {} },
      { type: 'toolCall', id: 'call_y|item_y', name: 'read', arguments: {} },
    ] },
    { role: 'toolResult', toolCallId: 'call_x|fc_x', toolName: 'read', content: [{ type: 'text', text: 'r' }], isError: false, timestamp: 5 },
  ];
  const ours = await runWith(streamSimple, [read('text.sse')], {}, {}, 'gpt-5-mini', history);
  const theirs = await runWith(piStreamSimple, [read('text.sse')], {}, {}, 'gpt-5-mini', history);
  assert.deepEqual(ours.requests[0].body, theirs.requests[0].body);
  assert.ok(ours.requests[0].body.input.some((i) => i.type === 'reasoning' && i.id === 'rs_9'));
});

test('responses: text deltas without output_index are kept (pi-ai drops them)', async () => {
  const ours = await runWith(streamSimple, [read('no_output_index.sse')]);
  const theirs = await runWith(piStreamSimple, [read('no_output_index.sse')]);
  const deltas = (r) => r.events.filter((e) => e.assistantMessageEvent?.type === 'text_delta').map((e) => e.assistantMessageEvent.delta);
  assert.deepEqual(deltas(ours), ['No ', 'index ', 'here.']);
  assert.deepEqual(deltas(theirs), []);
  // Both end with the item's final text; ours streamed it on the way.
  const answer = (r) => r.messages.find((m) => m.role === 'assistant').content;
  assert.deepEqual(answer(ours), answer(theirs));
});

test('responses: minimal item shapes of compatible servers (no content, deltas by item_id only) keep their streamed text, where pi-ai empties both blocks', async () => {
  const ours = await runWith(streamSimple, [read('minimal_shapes.sse')]);
  const theirs = await runWith(piStreamSimple, [read('minimal_shapes.sse')]);
  const deltas = (r) => r.events.filter((e) => e.assistantMessageEvent?.type?.endsWith('_delta')).map((e) => e.assistantMessageEvent.delta);
  assert.deepEqual(deltas(ours), ['Thinking ', 'hard.', 'Hello ', 'there.']);
  assert.deepEqual(deltas(theirs), []);
  const answer = (r) => r.messages.find((m) => m.role === 'assistant').content;
  assert.deepEqual(answer(ours).map((b) => b.thinking ?? b.text), ['Thinking hard.', 'Hello there.']);
  assert.deepEqual(answer(theirs).map((b) => b.thinking ?? b.text), ['', '']);
  // The ends carry the kept text, and everything else is as pi-ai has it.
  const ends = (r) => r.events.filter((e) => e.assistantMessageEvent?.type?.endsWith('_end')).map((e) => e.assistantMessageEvent.content);
  assert.deepEqual(ends(ours), ['Thinking hard.', 'Hello there.']);
  const rest = (blocks) => blocks.map(({ thinking, text, ...other }) => other);
  assert.deepEqual(rest(answer(ours)), rest(answer(theirs)));
});

test('responses: HTTP errors are worded as pi-ai words them, key redacted', async () => {
  for (const [status, body] of [[401, JSON.stringify({ error: { message: `bad key ${KEY}`, type: 'invalid_request_error' } })], [400, 'plain failure'], [500, '']]) {
    const ours = await runWith(streamSimple, [body], {}, { status, type: 'application/json' });
    const theirs = await runWith(piStreamSimple, [body], {}, { status, type: 'application/json' });
    const err = (r) => r.messages.find((m) => m.role === 'assistant').errorMessage;
    assert.equal(err(ours), err(theirs).replaceAll(KEY, '[redacted]'), `${status}`);
    assert.ok(!err(ours).includes(KEY));
  }
});

test('responses: a tool-using run end to end (the scenario Chromium and workerd run too)', async () => {
  const { startScenarioServer } = await import('./shared/openai-server.mjs');
  const { runToolScenario, EXPECTED_SCENARIO } = await import('./shared/agent-scenario.mjs');
  const pkg = await import('pi-agent-wasm');
  const server = await startScenarioServer('openai-responses');
  try {
    const { usage, ...rest } = await runToolScenario(pkg, server.baseUrl, 'openai-responses');
    assert.deepEqual(rest, EXPECTED_SCENARIO);
    assert.equal(usage.input, 11);
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});
