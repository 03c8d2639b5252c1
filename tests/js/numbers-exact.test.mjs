// Numbers cross the JS↔wasm boundary unchanged, as in pi (where they never leave JS): every
// double in a tool call's arguments, in a tool's details and in the messages of the run comes
// back bit for bit. (serde_json's default float reader was one unit in the last place off for
// about one number in four; an outside tester found it.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import { createAssistantMessageEventStream } from '@earendil-works/pi-ai';
import { assistant, scriptedStream } from './shared/scripted-loop.mjs';

const impl = { ...ours, createAssistantMessageEventStream };
const user = { role: 'user', content: 'hi', timestamp: 1 };
const config = { model: { id: 'm', api: 'a', provider: 'p' }, convertToLlm: (m) => m };

/** Finite doubles from random bit patterns, with the edge cases the tester reported. */
function doubles(n) {
  const out = [123456789012345678901, 7.038531e-26, 1.0000000000000002, 2.225073858507201e-308, 5e-324, 1.7976931348623157e308, 0.1, 1e-7];
  const view = new DataView(new ArrayBuffer(8));
  let x = 0x2545f4914f6cdd1dn;
  while (out.length < n) {
    x ^= (x << 13n) & 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= (x << 17n) & 0xffffffffffffffffn;
    view.setBigUint64(0, x);
    const f = view.getFloat64(0);
    if (Number.isFinite(f)) out.push(f);
  }
  return out;
}

test('doubles in tool arguments, tool details and messages come back bit for bit', async () => {
  const values = doubles(3000);
  let seen;
  const tool = {
    name: 'echo', label: 'e', description: 'e', parameters: { type: 'object' },
    execute: async (_id, args) => {
      seen = args.values;
      return { content: [{ type: 'text', text: 'ok' }], details: { values } };
    },
  };
  const call = assistant([{ type: 'toolCall', id: 'c', name: 'echo', arguments: { values } }], 'toolUse');
  const messages = await ours.runAgentLoop([user], { messages: [], tools: [tool] }, config, () => {}, undefined,
    scriptedStream(impl, [call, assistant([{ type: 'text', text: 'done' }])]));
  const changed = (got) => values.filter((v, i) => !Object.is(v, got[i])).map((v, i) => [v, got[i]]);
  assert.deepEqual(changed(seen), [], 'arguments the tool received');
  const result = messages.find((m) => m.role === 'toolResult');
  assert.deepEqual(changed(result.details.values), [], "the tool's details in agent_end");
  const sent = messages.find((m) => m.role === 'assistant').content[0].arguments.values;
  assert.deepEqual(changed(sent), [], 'the tool call in agent_end');
});
