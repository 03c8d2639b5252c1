// The size report's budget check must be able to fail the build, not only print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';

const report = (args) =>
  spawnSync(process.execPath, [join(repoRoot, 'scripts/size-report.mjs'), ...args], { encoding: 'utf8' });

test('the size report passes within the budget and prints raw, gzip and brotli sizes', () => {
  const r = report([]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /\.wasm\s+raw [\d.]+ KB\s+gzip [\d.]+ KB\s+brotli [\d.]+ KB/);
  assert.match(r.stdout, /npm package\s+packed [\d.]+ KB/);
});

test('the size report exits non-zero when the gzipped .wasm exceeds the budget', () => {
  const r = report(['--budget', '1024']);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /over the budget of 1024 bytes/);
});
