// The built-in anthropic-messages stream against a real HTTP server on 127.0.0.1, event for
// event against pi-ai 1.6.0's streamSimple on the same wire transcripts
// (tests/fixtures/anthropic), with the request bodies and betas compared too.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { streamSimple } from 'pi-agent-wasm';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { harness } from './shared/provider-diff.mjs';

const KEY = 'sk-ant-local-secret-0123456789';
const FIXTURES = new URL('../fixtures/anthropic/', import.meta.url);
const h = harness({ fixtures: FIXTURES, provider: 'anthropic', key: KEY, basePath: '' });
after(h.close);
const run = (fn, bodies, opts = {}) => h.runWith(fn, bodies, { modelId: 'claude-sonnet-4-5', ...opts });

// Our wording for malformed JSON names the event and data, not V8's parser message.
const OWN_WORDING = new Set(['bad_json.sse']);
const IMPROVED = new Set(['unnamed_events.sse']);
for (const fixture of readdirSync(FIXTURES).filter((f) => f.endsWith('.sse') && !IMPROVED.has(f))) {
  test(`anthropic: built-in stream = pi-ai streamSimple, events and requests: ${fixture}`, async () => {
    const bodies = [h.read(fixture), h.read('text.sse')];
    const ours = await run(streamSimple, bodies);
    const theirs = await run(piStreamSimple, bodies);
    if (OWN_WORDING.has(fixture)) {
      const strip = (events) => JSON.parse(JSON.stringify(events, (k, v) => (k === 'errorMessage' ? 'ERR' : v)));
      assert.deepEqual(strip(ours.events), strip(theirs.events));
      const err = ours.messages.find((m) => m.role === 'assistant').errorMessage;
      assert.match(err, /^Could not parse Anthropic SSE event content_block_delta: .*; data=/s);
    } else {
      assert.deepEqual(ours.events, theirs.events);
    }
    assert.deepEqual(ours.requests.map((r) => r.body), theirs.requests.map((r) => r.body));
    assert.deepEqual(ours.requests.map((r) => r.url), theirs.requests.map((r) => r.url));
    for (const [i, r] of ours.requests.entries()) {
      assert.equal(r.headers['x-api-key'], KEY);
      assert.equal(r.headers['anthropic-version'], '2023-06-01');
      assert.equal(r.headers['anthropic-beta'], theirs.requests[i].headers['anthropic-beta']);
    }
    assert.ok(!JSON.stringify(ours.events).includes(KEY));
  });
}

test('anthropic: request options match pi-ai (thinking budgets, adaptive effort, cache retention, toolChoice, metadata)', async () => {
  const cases = [
    [{ reasoning: 'high', maxTokens: 4000 }],
    [{ reasoning: 'minimal', thinkingBudgets: { minimal: 2000 } }],
    [{ reasoning: 'medium' }, 'claude-opus-4-7'],
    [{ temperature: 0.3, toolChoice: 'any' }],
    [{ toolChoice: { type: 'tool', name: 'read' } }],
    [{ cacheRetention: 'long', metadata: { user_id: 'u-1' } }],
    [{ cacheRetention: 'none' }],
    [{ headers: { 'anthropic-beta': 'a-beta, b-beta' }, reasoning: 'low' }],
  ];
  for (const [extra, modelId] of cases) {
    const opts = { extra, ...(modelId ? { modelId } : {}) };
    const ours = await run(streamSimple, [h.read('text.sse')], opts);
    const theirs = await run(piStreamSimple, [h.read('text.sse')], opts);
    assert.deepEqual(ours.requests[0].body, theirs.requests[0].body, JSON.stringify(extra));
    assert.equal(ours.requests[0].headers['anthropic-beta'], theirs.requests[0].headers['anthropic-beta'], JSON.stringify(extra));
  }
});

