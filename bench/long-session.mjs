// (F) The long session, as a coding agent runs one: N turns, each a tool call whose result is
// 16 KB of distinct text (a file read), the transcript kept. This package against pi 1.6.0,
// through the loop functions and through `Agent`, at N = 25, 100 and 400:
// - time per turn (medians, the two implementations alternating in one process) and the
//   log-log slope of a run's time over N (1.0 = a constant cost per turn);
// - memory after one 400-turn run with its transcript kept, each implementation in a fresh
//   process of its own (the median of five): RSS, JS heap, and (ours) the growth of wasm
//   linear memory.
// Run: node bench/long-session.mjs   (after npm run build). Timings are reported, never asserted.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';

const IMPLS = {
  ours: { core: ours, stream: ours.createAssistantMessageEventStream },
  pi: { core: piCore, stream: piStream },
};
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'bench', name: 'bench', api: 'bench', provider: 'bench', baseUrl: '', reasoning: false, input: ['text'], cost: usage.cost, contextWindow: 1e9, maxTokens: 1e6 };

function response(make, turn, last) {
  const s = make();
  const content = last ? [{ type: 'text', text: 'done' }] : [{ type: 'toolCall', id: `read${turn}`, name: 'read', arguments: { path: `src/file${turn}.rs` } }];
  const message = { role: 'assistant', api: 'bench', provider: 'bench', model: 'bench', usage, content, stopReason: last ? 'stop' : 'toolUse', timestamp: Date.now() };
  s.push({ type: 'start', partial: message });
  s.push({ type: 'done', reason: message.stopReason, message });
  return s;
}

// 401 distinct flat strings of 16 KB, made before any timing (JSON.parse flattens the
// concatenation, so each is a string of its own, not a rope over a shared one).
const FILE = 'fn main() { println!("hello"); }\n'.repeat(16384 / 32);
const FILES = Array.from({ length: 401 }, (_, i) => JSON.parse(JSON.stringify(`${FILE}// file ${i}\n`)));
const read = {
  name: 'read', label: 'read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: async (id) => ({ content: [{ type: 'text', text: FILES[Number(id.slice(4)) % FILES.length] }], details: {} }),
};

/** One session of `turns` turns; resolves with the transcript. */
async function session(name, mode, turns) {
  const { core, stream } = IMPLS[name];
  let turn = 0;
  const streamFn = () => { turn += 1; return response(stream, turn, turn >= turns); };
  if (mode === 'loop') {
    return core.runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [read] },
      { model, convertToLlm: (m) => m }, () => {}, undefined, streamFn);
  }
  const agent = new core.Agent({ initialState: { model, tools: [read] }, streamFn });
  await agent.prompt('go');
  return agent.state.messages;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === '--memory') {
  // A fresh process: one 400-turn session, its transcript kept, then the memory figures.
  const [, , , name, mode] = process.argv;
  const { memorySize } = name === 'ours' ? await import('../pkg/wasm.js') : { memorySize: () => 0 };
  await session(name, mode, 2); // loads the implementation
  globalThis.gc();
  const wasm0 = memorySize();
  const kept = await session(name, mode, 400);
  globalThis.gc();
  const m = process.memoryUsage();
  console.log(JSON.stringify({ messages: kept.length, rss: m.rss, heap: m.heapUsed, wasmGrowth: memorySize() - wasm0 }));
} else {
  const sizes = [25, 100, 400];
  const MB = (n) => `${(n / 2 ** 20).toFixed(1)} MB`;
  console.log('(F) long session: N turns, each with a 16 KB tool result, transcript kept');
  for (const mode of ['loop', 'Agent']) {
    const perTurn = { ours: [], pi: [] };
    for (const n of sizes) {
      const times = { ours: [], pi: [] };
      // Enough runs for a steady median on a noisy machine (5 at N = 400 gave ratios from 1.9
      // to 2.5 between back-to-back runs).
      const runs = n >= 400 ? 11 : 15;
      for (let i = 0; i < runs + 2; i++) {
        for (const name of i % 2 ? ['ours', 'pi'] : ['pi', 'ours']) {
          const t0 = performance.now();
          await session(name, mode, n);
          if (i >= 2) times[name].push(performance.now() - t0);
        }
      }
      for (const name of ['ours', 'pi']) perTurn[name].push(median(times[name]) / n);
      console.log(`  ${mode.padEnd(5)} N=${String(n).padStart(3)}: ours ${perTurn.ours.at(-1).toFixed(3)} ms/turn, pi ${perTurn.pi.at(-1).toFixed(3)} ms/turn, ratio ${(perTurn.ours.at(-1) / perTurn.pi.at(-1)).toFixed(2)}`);
    }
    const slope = (t) => Math.log((t[2] * sizes[2]) / (t[0] * sizes[0])) / Math.log(sizes[2] / sizes[0]);
    console.log(`  ${mode.padEnd(5)} log-log slope of a run's time, N 25 -> 400: ours ${slope(perTurn.ours).toFixed(2)}, pi ${slope(perTurn.pi).toFixed(2)}`);
    const self = fileURLToPath(import.meta.url);
    // RSS moves by a few MB from process to process: the median of five fresh ones each,
    // the two implementations alternating.
    const samples = { ours: [], pi: [] };
    for (let i = 0; i < 5; i++) {
      for (const name of ['ours', 'pi']) samples[name].push(JSON.parse(execFileSync(process.execPath, ['--expose-gc', self, '--memory', name, mode], { encoding: 'utf8' })));
    }
    const mem = {};
    for (const name of ['ours', 'pi']) mem[name] = samples[name].sort((a, b) => a.rss - b.rss)[2];
    console.log(`  ${mode.padEnd(5)} memory after 400 turns (${mem.ours.messages} messages kept): RSS ours ${MB(mem.ours.rss)}, pi ${MB(mem.pi.rss)}, ratio ${(mem.ours.rss / mem.pi.rss).toFixed(2)}; JS heap ours ${MB(mem.ours.heap)}, pi ${MB(mem.pi.heap)}; wasm memory growth ${MB(mem.ours.wasmGrowth)}`);
  }
}
