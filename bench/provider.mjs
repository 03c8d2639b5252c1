// Benchmark (C): a 100k-chunk Chat Completions stream over local HTTP — 50k chunks of tool-call
// arguments, then (after the tool ran) a 50k-chunk text answer — through a full agent run.
// This package's built-in stream (Rust SSE + decoding) against pi-agent-core 1.6.0 with
// pi-ai 1.6.0's streamSimple, in one process, alternating. Reports MB/s of response body.
// Run: node bench/provider.mjs [chunks]   (after npm run build). Never asserted by tests.
// The same measurement in Chromium: node bench/provider-browser.mjs.
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { startBenchServer } from './chat-bodies.mjs';
import { compare, once } from './provider-run.mjs';

const CHUNKS = Number(process.argv[2] ?? 100_000);
const server = await startBenchServer(CHUNKS);
const impls = {
  ours: { runAgentLoop: ours.runAgentLoop, streamSimple: ours.streamSimple },
  pi: { runAgentLoop: piCore.runAgentLoop, streamSimple: piStreamSimple },
};
// The loop's default stream (no streamFn): the built-in provider inside the loop, whose
// updates reach the sink a network chunk at a time.
const builtin = { ours: { runAgentLoop: ours.runAgentLoop, streamSimple: undefined }, pi: impls.pi };
if (process.env.ONLY_OURS) {
  // For profiling: this package only.
  for (let i = 0; i < 4; i++) await once(impls.ours, server.baseUrl);
} else {
  const r = await compare(impls, server.baseUrl);
  const mbps = (ms) => server.totalBytes / 1e6 / (ms / 1000);
  console.log(`(C) Node, ${CHUNKS} chunks, ${(server.totalBytes / 1e6).toFixed(1)} MB of SSE, ${r.updates} updates per run`);
  console.log(`  ours  median ${r.ours.toFixed(0)} ms  ${mbps(r.ours).toFixed(1)} MB/s`);
  console.log(`  pi    median ${r.pi.toFixed(0)} ms  ${mbps(r.pi).toFixed(1)} MB/s`);
  console.log(`  throughput ours/pi: ${r.ratio.toFixed(2)}x`);
  const d = await compare(builtin, server.baseUrl);
  console.log(`(C) the same with the loop's default stream (no streamFn)`);
  console.log(`  ours  median ${d.ours.toFixed(0)} ms  ${mbps(d.ours).toFixed(1)} MB/s`);
  console.log(`  pi    median ${d.pi.toFixed(0)} ms  ${mbps(d.pi).toFixed(1)} MB/s`);
  console.log(`  throughput ours/pi: ${d.ratio.toFixed(2)}x`);
}
await server.close();