test('anthropic: a replayed transcript (signed, unsigned and redacted thinking, calls, error results with images) is sent as pi-ai sends it', async () => {
  const same = { api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 };
  const history = [
    { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'text', text: '  ' }, { type: 'image', data: 'aGk=', mimeType: 'image/png' }], timestamp: 1 },
    { ...same, role: 'assistant', stopReason: 'toolUse', content: [
      { type: 'thinking', thinking: 'plan', thinkingSignature: 'sig-1' },
      { type: 'thinking', thinking: 'unsigned', thinkingSignature: '' },
      { type: 'thinking', thinking: '[Reasoning redacted]', thinkingSignature: 'opaque', redacted: true },
      { type: 'text', text: 'Checking.' },
      { type: 'toolCall', id: 'toolu_1', name: 'read', arguments: { path: 'x', n: 1.5e21 } },
      { type: 'toolCall', id: 'toolu_2', name: 'read', arguments: { path: 'y' } },
    ] },
    { role: 'toolResult', toolCallId: 'toolu_1', toolName: 'read', content: [{ type: 'text', text: 'data' }, { type: 'image', data: 'aW1n', mimeType: 'image/jpeg' }], isError: true, timestamp: 3 },
    { role: 'toolResult', toolCallId: 'toolu_2', toolName: 'read', content: [{ type: 'image', data: 'aW1n', mimeType: 'image/jpeg' }], isError: false, timestamp: 3 },
    { ...same, provider: 'openai', api: 'openai-responses', model: 'gpt-5', role: 'assistant', stopReason: 'toolUse', content: [
      { type: 'thinking', thinking: 'foreign', thinkingSignature: '{}' },
      { type: 'toolCall', id: 'call_9|fc_9+x', name: 'read', arguments: {} },
    ] },
    { role: 'toolResult', toolCallId: 'call_9|fc_9+x', toolName: 'read', content: [], isError: false, timestamp: 4 },
  ];
  const ours = await run(streamSimple, [h.read('text.sse')], { history });
  const theirs = await run(piStreamSimple, [h.read('text.sse')], { history });
  assert.deepEqual(ours.requests[0].body, theirs.requests[0].body);
  assert.ok(ours.requests[0].body.messages.some((m) => m.content?.some?.((b) => b.type === 'redacted_thinking')));
});

test('anthropic: events sent without `event:` lines are read by their type (pi-ai skips them)', async () => {
  const ours = await run(streamSimple, [h.read('unnamed_events.sse')]);
  const theirs = await run(piStreamSimple, [h.read('unnamed_events.sse')]);
  const answer = (r) => r.messages.find((m) => m.role === 'assistant');
  assert.deepEqual(answer(ours).content, [{ type: 'text', text: 'No names.' }]);
  assert.equal(answer(ours).stopReason, 'stop');
  assert.equal(answer(theirs).stopReason, 'error');
});

test('anthropic: HTTP errors are worded as pi-ai words them, key redacted', async () => {
  const bodies = [
    [401, JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } })],
    [400, 'plain failure'],
    [529, ''],
  ];
  for (const [status, body] of bodies) {
    const serveOptions = { status, type: 'application/json' };
    const ours = await run(streamSimple, [body], { serveOptions });
    const theirs = await run(piStreamSimple, [body], { serveOptions });
    const err = (r) => r.messages.find((m) => m.role === 'assistant').errorMessage;
    assert.equal(err(ours), err(theirs).replaceAll(KEY, '[redacted]'), `${status}`);
    assert.ok(!err(ours).includes(KEY));
  }
});

test('anthropic: a tool-using run end to end (the scenario Chromium and workerd run too)', async () => {
  const { startScenarioServer } = await import('./shared/openai-server.mjs');
  const { runToolScenario, EXPECTED_SCENARIO } = await import('./shared/agent-scenario.mjs');
  const pkg = await import('pi-agent-wasm');
  const server = await startScenarioServer('anthropic-messages');
  try {
    const { usage, ...rest } = await runToolScenario(pkg, server.baseUrl, 'anthropic-messages');
    assert.deepEqual(rest, EXPECTED_SCENARIO);
    assert.equal(usage.input, 11);
    assert.equal(server.requests.length, 2);
  } finally {
    await server.close();
  }
});
