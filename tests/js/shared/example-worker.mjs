// examples/worker as its README runs it, for the tests: wrangler bundles the example (its
// `pi-agent-wasm` dependency linked to this repository, as `npm install` links `file:../..`),
// and Miniflare runs the bundle in workerd.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { repoRoot } from '../helpers.mjs';

const example = join(repoRoot, 'examples/worker');

/** Bundles the example with wrangler into a new temporary folder; returns its path. */
export function bundleExample() {
  const link = join(example, 'node_modules/pi-agent-wasm');
  if (!existsSync(link)) {
    mkdirSync(join(example, 'node_modules'), { recursive: true });
    symlinkSync('../../..', link);
  }
  const out = mkdtempSync(join(tmpdir(), 'pi-example-'));
  execFileSync(join(repoRoot, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out], {
    cwd: example,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  return out;
}

/** Runs the bundle in `out` with its Durable Object and `vars` (the example's, offline). */
export function runExample(out, vars = {}) {
  return new Miniflare({
    scriptPath: join(out, 'index.js'),
    modules: true,
    modulesRoot: out,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: '2026-04-26',
    durableObjects: { SESSIONS: 'Session' },
    bindings: { LLM_BASE_URL: '', LLM_MODEL: 'gpt-4o-mini', SESSION_TOKEN: '', CORS_ORIGIN: '', ...vars },
  });
}
