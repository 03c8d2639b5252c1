// Pack-and-install: the tarball ships the .wasm and every entry, and a fresh project can
// import the package by name from Node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packAndInstall } from './helpers.mjs';
import { getModel, getProviders, OPENAI_MODELS } from 'pi-agent-wasm/models';

let installed;
before(async () => {
  installed = await packAndInstall();
});
after(async () => installed?.cleanup());

test('the tarball lists the .wasm, the glue, every entry shim and the types', () => {
  for (const f of [
    'package.json',
    'pkg/pi_agent_wasm_bg.wasm',
    'pkg/pi_agent_wasm.js',
    'pkg/api.js',
    'pkg/browser.js',
    'pkg/node.js',
    'pkg/workerd.js',
    'pkg/index.d.ts',
    'pkg/models.js',
    'pkg/models.d.ts',
  ]) {
    assert.ok(installed.files.includes(f), `tarball lacks ${f}`);
  }
  assert.ok(!installed.files.some((f) => f.startsWith('src/') || f.startsWith('tests/')), 'tarball ships sources');
});

test('every export-map target exists in the installed package, types first', () => {
  const root = join(installed.dir, 'node_modules/pi-agent-wasm');
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const conditions = Object.keys(manifest.exports['.']);
  assert.deepEqual(conditions, ['types', 'workerd', 'node', 'browser', 'default']);
  for (const target of Object.values(manifest.exports['.'])) {
    assert.ok(readFileSync(join(root, target)).length > 0, target);
  }
});

test('a fresh project imports the installed package by name and decodes a stream', () => {
  const script = `
    import { SseDecoder } from 'pi-agent-wasm';
    const d = new SseDecoder();
    const ev = d.feed(new TextEncoder().encode('event: hi\\ndata: 1\\ndata: 2\\n\\n'));
    process.stdout.write(JSON.stringify(ev));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: installed.dir,
    encoding: 'utf8',
  });
  assert.deepEqual(JSON.parse(out), [{ type: 'hi', data: '1\n2', lastEventId: '' }]);
});

test('a fresh project imports pi-agent-wasm/models from the installed package', () => {
  const script = `
    import { getModel, getProviders, OPENAI_MODELS } from 'pi-agent-wasm/models';
    process.stdout.write(JSON.stringify([getModel('openai', 'gpt-4o-mini'), getProviders(), Object.keys(OPENAI_MODELS)]));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: installed.dir,
    encoding: 'utf8',
  });
  assert.deepEqual(JSON.parse(out), [getModel('openai', 'gpt-4o-mini'), getProviders(), Object.keys(OPENAI_MODELS)]);
});

test('ready to publish: the tarball carries the README, LICENSE and CHANGELOG, and the manifest says where the project lives', () => {
  for (const f of ['README.md', 'LICENSE', 'CHANGELOG.md']) assert.ok(installed.files.includes(f), `tarball lacks ${f}`);
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(manifest.license, 'MIT');
  assert.match(manifest.repository?.url ?? '', /^git\+https:\/\/.+\.git$/);
  assert.match(manifest.homepage ?? '', /^https:\/\//);
  assert.match(manifest.bugs?.url ?? '', /^https:\/\//);
  assert.ok(Array.isArray(manifest.keywords) && manifest.keywords.length > 0, 'keywords');
  // The package's own engines (it has no dependencies, so nothing else can ask for a newer Node).
  assert.equal(manifest.engines.node, '>=20.19');
  assert.equal(manifest.dependencies, undefined);
});
