// The test-trap build (issue 12): this package with the `test-trap` feature, whose binding
// traps on a marker in its input (src/wasm/test_trap.rs), so that a test can crash a real
// instance. It is built apart from pkg/, into target/test-trap/, by the steps of
// scripts/build.sh (cargo, wasm-bindgen, scripts/package-wasm.mjs, the JS entries) except
// wasm-opt and the size report, with Cargo's `test-trap` profile (quick to compile). The
// result is installed as `pi-agent-wasm` in target/test-trap/app/node_modules, so a file in
// that app imports it by name. Rebuilt only when its inputs changed since the last build.
//
// `node tests/js/shared/trap-build.mjs` builds it (scripts/test.sh does, before the JS
// tests); `trapApp()` builds it when needed and returns the app's directory, whose
// entry.mjs re-exports the package imported by name.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const out = join(root, 'target/test-trap');
const app = join(out, 'app');
const pkgRoot = join(app, 'node_modules/pi-agent-wasm');
const wasm = join(root, 'target/wasm32-unknown-unknown/test-trap/pi_agent_wasm.wasm');
const stamp = join(out, 'built');

/** The newest modification time under `path` (a file or a directory tree). */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

function run(command, args) {
  execFileSync(command, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** Builds the test-trap package when an input is newer than the last build; returns the
 * directory of the app that has it installed. */
export function trapApp() {
  const inputs = ['src', 'Cargo.toml', 'Cargo.lock', 'scripts/package-wasm.mjs', 'package.json'].map((p) => join(root, p));
  if (existsSync(stamp) && Math.max(...inputs.map(newest)) < statSync(stamp).mtimeMs) return app;
  run('cargo', ['build', '--quiet', '--profile', 'test-trap', '--target', 'wasm32-unknown-unknown', '--features', 'test-trap']);
  rmSync(pkgRoot, { recursive: true, force: true });
  const pkg = join(pkgRoot, 'pkg');
  mkdirSync(pkg, { recursive: true });
  run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--out-dir', pkg, '--out-name', 'pi_agent_wasm', wasm]);
  run(process.execPath, [join(root, 'scripts/package-wasm.mjs'), pkg]);
  for (const name of readdirSync(join(root, 'src/js'))) {
    if (name.endsWith('.js') || name.endsWith('.d.ts')) copyFileSync(join(root, 'src/js', name), join(pkg, name));
  }
  copyFileSync(join(root, 'package.json'), join(pkgRoot, 'package.json'));
  // The model catalogue is not built here; nothing in these tests imports it.
  writeFileSync(join(app, 'package.json'), '{ "private": true, "type": "module" }\n');
  // The package by name, as an app imports it (the "node" export condition).
  writeFileSync(join(app, 'entry.mjs'), "export * from 'pi-agent-wasm';\n");
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  trapApp();
  console.log(`test-trap build ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${app}`);
}
