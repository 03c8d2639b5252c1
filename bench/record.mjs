// Runs the benchmarks (loop.mjs, long-session.mjs, provider.mjs, cold-start.mjs, workerd-cpu.mjs) and records the figures
// the README quotes in bench/results.json, with the commit, date and machine they were
// measured on. tests/js/docs-figures.test.mjs checks the README against that file, so a
// figure there is always one that a recorded run printed.
// Run: npm run bench -- --record   (after npm run build; a few minutes).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (file) => {
  const out = execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
  process.stdout.write(out);
  return out;
};
const pick = (text, re, what) => {
  const m = text.match(re);
  if (!m) throw new Error(`bench/record.mjs: no ${what} in the output`);
  return Number(m[1]);
};

const loop = run('bench/loop.mjs');
const long = run('bench/long-session.mjs');
const provider = run('bench/provider.mjs');
const cold = run('bench/cold-start.mjs');
const workerd = run('bench/workerd-cpu.mjs');
const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'Cargo.toml', 'Cargo.lock', ':(exclude)src/**/*.d.ts'], { cwd: root, encoding: 'utf8' }).trim() !== '';
const results = {
  commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim() + (dirty ? ' (with uncommitted changes to src/)' : ''),
  date: new Date().toISOString().slice(0, 10),
  machine: `${cpus().length} cores, Node ${process.version}`,
  // Each a ratio of this package to pi 1.6.0 in the same process, implementations alternating.
  perEventLoopOverhead: pick(loop, /ratio ours\/pi per event: ([\d.]+)/, '(A) ratio'),
  streamedArguments1MB: pick(loop, /1000000 B:.*ratio ([\d.]+)/, '(B) 1 MB ratio'),
  longSessionPerTurn: pick(long, /loop +N=400:.*ratio ([\d.]+)/, '(F) loop ratio'),
  longSessionAgentPerTurn: pick(long, /Agent +N=400:.*ratio ([\d.]+)/, '(F) Agent ratio'),
  longSessionAgentRss: pick(long, /Agent +memory.*RSS.*?ratio ([\d.]+)/, '(F) Agent RSS ratio'),
  sseThroughput: pick(provider, /throughput ours\/pi: ([\d.]+)x/, '(C) throughput ratio'),
  coldStartInstalled: pick(cold, /installed\s+ours.*ratio ([\d.]+)/, '(E) installed ratio'),
  coldStartBundled: pick(cold, /bundled\s+ours.*ratio ([\d.]+)/, '(E) bundled ratio'),
  workerdCpuPerRequest: pick(workerd, /ours [\d.]+ ms, pi [\d.]+ ms, ratio ([\d.]+)/, '(W) ratio'),
};
writeFileSync(new URL('results.json', import.meta.url), JSON.stringify(results, null, 2) + '\n');
console.log('recorded in bench/results.json:', results);
