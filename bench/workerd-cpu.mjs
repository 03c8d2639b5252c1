// (W) The CPU workerd spends per agent request: one prompt, one tool call, two model requests
// to an OpenAI-compatible server on 127.0.0.1 (the tool scenario of
// tests/js/shared/agent-scenario.mjs), for a Worker on this package and the same Worker on
// pi 1.6.0 (pi-agent-core's loop, pi-ai's `streamSimple`), each bundled by esbuild and run in
// Miniflare's workerd. CPU is what Workers bills: it is read from the workerd process
// (user + system time in /proc, Linux), over batches of requests alternating between the
// two, after warm-up. Run: node bench/workerd-cpu.mjs (after npm run build). Timings are
// reported, never asserted.
import { readFileSync, readdirSync, mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { startScenarioServer } from '../tests/js/shared/openai-server.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const BATCH = 50;
const BATCHES = 9;

const WORKERS = {
  ours: `import * as core from 'pi-agent-wasm';
const pkg = core;`,
  pi: `import * as core from '@earendil-works/pi-agent-core';
import { streamSimple } from '@earendil-works/pi-ai/api/openai-completions';
const pkg = { ...core, streamSimple };`,
};

/** Bundles the Worker of `name` into a new folder; returns the folder. */
async function bundle(name) {
  // Inside the repository, so that `pi-agent-wasm` resolves to this package (self-reference).
  const dir = join(root, 'target/bench-workerd', name);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(root, 'tests/js/shared/agent-scenario.mjs'), join(dir, 'agent-scenario.mjs'));
  writeFileSync(join(dir, 'entry.mjs'), `${WORKERS[name]}
import { runToolScenario } from './agent-scenario.mjs';
export default {
  async fetch(request) {
    const llm = new URL(request.url).searchParams.get('llm');
    return Response.json(await runToolScenario(pkg, llm));
  },
};
`);
  await build({
    entryPoints: [join(dir, 'entry.mjs')],
    outfile: join(dir, 'out/index.js'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser', 'import'],
    mainFields: ['module', 'main'],
    loader: { '.wasm': 'copy' },
    external: ['node:*'],
    minify: true,
    logLevel: 'silent',
  });
  return join(dir, 'out');
}

/** The workerd processes this process started, by pid. */
function workerdPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.includes('(workerd)')) pids.push(Number(entry));
    } catch {
      // The process ended.
    }
  }
  return pids;
}

/** User + system CPU of `pid`, in ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime at 100 Hz
}

const server = await startScenarioServer('openai-completions');
const llm = server.baseUrl;
const runs = {};
for (const name of Object.keys(WORKERS)) {
  const out = await bundle(name);
  const before = new Set(workerdPids());
  const mf = new Miniflare({
    scriptPath: join(out, 'index.js'),
    modules: true,
    modulesRoot: out,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2026-04-26',
    compatibilityFlags: ['nodejs_compat'],
  });
  await mf.ready;
  const pid = workerdPids().find((p) => !before.has(p));
  const first = await (await mf.dispatchFetch(`http://w/?llm=${encodeURIComponent(llm)}`)).json();
  if (first.answer !== 'The answer is 391 — fertig ✓') throw new Error(`${name}: the scenario answered ${JSON.stringify(first)}`);
  runs[name] = { mf, pid, perRequest: [] };
}

const request = (name) => runs[name].mf.dispatchFetch(`http://w/?llm=${encodeURIComponent(llm)}`).then((r) => r.json());
// Warm-up, then alternating batches.
for (const name of Object.keys(runs)) for (let i = 0; i < BATCH; i++) await request(name);
for (let b = 0; b < BATCHES; b++) {
  for (const name of b % 2 ? ['pi', 'ours'] : ['ours', 'pi']) {
    const { pid } = runs[name];
    const t0 = cpuMs(pid);
    for (let i = 0; i < BATCH; i++) await request(name);
    runs[name].perRequest.push((cpuMs(pid) - t0) / BATCH);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ours = median(runs.ours.perRequest);
const pi = median(runs.pi.perRequest);
console.log('(W) workerd CPU per agent request (one prompt, one tool call, two model requests), Miniflare');
console.log(`  ours ${ours.toFixed(2)} ms, pi ${pi.toFixed(2)} ms, ratio ${(ours / pi).toFixed(2)} (median of ${BATCHES} batches of ${BATCH}; ours ${runs.ours.perRequest.map((x) => x.toFixed(2)).join(' ')}; pi ${runs.pi.perRequest.map((x) => x.toFixed(2)).join(' ')})`);
if (process.argv.includes('--json')) console.log(JSON.stringify({ workerdCpuOurs: ours, workerdCpuPi: pi, workerdCpuRatio: ours / pi }));
for (const { mf } of Object.values(runs)) await mf.dispose();
await server.close();
