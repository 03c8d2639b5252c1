// Streamed tool-call arguments of the built-in stream, as a sink sees them at each
// `toolcall_delta`, against pi-agent-core 1.6.0 with pi-ai 1.6.0's streamSimple. The glue
// parses each call's JSON text itself, as pi-ai does, so the partial arguments match pi's at
// every delta: unfinished numbers and literals (`12` of `123`, `tr` of `true`), escapes cut in
// half, keys without values. Each SSE event is its own network write with a pause between,
// so pi's provider cannot read ahead of its consumer and the snapshots compare one to one.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';
import { faultServer } from './shared/four-apis.mjs';

const IMPLS = {
  ours: [ours.runAgentLoop, undefined],
  oursStreamSimple: [ours.runAgentLoop, ours.streamSimple],
  pi: [pi.runAgentLoop, piStreamSimple],
};

const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-test' };
const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** A Chat Completions answer that calls `read` with `pieces` as its argument deltas. */
function callBody(pieces) {
  const events = [chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }] })];
  for (const p of pieces) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
  events.push(chunk({}, 'tool_calls'), 'data: [DONE]\n\n');
  return events;
}
const textBody = [chunk({ role: 'assistant', content: 'done' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];

/** Serves `bodies[n]` to request n, one event per write, 3 ms apart. */
async function serve(bodies) {
  const server = await faultServer(async (_req, res, n) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const e of bodies[Math.min(n, bodies.length - 1)]) {
      res.write(e);
      await new Promise((r) => setTimeout(r, 3));
    }
    res.end();
  });
  return { baseUrl: `${server.origin}/v1`, close: server.close };
}

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

const tool = {
  name: 'read', label: 'Read', description: 'Reads',
  parameters: { type: 'object', additionalProperties: true },
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }], details: {} }),
};

/** The call's arguments as JSON at each toolcall_delta and at toolcall_end, and the final
 * message's call. */
async function argumentsSeen(impl, pieces) {
  const server = await serve([callBody(pieces), textBody]);
  servers.push(server);
  const model = { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
  const seen = [];
  const [runAgentLoop, streamFn] = IMPLS[impl];
  const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
    { model, apiKey: 'sk-test', convertToLlm: (m) => m }, (e) => {
      const u = e.assistantMessageEvent;
      if (u?.type === 'toolcall_delta' || u?.type === 'toolcall_end') {
        seen.push(`${u.type} ${JSON.stringify(u.partial.content[u.contentIndex].arguments)} ${JSON.stringify(e.message.content[u.contentIndex].arguments)}`);
      }
    }, undefined, streamFn);
  const call = messages.find((m) => m.role === 'assistant').content.find((c) => c.type === 'toolCall');
  return { seen, final: JSON.stringify(call) };
}

const CASES = [
  ['{"n": 12', '3, "b": tr', 'ue, "f": fal', 'se, "z": nu', 'll}'],
  ['{"s": "caf\\u00', 'e9 \\', 'n end", "e": 1e', '5, "neg": -', '0.5}'],
  ['{"a": [1, 2', ', {"k": "v', '"}], "o": {"x"', ': {"y": [', ']}}}'],
  ['{"key', '": "val', 'ue", "other":', ' "x"}'],
  ['  ', '{', '"p": "a.txt"', '}'],
  ['{"p": "😀', '", "q": "\\ud83d', '\\ude00"}'],
  ['{"bad": tru', 'x, "ok": 1}'],
];

test('partial tool-call arguments at every delta are pi-ai\'s (unfinished numbers, literals and escapes included)', async () => {
  for (const pieces of CASES) {
    const b = await argumentsSeen('pi', pieces);
    for (const impl of ['ours', 'oursStreamSimple']) {
      const a = await argumentsSeen(impl, pieces);
      assert.deepEqual(a.seen, b.seen, `${impl}: ${pieces.join(' | ')}`);
      // A final parse error's wording is the JSON parser's own (V8's in pi): compared without it.
      const plain = (f) => JSON.stringify({ ...JSON.parse(f), argumentsError: 'argumentsError' in JSON.parse(f) });
      assert.equal(plain(a.final), plain(b.final), `${impl}: ${pieces.join(' | ')}`);
    }
  }
});
