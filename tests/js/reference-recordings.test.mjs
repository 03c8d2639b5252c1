// The reference recordings (tests/fixtures/reference/*.json) are pi 1.6.0's output, written by
// the recorder tests/fixtures/reference/generate.mjs; the native tests compare ours against
// them, so a fixture without its recording, or a recording the recorder would no longer
// write, is a comparison that silently does not happen. Checked here: every wire transcript
// of tests/fixtures/openai-completions has its recording, and the recorder run today (in a
// copy of tests/fixtures, so nothing in the checkout is rewritten) writes every recording
// byte for byte as committed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';

const fixtures = join(repoRoot, 'tests/fixtures');
const reference = join(fixtures, 'reference');
const jsonFiles = (dir) => readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

/** Where two recordings (arrays of cases, named by `file` or `name`) differ, case by case. */
function differingCases(committed, current) {
  let a;
  let b;
  try {
    a = JSON.parse(committed);
    b = JSON.parse(current);
  } catch {
    return ['(not JSON)'];
  }
  if (!Array.isArray(a) || !Array.isArray(b)) return ['(the whole file)'];
  const byName = (cases) => new Map(cases.map((c, i) => [c?.file ?? c?.name ?? `#${i}`, JSON.stringify(c)]));
  const [was, now] = [byName(a), byName(b)];
  const out = [];
  for (const [name, text] of now) {
    if (!was.has(name)) out.push(`${name} (not recorded)`);
    else if (was.get(name) !== text) out.push(name);
  }
  for (const name of was.keys()) if (!now.has(name)) out.push(`${name} (no longer written)`);
  return out.length > 0 ? out : ['(order or formatting)'];
}

test('every openai-completions wire transcript has exactly one recording, none is left over', () => {
  const transcripts = readdirSync(join(fixtures, 'openai-completions')).filter((f) => f.endsWith('.sse')).sort();
  const recorded = JSON.parse(readFileSync(join(reference, 'openai-completions.json'), 'utf8')).map((c) => c.file);
  assert.ok(transcripts.length > 0);
  assert.deepEqual(transcripts.filter((f) => !recorded.includes(f)), [], 'transcripts without a recording (run the recorder)');
  assert.deepEqual(recorded.filter((f) => !transcripts.includes(f)), [], 'recordings of no transcript');
  // One each, in the recorder's order (it reads the directory sorted).
  assert.deepEqual(recorded, transcripts);
});

test('the recorder run today writes every reference recording as committed', (t) => {
  const work = mkdtempSync(join(tmpdir(), 'pi-agent-wasm-recorder-'));
  try {
    // The recorder writes next to itself and reads the fixtures beside it; pi's packages are
    // found through node_modules above it.
    cpSync(fixtures, join(work, 'tests/fixtures'), { recursive: true });
    symlinkSync(join(repoRoot, 'node_modules'), join(work, 'node_modules'), 'dir');
    const written = join(work, 'tests/fixtures/reference');
    // Without the committed ones, so a recording it no longer writes is missed, not kept.
    for (const file of jsonFiles(written)) rmSync(join(written, file));
    const log = execFileSync(process.execPath, [join(work, 'tests/fixtures/reference/generate.mjs')], { cwd: work, encoding: 'utf8' });
    t.diagnostic(log.trim().replaceAll('\n', '; '));
    assert.deepEqual(jsonFiles(written), jsonFiles(reference), 'the recordings the recorder writes are the ones committed');
    const stale = [];
    for (const file of jsonFiles(reference)) {
      const committed = readFileSync(join(reference, file), 'utf8');
      const current = readFileSync(join(written, file), 'utf8');
      if (committed !== current) stale.push(`${file}: ${differingCases(committed, current).join(', ')}`);
    }
    assert.deepEqual(stale, [], 'recordings that differ from what the recorder writes today (run node tests/fixtures/reference/generate.mjs)');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
