// The README and docs/ run. Every fenced code block in README.md and docs/*.md is either
// checked here or marked as a fragment in the text right before it (the word "fragment" in
// the line before the block). A block is checked by the HTML comment on the line before it:
//
//   <!-- test: node NAME -->       run as an ES module in Node (NAME picks its checks in
//                                  shared/readme-runs.mjs), against a local scripted model server
//   <!-- test: typecheck -->       compiled by tsc, strict, against this package's and pi's types
//   <!-- test: same-as PATH -->    the block is the file PATH of a consumer project, byte for
//                                  byte (tests/consumers/ builds and runs those with real tools)
//   <!-- test: sh -->              each command is an npm script of this package, installs it
//                                  (by name or as the tarball `npm run tarball` writes), or is
//                                  the `git clone` and `cd` of the install steps
//
// docs/api/ is generated from the type declarations (tests/js/api-docs.test.mjs keeps it
// current); its blocks are signatures, not programs, and are not run. Every relative link in
// these files must name a file that exists, and a `#anchor` one of its headings.
//
// Blocks are written to test-results/readme/, inside this repository, so `pi-agent-wasm`
// resolves to the built package by name (a package may import itself) and pi's packages come
// from the devDependencies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync, rmSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { execFile } from 'node:child_process';
import { repoRoot } from './helpers.mjs';
import { runReadmeNode } from './shared/readme-runs.mjs';

const FILES = ['README.md', ...readdirSync(join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const TEXT = Object.fromEntries(FILES.map((f) => [f, readFileSync(join(repoRoot, f), 'utf8')]));
const dir = join(repoRoot, 'test-results/readme');

/** The README's fenced blocks: language, code, line, the directive or fragment mark. */
function blocks(file, text) {
  const lines = text.split('\n');
  const found = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\S*)/);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    assert.ok(end > i, `${file} line ${i + 1}: a code block is never closed`);
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const before = lines[k] ?? '';
    const directive = before.match(/^<!-- test: (.+?) -->$/)?.[1];
    found.push({
      file,
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

const all = FILES.flatMap((f) => blocks(f, TEXT[f]));

test('README and docs: every code block is checked or marked as a fragment right before it', () => {
  const loose = all.filter((b) => !b.directive && !b.fragment).map((b) => `${b.file} line ${b.line} (${b.lang || 'no language'})`);
  assert.deepEqual(loose, [], 'blocks neither tested nor marked as a fragment');
  assert.ok(all.filter((b) => b.directive).length >= 20, 'the docs have fewer tested blocks than expected');
  for (const doc of ['README.md', 'docs/migrating-from-pi.md', 'docs/api.md', 'docs/checkpoints-and-sessions.md', 'docs/workers.md', 'docs/providers.md', 'docs/differences-and-limits.md', 'docs/errors.md', 'docs/developing.md']) {
    assert.ok(FILES.includes(doc), `${doc} is missing`);
  }
});

test('README: at most 300 lines', () => {
  const lines = TEXT['README.md'].split('\n').length - 1;
  assert.ok(lines <= 300, `README.md has ${lines} lines`);
});

/** GitHub's anchor for a heading. */
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
const anchors = (text) => new Set(text.split('\n').filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#+ /, ''))));

test('README and docs: every relative link names a file that exists, and an anchor one of its headings', () => {
  const broken = [];
  for (const file of FILES) {
    const text = TEXT[file].replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue;
      const [path, anchor] = target.split('#');
      const resolved = path ? join(dirname(join(repoRoot, file)), path) : join(repoRoot, file);
      if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} (no such file)`);
        continue;
      }
      if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md')) {
        const heads = anchors(readFileSync(resolved, 'utf8'));
        if (!heads.has(anchor)) broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(repoRoot, resolved)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

const scripts = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).scripts;
const { name: NAME, version: VERSION } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

for (const block of all.filter((b) => b.directive)) {
  const [kind, ...args] = block.directive.split(/\s+/);
  const title = `${block.file} line ${block.line}: ${block.directive}`;
  if (kind === 'sh') {
    test(title, () => {
      for (const raw of block.code.split('\n')) {
        const command = raw.replace(/\s+#.*$/, '').trim();
        if (!command || command.startsWith('#')) continue;
        const npm = command.match(/^npm (?:run )?(\S+)(?: -- .*)?$/);
        const install = command.match(/^npm install (.+)$/);
        if (/^(git clone \S+( \S+)?|cd \S+)$/.test(command)) {
          // The install-from-a-checkout steps; tests/js/pack.test.mjs installs the tarball.
        } else if (install) {
          const tarball = new RegExp(`(^|/)${NAME}-${VERSION.replace(/\./g, '\\.')}\\.tgz$`);
          assert.ok(install[1].split(/\s+/).some((a) => a === NAME || tarball.test(a)), `${command}: installs something other than ${NAME} ${VERSION}`);
        } else if (npm && npm[1] !== 'install') {
          assert.ok(npm[1] in scripts, `${command}: package.json has no script "${npm[1]}"`);
        } else {
          assert.fail(`${block.file} line ${block.line}: "${command}" is neither an npm script nor an install`);
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
      const sub = join(dir, `typecheck-${block.file.replace(/\W/g, '_')}-${block.line}`);
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
          error ? reject(new Error(`tsc on ${block.file} line ${block.line}:\n${out}`)) : resolve());
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
