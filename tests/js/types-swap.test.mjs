// The swap: tests/types/swap/pi-program.ts is a strict program written against
// @earendil-works/pi-agent-core 1.6.0. It must compile as it is (so it is real pi code), and a
// copy with only the pi-agent-core module name changed to 'pi-agent-wasm' must compile too,
// under each compiler setup a pi user may have. Both files go into one program per setup (the
// declaration files are checked once); errors are told apart by file.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers.mjs';
import { STRICT, formatDiagnostics, scratchDir, tsc } from './shared/tsc.mjs';

const PI = "'@earendil-works/pi-agent-core'";
const OURS = "'pi-agent-wasm'";
const piProgram = join(repoRoot, 'tests/types/swap/pi-program.ts');
const compat = join(repoRoot, 'tests/types/compat.ts');

let scratch;
let wasmProgram;
before(() => {
  scratch = scratchDir('swap');
  const source = readFileSync(piProgram, 'utf8');
  // The module name appears in the import and in the `declare module` of the custom message.
  assert.equal(source.split(PI).length - 1, 2, 'pi-program.ts names pi-agent-core in one import and one declare module');
  wasmProgram = join(scratch.dir, 'wasm-program.ts');
  writeFileSync(wasmProgram, source.replaceAll(PI, OURS));
});
after(() => scratch?.cleanup());

const rel = (file) => relative(repoRoot, file);

/** Fails naming each file of the program that has errors. */
function assertClean(diagnostics, files) {
  for (const file of files) {
    const own = diagnostics.filter((d) => d.file === rel(file));
    assert.deepEqual(own, [], `${rel(file)} does not compile:\n${formatDiagnostics(own)}`);
  }
  assert.deepEqual(diagnostics, [], `errors elsewhere:\n${formatDiagnostics(diagnostics)}`);
}

test('moduleResolution Bundler, strict: the pi program and its swapped copy compile', async () => {
  const diagnostics = await tsc(scratch.dir, 'bundler', { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler' }, [piProgram, wasmProgram]);
  assertClean(diagnostics, [piProgram, wasmProgram]);
});

test('exactOptionalPropertyTypes (as in strictest configs): both compile and the types still match pi', async () => {
  const options = { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler', exactOptionalPropertyTypes: true };
  const diagnostics = await tsc(scratch.dir, 'exact', options, [piProgram, wasmProgram, compat]);
  assertClean(diagnostics, [piProgram, wasmProgram, compat]);
});

test('moduleResolution NodeNext, strict: both compile; only pi-ai 1.6.0 itself fails there', async () => {
  const diagnostics = await tsc(scratch.dir, 'nodenext', { ...STRICT, module: 'NodeNext', moduleResolution: 'NodeNext' }, [piProgram, wasmProgram]);
  // pi-ai 1.6.0's own declaration files import JSON without `with { type: "json" }`, which
  // NodeNext refuses (TS1543) when declaration files are checked. That is pi-ai's, whatever
  // the import; anything else is ours to fix.
  const piAiOwn = (d) => d.code === 'TS1543' && d.file.startsWith('node_modules/@earendil-works/pi-ai/dist/');
  assertClean(diagnostics.filter((d) => !piAiOwn(d)), [piProgram, wasmProgram]);
});
