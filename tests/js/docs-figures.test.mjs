// No figure in the README or docs/ can go stale: each one is checked here against what
// measures it. Sizes against the build's own report (target/size-report.json, written by every
// build), speeds against the recorded benchmark run (bench/results.json), counts against the
// thing counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';
import { records, comparisonTable } from '../../scripts/figures.mjs';

const read = (f) => readFileSync(join(repoRoot, f), 'utf8');
const { size, bench } = records(repoRoot);

test("README's comparison with pi is the table the size report and the recorded bench run make", () => {
  const table = comparisonTable({ size, bench }).join('\n');
  assert.ok(read('README.md').includes(table), `README.md must hold exactly this table (node scripts/figures.mjs prints it):\n${table}`);
});

test('bench/results.json records a whole run: every ratio a positive number, and where it was measured', () => {
  for (const key of ['perEventLoopOverhead', 'streamedArguments1MB', 'longSessionPerTurn', 'sseThroughput', 'coldStartInstalled', 'coldStartBundled', 'workerdCpuPerRequest']) {
    assert.ok(Number.isFinite(bench[key]) && bench[key] > 0, `${key}: ${bench[key]}`);
  }
  assert.match(bench.commit, /^[0-9a-f]{7,}/);
  assert.match(bench.date, /^\d{4}-\d{2}-\d{2}$/);
});

test("the model catalogue's counts in docs/providers.md are the built catalogue's", async () => {
  const models = await import('pi-agent-wasm/models');
  const providers = models.getProviders();
  const count = providers.reduce((n, p) => n + models.getModels(p).length, 0);
  assert.equal(count, size.models);
  const phrase = `${count.toLocaleString('en-US')} models of ${providers.length} providers`;
  assert.ok(read('docs/providers.md').includes(phrase), `docs/providers.md must say "${phrase}"`);
});

test('the number of fuzz targets in docs/developing.md is the number in fuzz/', () => {
  const targets = readdirSync(join(repoRoot, 'fuzz/fuzz_targets')).filter((f) => f.endsWith('.rs')).length;
  const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];
  const said = read('docs/developing.md').match(/the (\w+) `cargo fuzz` targets/)?.[1];
  assert.equal(said, words[targets] ?? String(targets), `fuzz/fuzz_targets holds ${targets} targets`);
});

/** The value of `const NAME: T = EXPR;` (Rust) or `const NAME = EXPR;` (JS) in a source file,
 * where EXPR is digits, underscores and `*`. */
function constant(file, name) {
  const m = read(file).match(new RegExp(`const ${name}(?::[^=]+)? = ([\\d_ *]+);`));
  assert.ok(m, `${file} has no const ${name}`);
  return m[1].split('*').reduce((p, f) => p * Number(f.trim().replace(/_/g, '')), 1);
}

test('the limits the docs name are the constants the code uses', () => {
  const limits = read('docs/differences-and-limits.md');
  const depth = constant('src/json.rs', 'MAX_DEPTH');
  assert.ok(limits.includes(`**Nesting: ${depth.toLocaleString('en-US')} levels**`), `nesting limit ${depth}`);
  assert.ok(limits.includes(`JSON nested deeper than ${depth} levels (the limit)`), 'the error text quoted');
  assert.match(read('src/agent/validate/check.rs'), /const MAX_WALK: usize = crate::json::MAX_DEPTH;/);
  assert.ok(limits.includes(`**Schema walks: ${depth.toLocaleString('en-US')} levels.**`), `schema walk ${depth}`);
  const providers = read('docs/providers.md');
  assert.equal(constant('src/provider/driver.rs', 'MAX_EVENT_BYTES'), 64 * 1024 * 1024);
  assert.ok(providers.includes('(default 64 MiB'), 'maxEventBytes default');
  assert.equal(constant('src/provider/driver.rs', 'MAX_BODY_READ'), 1024 * 1024);
  assert.ok(providers.includes('only the first 1 MiB is read'), 'body read bound');
  assert.equal(constant('src/js/sessions.js', 'MAX_BODY'), 256 * 1024);
  assert.ok(read('docs/checkpoints-and-sessions.md').includes('413 body over\n  256 KB') || read('docs/checkpoints-and-sessions.md').includes('413 body over 256 KB'), 'sessions body bound');
  assert.equal(constant('www/server.mjs', 'MAX_BODY'), 1024 * 1024);
  assert.ok(read('docs/developing.md').includes('Request bodies are limited to 1 MiB (413)'), 'demo server body bound');
});
