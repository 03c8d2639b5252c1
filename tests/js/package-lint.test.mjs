// The packed tarball, linted as its consumers' tools will see it: publint (package.json
// fields, the exports map, files the tarball lacks) and @arethetypeswrong/cli (does each
// entry's types resolve, in every module resolution mode, to declarations that match the
// JavaScript). Both run on the output of `npm pack`, not on the work tree.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './helpers.mjs';

const run = promisify(execFile);
const bin = (name) => join(repoRoot, 'node_modules/.bin', name);

let dir;
let tarball;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'pi-agent-wasm-lint-'));
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: repoRoot, encoding: 'utf8' }),
  );
  tarball = join(dir, info.filename);
});
after(() => dir && rmSync(dir, { recursive: true, force: true }));

/** Runs a linter; resolves to its output, or fails the test with it when it exits non-zero. */
async function lint(command, args) {
  try {
    const { stdout, stderr } = await run(command, args, { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    return stdout + stderr;
  } catch (error) {
    assert.fail(`${command} ${args.join(' ')} failed (exit ${error.code}):\n${error.stdout}${error.stderr}`);
  }
}

test('publint: no errors or warnings in the packed package', async () => {
  // --strict: warnings fail too (suggestions are only printed).
  const out = await lint(bin('publint'), ['run', tarball, '--strict']);
  assert.match(out, /All good!|Suggestions:/);
});

test('arethetypeswrong: every entry resolves to matching types', async () => {
  // The package is ESM only ("type": "module"; the entries use import.meta). CommonJS reaches
  // it through require(esm) (Node >= 20.19, the package's engines; tests/consumers/node-cjs)
  // or import(), so the one rule ignored is "a require() resolves to an ESM file". Every
  // other rule, in every resolution mode (node10 too: `typesVersions` maps the models
  // subpath there), must pass.
  const out = await lint(bin('attw'), [tarball, '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'ascii']);
  assert.match(out, /"pi-agent-wasm"/, 'attw did not report on the root entry');
});
