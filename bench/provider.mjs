// Benchmark (C): a 100k-chunk Chat Completions stream over local HTTP — 50k chunks of tool-call
// arguments, then (after the tool ran) a 50k-chunk text answer — through a full agent run.
// This package's built-in stream (Rust SSE + decoding) against pi-agent-core 1.6.0 with
// pi-ai 1.6.0's streamSimple, in one process, alternating. Reports MB/s of response body.
// Run: node bench/provider.mjs [chunks]   (after npm run build). Never asserted by tests.
import { createServer } from 'node:http';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';

const CHUNKS = Number(process.argv[2] ?? 100_000);
const head = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'bench-model' };
const line = (choice, extra = {}) => `data: ${JSON.stringify({ ...head, choices: [{ index: 0, ...choice }], ...extra })}\n\n`;

function toolBody(n) {
  let s = line({ delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'sink', arguments: '{"text": "' } }] }, finish_reason: null });
  const piece = line({ delta: { tool_calls: [{ index: 0, function: { arguments: 'lorem ipsum ' } }] }, finish_reason: null });
  s += piece.repeat(n);
  s += line({ delta: { tool_calls: [{ index: 0, function: { arguments: '"}' } }] }, finish_reason: null });
  s += line({ delta: {}, finish_reason: 'tool_calls' }, { usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: n + 10 } });
  return Buffer.from(s + 'data: [DONE]\n\n');
}
function textBody(n) {
  let s = line({ delta: { role: 'assistant', content: '' }, finish_reason: null });
  s += line({ delta: { content: 'word ' }, finish_reason: null }).repeat(n);
  s += line({ delta: {}, finish_reason: 'stop' }, { usage: { prompt_tokens: 10, completion_tokens: n, total_tokens: n + 10 } });
  return Buffer.from(s + 'data: [DONE]\n\n');
}

const bodies = [toolBody(CHUNKS / 2), textBody(CHUNKS / 2)];
const totalBytes = bodies[0].length + bodies[1].length;
const server = createServer((req, res) => {
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
const baseUrl = `http://127.0.0.1:${server.address().port}/v1`;
const model = {
  id: 'bench-model', name: 'bench', api: 'openai-completions', provider: 'bench', baseUrl, reasoning: false,
  input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1e9, maxTokens: 1e9,
  compat: { supportsStore: false, supportsDeveloperRole: false },
};
const sink = { name: 'sink', label: 'sink', description: 'takes text', parameters: { type: 'object', properties: { text: { type: 'string' } } }, execute: async (_id, a) => ({ content: [{ type: 'text', text: String(a.text.length) }], details: {} }) };

const IMPLS = {
  ours: () => ours.runAgentLoop,
  pi: () => piCore.runAgentLoop,
};
const STREAMS = { ours: ours.streamSimple, pi: piStreamSimple };

async function once(name) {
  let updates = 0;
  const t0 = performance.now();
  const messages = await IMPLS[name]()([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [sink] }, { model, apiKey: 'bench', convertToLlm: (m) => m }, (e) => { if (e.type === 'message_update') updates += 1; }, undefined, STREAMS[name]);
  const ms = performance.now() - t0;
  const last = messages.at(-1);
  if (last.stopReason !== 'stop' || !messages.some((m) => m.role === 'toolResult')) {
    const shape = messages.map((m) => `${m.role}:${m.stopReason ?? ''}:${m.errorMessage ?? JSON.stringify(m.content).slice(0, 120)}`);
    throw new Error(`${name}: run did not finish: ${shape.join(' | ')}`);
  }
  return { ms, updates };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = { ours: [], pi: [] };
await once("ours");
if (process.env.ONLY_OURS) { for (let i = 0; i < 3; i++) await once("ours"); server.close(); process.exit(0); } // for profiling
await once('pi');
for (let i = 0; i < 5; i++) for (const name of i % 2 ? ['pi', 'ours'] : ['ours', 'pi']) results[name].push(await once(name));
const mbps = (ms) => totalBytes / 1e6 / (ms / 1000);
console.log(`(C) ${CHUNKS} chunks, ${(totalBytes / 1e6).toFixed(1)} MB of SSE, ${results.ours[0].updates} updates per run`);
for (const name of ['ours', 'pi']) {
  const ms = median(results[name].map((r) => r.ms));
  console.log(`  ${name.padEnd(5)} median ${ms.toFixed(0)} ms  ${mbps(ms).toFixed(1)} MB/s`);
}
const ratio = median(results.pi.map((r) => r.ms)) / median(results.ours.map((r) => r.ms));
console.log(`  throughput ours/pi: ${ratio.toFixed(2)}x`);
server.close();
