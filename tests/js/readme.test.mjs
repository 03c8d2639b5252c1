// The README runs. Every fenced code block in README.md is either checked here or marked as
// a fragment in the text right before it (the word "fragment" in the line before the
// block). A block is checked by the HTML comment on the line before it:
//
//   <!-- test: node NAME -->       run as an ES module in Node (NAME picks its checks below),
//                                  against a local scripted model server
//   <!-- test: typecheck -->       compiled by tsc, strict, against this package's and pi's types
//   <!-- test: same-as PATH -->    the block is the file PATH of a consumer project, byte for
//                                  byte (tests/consumers/ builds and runs those with real tools)
//   <!-- test: sh -->              each command is an npm script of this package, or installs it
//
// Blocks are written to test-results/readme/, inside this repository, so `pi-agent-wasm`
// resolves to the built package by name (a package may import itself) and pi's packages come
// from the devDependencies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { repoRoot } from './helpers.mjs';
import { runReadmeNode } from './shared/readme-runs.mjs';

const README = readFileSync(join(repoRoot, 'README.md'), 'utf8');
const dir = join(repoRoot, 'test-results/readme');

/** The README's fenced blocks: language, code, line, the directive or fragment mark. */
function blocks(text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\S*)/);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    assert.ok(end > i, `README line ${i + 1}: a code block is never closed`);
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const before = lines[k] ?? '';
    const directive = before.match(/^<!-- test: (.+?) -->$/)?.[1];
    found.push({
      lang: open[1],
      code: lines.slice(i + 1, end).join('\n') + '\n',
      line: i + 1,
      directive,
      fragment: !directive && /\bfragment\b/i.test(before),
    });
    i = end;
  }
  return found;
}

const all = blocks(README);

test('README: every code block is checked or marked as a fragment right before it', () => {
  const loose = all.filter((b) => !b.directive && !b.fragment).map((b) => `line ${b.line} (${b.lang || 'no language'})`);
  assert.deepEqual(loose, [], 'blocks neither tested nor marked as a fragment');
  assert.ok(all.filter((b) => b.directive).length >= 10, 'the README has fewer tested blocks than expected');
});

const scripts = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts;
const NAME = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).name;

for (const block of all.filter((b) => b.directive)) {
  const [kind, ...args] = block.directive.split(/\s+/);
  const title = `README line ${block.line}: ${block.directive}`;
  if (kind === 'sh') {
    test(title, () => {
      for (const raw of block.code.split('\n')) {
        const command = raw.replace(/\s+#.*$/, '').trim();
        if (!command || command.startsWith('#')) continue;
        const npm = command.match(/^npm (?:run )?(\S+)(?: -- .*)?$/);
        const install = command.match(/^npm install (.+)$/);
        if (install) {
          assert.ok(install[1].split(/\s+/).includes(NAME), `${command}: installs something other than ${NAME}`);
        } else if (npm && npm[1] !== 'install') {
          assert.ok(npm[1] in scripts, `${command}: package.json has no script "${npm[1]}"`);
        } else {
          assert.fail(`README line ${block.line}: "${command}" is neither an npm script nor an install`);
        }
      }
    });
  } else if (kind === 'same-as') {
    test(title, () => {
      assert.equal(block.code, readFileSync(join(repoRoot, args[0]), 'utf8'), `${args[0]} and the README differ`);
    });
  } else if (kind === 'typecheck') {
    test(title, async () => {
      const ext = block.lang === 'ts' ? 'ts' : 'mjs';
      const sub = join(dir, `typecheck-${block.line}`);
      rmSync(sub, { recursive: true, force: true });
      mkdirSync(sub, { recursive: true });
      writeFileSync(join(sub, `example.${ext}`), block.code);
      writeFileSync(
        join(sub, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', strict: true, noEmit: true,
            allowJs: true, checkJs: true, skipLibCheck: false, lib: ['ES2023', 'DOM'], types: ['node'],
          },
          files: [`example.${ext}`],
        }),
      );
      await new Promise((resolve, reject) => {
        execFile(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', sub], (error, out) =>
          error ? reject(new Error(`tsc on README line ${block.line}:\n${out}`)) : resolve());
      });
    });
  } else if (kind === 'node') {
    test(title, async () => {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${args[0]}.mjs`);
      writeFileSync(file, block.code);
      await runReadmeNode(args[0], file);
    });
  } else {
    test(title, () => assert.fail(`unknown README test directive "${kind}"`));
  }
}
