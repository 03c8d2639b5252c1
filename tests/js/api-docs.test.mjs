// The API reference, docs/api/, is generated from the type declarations by
// scripts/api-docs.mjs (npm run api-docs). These tests run the generator into a temporary
// directory: it must report nothing (every export documented, no TypeDoc warning), and its
// output must be the committed docs/api/, file for file. A declaration is checked without a
// build: the generator reads src/js/*.d.ts and makes models.d.ts from node_modules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers.mjs';
import { buildApiDocs } from '../../scripts/api-docs.mjs';

const committed = join(repoRoot, 'docs', 'api');

/** The files under `dir`, as sorted paths relative to it. */
function files(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path).split('\\').join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** Runs the generator into a fresh temporary directory; `fn` gets the result and the directory. */
async function generated(fn, options) {
  const out = join(mkdtempSync(join(tmpdir(), 'api-docs-test-')), 'api');
  try {
    return await fn(await buildApiDocs(out, options), out);
  } finally {
    rmSync(join(out, '..'), { recursive: true, force: true });
  }
}

test('api-docs: every export is documented and TypeDoc warns about nothing; docs/api/ is current', async () => {
  await generated(({ problems, counts }, out) => {
    assert.deepEqual(problems, [], `scripts/api-docs.mjs reported problems (document the exports it names):\n${problems.join('\n')}`);
    assert.deepEqual(
      counts.map(([name]) => name).sort(),
      ['pi-agent-wasm', 'pi-agent-wasm/cassette', 'pi-agent-wasm/cloudflare', 'pi-agent-wasm/models'],
      'the reference documents the four entries',
    );
    for (const [name, count] of counts) assert.ok(count > 0, `${name} documents no export`);

    const fix = 'docs/api/ is not what the generator makes from the declarations now: run `npm run api-docs` and commit docs/api/';
    const want = files(out);
    const have = files(committed);
    const added = want.filter((f) => !have.includes(f));
    const removed = have.filter((f) => !want.includes(f));
    assert.deepEqual({ missing: added, stale: removed }, { missing: [], stale: [] }, `${fix} (files differ)`);
    const changed = want.filter((f) => readFileSync(join(out, f), 'utf8') !== readFileSync(join(committed, f), 'utf8'));
    assert.deepEqual(changed, [], `${fix} (these pages changed)`);
  });
});

test('api-docs: an export without a doc comment is reported, and nothing is written', async () => {
  const edit = (file, text) => (file === 'index.d.ts' ? text.replace(/\/\*\*(?:(?!\*\/)[\s\S])*\*\/\s*(export declare function ready\(\))/, '$1') : text);
  await generated(({ problems }, out) => {
    assert.ok(
      problems.some((p) => p.includes('pi-agent-wasm.ready')),
      `removing ready()'s comment was not reported:\n${problems.join('\n')}`,
    );
    assert.throws(() => statSync(out), { code: 'ENOENT' }, 'the generator wrote output despite the problems');
  }, { edit, quiet: true });
});
