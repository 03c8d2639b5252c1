// Benchmark (E): loop-only cold start. Each sample is a fresh Node process that loads the
// package and runs one turn of the loop with a JS stream function (no provider, no network);
// the time is `performance.now()` at `agent_end`, from the process's start, so Node's own
// start-up (the same for both) is included. Two ways to load: the installed packages as they
// are, and one esbuild bundle of the app per implementation (minified, as a Worker or
// serverless function ships). This package against pi-agent-core 1.6.0, alternating, medians.
// Run: node bench/cold-start.mjs [samples]   (after npm run build). Never asserted by tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const SAMPLES = Number(process.argv[2] ?? 15);
const root = fileURLToPath(new URL('..', import.meta.url));

/** The app: one turn whose stream function answers "hi". */
const app = (core, ai) => `
import { runAgentLoop } from ${JSON.stringify(core)};
import { createAssistantMessageEventStream } from ${JSON.stringify(ai)};
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'm', api: 'bench', provider: 'bench' };
const streamFn = () => {
  const s = createAssistantMessageEventStream();
  const message = { role: 'assistant', content: [{ type: 'text', text: 'hi' }], api: 'bench', provider: 'bench', model: 'm', usage, stopReason: 'stop', timestamp: Date.now() };
  queueMicrotask(() => { s.push({ type: 'start', partial: message }); s.push({ type: 'done', reason: 'stop', message }); });
  return s;
};
let end = false;
await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [] }, { model, convertToLlm: (m) => m }, (e) => { if (e.type === 'agent_end') end = true; }, undefined, streamFn);
if (!end) throw new Error('no agent_end');
console.log(performance.now());
`;

const dir = mkdtempSync(join(tmpdir(), 'cold-start-'));
const entries = {
  ours: app('pi-agent-wasm', 'pi-agent-wasm'),
  pi: app('@earendil-works/pi-agent-core', '@earendil-works/pi-ai'),
};
const files = { installed: {}, bundled: {} };
for (const [name, code] of Object.entries(entries)) {
  // Installed: the entry sits in the repo, so the packages resolve as a user's app would.
  const entry = join(root, `bench/.cold-${name}.mjs`);
  writeFileSync(entry, code);
  files.installed[name] = entry;
  const out = join(dir, `${name}.mjs`);
  await build({ entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'node', outfile: out, logLevel: 'error' });
  files.bundled[name] = out;
}

const sample = (file) => Number(execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  console.log(`(E) loop-only cold start: ${SAMPLES} fresh processes each, ms from process start to agent_end`);
  for (const [mode, byName] of Object.entries(files)) {
    const runs = { ours: [], pi: [] };
    for (const f of Object.values(byName)) sample(f); // warm the file cache
    for (let i = 0; i < SAMPLES; i++) {
      for (const name of i % 2 ? ['ours', 'pi'] : ['pi', 'ours']) runs[name].push(sample(byName[name]));
    }
    const [o, p] = [median(runs.ours), median(runs.pi)];
    console.log(`  ${mode.padEnd(9)} ours ${o.toFixed(1)} ms, pi ${p.toFixed(1)} ms, ratio ${(o / p).toFixed(2)} (goal <= 1.0)`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  for (const f of Object.values(files.installed)) rmSync(f, { force: true });
}
