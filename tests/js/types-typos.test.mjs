// Mistakes in this package's options, hooks and values are compile errors: tsc must report
// errors on exactly the lines of tests/types/typos/typos.ts that end in a `typo` marker
// comment, and nowhere else (a typo that compiles is a hole in the types; an error on an
// unmarked line is a correct use refused).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers.mjs';
import { STRICT, formatDiagnostics, scratchDir, tsc } from './shared/tsc.mjs';

const program = join(repoRoot, 'tests/types/typos/typos.ts');
const lines = readFileSync(program, 'utf8').split('\n');
const marked = lines.flatMap((text, i) => (/\/\/ typo\s*$/.test(text) ? [i + 1] : []));

let scratch;
before(() => {
  scratch = scratchDir('typos');
});
after(() => scratch?.cleanup());

function assertErrorsOnMarkedLines(diagnostics) {
  const elsewhere = diagnostics.filter((d) => d.file !== relative(repoRoot, program));
  assert.deepEqual(elsewhere, [], `errors outside the typo program:\n${formatDiagnostics(elsewhere)}`);
  const failing = new Set(diagnostics.map((d) => d.line));
  const missed = marked.filter((line) => !failing.has(line));
  assert.deepEqual(
    missed.map((line) => `${line}: ${lines[line - 1].trim()}`),
    [],
    'these typos compile',
  );
  const unexpected = diagnostics.filter((d) => !marked.includes(d.line));
  assert.deepEqual(unexpected, [], `errors on lines without a typo:\n${formatDiagnostics(unexpected)}`);
}

test('the typo program marks enough typos to mean something', () => {
  assert.ok(marked.length >= 40, `only ${marked.length} marked lines`);
});

test('NodeNext, strict: tsc fails on exactly the marked lines', async () => {
  const diagnostics = await tsc(scratch.dir, 'nodenext', { ...STRICT, module: 'NodeNext', moduleResolution: 'NodeNext' }, [program]);
  assertErrorsOnMarkedLines(diagnostics);
});

test('Bundler, strict, exactOptionalPropertyTypes: tsc fails on exactly the marked lines', async () => {
  const options = { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler', exactOptionalPropertyTypes: true };
  const diagnostics = await tsc(scratch.dir, 'bundler', options, [program]);
  assertErrorsOnMarkedLines(diagnostics);
});
