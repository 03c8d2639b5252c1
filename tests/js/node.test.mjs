// The built package, imported by its name in Node 20 (resolves the "node" export condition).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as pkg from 'pi-agent-wasm';
import { runSseScenario, EXPECTED } from './shared/sse-scenario.mjs';

test('SseDecoder decodes the shared scenario identically at every split (node entry)', () => {
  const r = runSseScenario(pkg);
  assert.deepEqual(r.events, EXPECTED.events);
  assert.equal(r.truncated, EXPECTED.truncated);
  assert.equal(r.retry, EXPECTED.retry);
  assert.equal(r.firstMismatch, -1);
  assert.ok(r.splits > 100);
});

test('feed accepts any Uint8Array view and returns fresh plain arrays', () => {
  const d = new pkg.SseDecoder();
  const buf = new TextEncoder().encode('xxdata: a\n\nyy');
  assert.deepEqual(d.feed(buf.subarray(2, 12)), [{ type: 'message', data: 'a', lastEventId: '' }]);
  assert.deepEqual(d.feed(new Uint8Array(0)), []);
  assert.deepEqual(d.finish(), []);
  assert.equal(d.truncated, false);
  assert.equal(d.retry, undefined);
});

test('a non-byte argument is a thrown Error, and the instance keeps working', () => {
  const d = new pkg.SseDecoder();
  assert.throws(() => d.feed(undefined));
  const d2 = new pkg.SseDecoder();
  assert.deepEqual(d2.feed(new TextEncoder().encode('data: ok\n\n')), [
    { type: 'message', data: 'ok', lastEventId: '' },
  ]);
});

test('the node entry exposes the public API only (no wasm init functions)', () => {
  assert.deepEqual(Object.keys(pkg).sort(), [
    'Agent',
    'AssistantMessageEventStream',
    'CHECKPOINT_VERSION',
    'DEFAULT_AGENT_IDENTITY',
    'EventStream',
    'SseDecoder',
    'ToolCallGate',
    'agentLoop',
    'agentLoopContinue',
    'agentLoopResume',
    'createAssistantMessageEventStream',
    'getDefaultStreamFn',
    'ready',
    'runAgentLoop',
    'runAgentLoopContinue',
    'runAgentLoopResume',
    'runToolCall',
    'setDefaultStreamFn',
    'streamProxy',
    'streamSimple',
  ]);
});
