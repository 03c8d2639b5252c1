// A test written from a recorded run (docs/record-replay.md, "In tests"): the demo's run,
// recorded once by examples/cassette/record-demo.mjs, replays offline on every test run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { replay, summarize } from 'pi-agent-wasm/cassette';
import { calculator, clock } from '../../www/tools.js';

const cassette = readFileSync(new URL('../../examples/cassette/demo.cassette.jsonl', import.meta.url), 'utf8');
// The agent's tools as it declares them; a replay takes their results from the cassette.
const offline = [calculator, clock].map((tool) => ({ ...tool, execute: () => assert.fail(`${tool.name} ran in a replay`) }));

test('the recorded demo run: what the cassette holds', () => {
  const { runs, toolCalls, messages } = summarize(cassette);
  assert.deepEqual(runs, ['prompt', 'prompt']);
  assert.deepEqual(toolCalls.map((c) => [c.name, c.args]), [['calculator', { expression: '17*23' }], ['clock', {}], ['calculator', { expression: '6*7' }]]);
  assert.equal(toolCalls[0].result.content[0].text, '391');
  assert.match(messages.at(-1).content.at(-1).text, /42/);
});

test('the recorded demo run replays offline, the same agent with the same events', async () => {
  const run = await replay(cassette, { initialState: { tools: offline } });
  assert.deepEqual(run.events.filter((e) => e.type === 'agent_start').length, 2);
  assert.deepEqual(run.events.filter((e) => e.type === 'tool_execution_end').map((e) => e.result.content[0].text).slice(0, 1), ['391']);
  assert.match(run.messages.at(-1).content.at(-1).text, /42/);
});

test('a changed tool declaration is caught where the model would see it', async () => {
  const renamed = offline.map((tool) => (tool.name === 'clock' ? { ...tool, description: 'The time.' } : tool));
  await assert.rejects(replay(cassette, { initialState: { tools: renamed } }), (error) => error.code === 'replay_divergence' && /request 0 differs/.test(error.message));
});
