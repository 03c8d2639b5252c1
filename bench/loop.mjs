// Loop benchmarks, this package against pi-agent-core 1.6.0 in the same process:
//   (A) loop overhead: 20 turns × 500 text deltas, 4 parallel trivial tools on most turns;
//       time per delivered event.
//   (B) streamed tool-call arguments of 10 KB, 100 KB and 1 MB in 8-byte deltas; the
//       log-log slope of time over size (1.0 = linear).
// Run: node bench/loop.mjs   (after npm run build). Timings are reported, never asserted.
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { scenarioA, textResponse, base, model, noop } from './scenario-a.mjs';

const IMPLS = {
  ours: { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream },
  pi: { run: piCore.runAgentLoop, stream: piStream },
};
function argsResponse(makeStream, bytes) {
  const s = makeStream();
  const payload = JSON.stringify({ text: 'x'.repeat(bytes - 12) });
  const partial = { ...base, content: [], stopReason: 'pending', timestamp: Date.now() };
  s.push({ type: 'start', partial });
  const call = { type: 'toolCall', id: 'big', name: 'noop', arguments: {} };
  partial.content.push(call);
  s.push({ type: 'toolcall_start', contentIndex: 0, partial });
  for (let i = 0; i < payload.length; i += 8) {
    s.push({ type: 'toolcall_delta', contentIndex: 0, delta: payload.slice(i, i + 8), partial });
  }
  call.arguments = JSON.parse(payload);
  s.push({ type: 'toolcall_end', contentIndex: 0, toolCall: call, partial });
  partial.stopReason = 'toolUse';
  s.push({ type: 'done', reason: 'toolUse', message: partial });
  return s;
}

async function scenarioB(impl, bytes) {
  let calls = 0;
  const streamFn = () => (calls++ === 0 ? argsResponse(impl.stream, bytes) : textResponse(impl.stream, 1, 0));
  const t0 = performance.now();
  await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [noop] }, { model, convertToLlm: (m) => m }, async () => {}, undefined, streamFn);
  return performance.now() - t0;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Runs both implementations alternately (so drift and GC hit both alike); medians. */
async function compare(make, runs) {
  const names = Object.keys(IMPLS);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  const last = {};
  for (let i = 0; i < 3; i++) for (const n of names) await make(IMPLS[n]); // warm-up
  for (let i = 0; i < runs; i++) {
    for (const n of (i % 2 ? names : [...names].reverse())) {
      const r = await make(IMPLS[n]);
      last[n] = r;
      times[n].push(typeof r === 'number' ? r : r.ms);
    }
  }
  return Object.fromEntries(names.map((n) => [n, { ms: median(times[n]), last: last[n] }]));
}

console.log('(A) loop overhead: 20 turns x 500 text deltas, 4 parallel tools on 19 turns');
const a = await compare(scenarioA, 21);
for (const [name, { ms, last }] of Object.entries(a)) {
  console.log(`  ${name.padEnd(4)} ${ms.toFixed(1)} ms for ${last.events} events = ${((1e6 * ms) / last.events).toFixed(0)} ns/event`);
}
console.log(`  ratio ours/pi per event: ${(a.ours.ms / a.pi.ms).toFixed(2)} (goal <= 0.9)`);

console.log('(B) streamed tool-call arguments, 8-byte deltas');
const sizes = [10_000, 100_000, 1_000_000];
const b = { ours: [], pi: [] };
for (const bytes of sizes) {
  const r = await compare((impl) => scenarioB(impl, bytes), bytes >= 1_000_000 ? 7 : 15);
  b.ours.push(r.ours.ms);
  b.pi.push(r.pi.ms);
  console.log(`  ${String(bytes).padStart(8)} B: ours ${r.ours.ms.toFixed(1)} ms, pi ${r.pi.ms.toFixed(1)} ms, ratio ${(r.ours.ms / r.pi.ms).toFixed(2)}`);
}
const slope = (ts) => Math.log(ts[2] / ts[0]) / Math.log(sizes[2] / sizes[0]);
console.log(`  log-log slope 10 KB -> 1 MB: ours ${slope(b.ours).toFixed(2)}, pi ${slope(b.pi).toFixed(2)} (goal < 1.15; 1 MB faster than pi: ${b.ours[2] < b.pi[2]})`);

