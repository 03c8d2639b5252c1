// Prints raw/gzip/brotli sizes of the shipped .wasm and of the packed package, and fails
// when the gzipped .wasm or the browser chunk is over budget.
//
// THE BUDGETS live here, in one place. Later work lowers them; raising one needs a reason in
// the commit message. `--budget BYTES` overrides both (used by the test that shows the check
// can fail).
// - The .wasm at gzip -9: what Node, workerd and a Worker upload carry.
const WASM_GZIP_BUDGET_BYTES = 179 * 1024;
// - The browser chunk (wasm-inline.js: the .wasm gzipped by zopfli, in base64) at gzip -9:
//   what a browser downloads.
const BROWSER_CHUNK_GZIP_BUDGET_BYTES = 171 * 1024;

import { readFileSync, writeFileSync, mkdirSync, renameSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const argBudget = process.argv.indexOf('--budget');
const budget = argBudget > 0 ? Number(process.argv[argBudget + 1]) : WASM_GZIP_BUDGET_BYTES;
const chunkBudget = argBudget > 0 ? budget : BROWSER_CHUNK_GZIP_BUDGET_BYTES;

const wasm = readFileSync(new URL('../pkg/pi_agent_wasm_bg.wasm', import.meta.url));
const gz = gzipSync(wasm, { level: 9 }).length;
const br = brotliCompressSync(wasm, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

const packed = JSON.parse(
  execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }),
)[0];
// The model catalogue (`pi-agent-wasm/models`, data only) is reported on its own line.
const MODELS = 'pkg/models.js';
let jsRaw = 0;
for (const f of packed.files) if (f.path.endsWith('.js') && f.path !== MODELS && f.path !== 'pkg/wasm-inline.js') jsRaw += f.size;
const models = packed.files.some((f) => f.path === MODELS) ? readFileSync(new URL(`../${MODELS}`, import.meta.url)) : undefined;
// What a browser downloads: the .wasm inside the lazily imported chunk (see src/js/browser.js).
const inline = readFileSync(new URL('../pkg/wasm-inline.js', import.meta.url));
const inlineGz = gzipSync(inline, { level: 9 }).length;

console.log('size report');
console.log(`  .wasm            raw ${kb(wasm.length)}  gzip ${kb(gz)}  brotli ${kb(br)}`);
console.log(`  browser chunk    wasm-inline.js raw ${kb(inline.length)}  gzip ${kb(inlineGz)} (the .wasm gzipped by zopfli, in base64)`);
console.log(`  JS entry + glue  raw ${kb(jsRaw)}`);
if (models) console.log(`  models.js        raw ${kb(models.length)}  gzip ${kb(gzipSync(models, { level: 9 }).length)}`);
console.log(`  npm package      packed ${kb(packed.size)}  unpacked ${kb(packed.unpackedSize)}  files ${packed.files.length}`);
// The whole package as a browser app gets it: the entry with everything it imports,
// bundled and minified by esbuild (the chunk apart: it is loaded on first use), plus the chunk.
const entry = await build({
  entryPoints: [fileURLToPath(new URL('../pkg/browser.js', import.meta.url))],
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  write: false,
  logLevel: 'silent',
  plugins: [{ name: 'chunk-apart', setup: (b) => b.onResolve({ filter: /wasm-inline\.js$/ }, (a) => ({ path: a.path, external: true })) }],
});
const entryGz = gzipSync(entry.outputFiles[0].contents, { level: 9 }).length;
console.log(`  browser entry    bundled, minified: gzip ${kb(entryGz)}; with the chunk ${kb(entryGz + inlineGz)}`);
// pi at the same task, for comparison: pi-agent-core's Agent with pi-ai's stream functions of
// the four APIs this package speaks, and with one of them, bundled and minified the same way.
async function piBrowserGzip(apis) {
  const contents = [
    "export { Agent } from '@earendil-works/pi-agent-core';",
    ...apis.map((api, i) => `export { streamSimple as s${i} } from '@earendil-works/pi-ai/api/${api}';`),
  ].join('\n');
  const out = await build({ stdin: { contents, resolveDir: root }, bundle: true, minify: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  return out.outputFiles.reduce((sum, f) => sum + gzipSync(f.contents, { level: 9 }).length, 0);
}
const piFour = await piBrowserGzip(['openai-completions', 'openai-responses', 'anthropic-messages', 'google-generative-ai']);
const piOne = await piBrowserGzip(['openai-completions']);
console.log(`  pi 1.6.0         Agent + pi-ai's four APIs, bundled, minified: gzip ${kb(piFour)}; with one API ${kb(piOne)}`);
console.log(`  budget           gzip .wasm <= ${kb(budget)}, browser chunk <= ${kb(chunkBudget)}`);

// The figures the docs quote (tests/js/docs-figures.test.mjs checks them against this file).
const modelsModule = await import(new URL('../pkg/models.js', import.meta.url).href);
const providers = modelsModule.getProviders();
const report = {
  wasmGzip: gz,
  wasmRaw: wasm.length,
  browserChunkGzip: inlineGz,
  browserEntryGzip: entryGz,
  browserPackageGzip: entryGz + inlineGz,
  piBrowserFourApisGzip: piFour,
  piBrowserOneApiGzip: piOne,
  packed: packed.size,
  models: providers.reduce((n, p) => n + modelsModule.getModels(p).length, 0),
  modelProviders: providers.length,
};
mkdirSync(new URL('../target', import.meta.url), { recursive: true });
// Written whole, then renamed into place: a test reading it while another run of this script
// writes it (tests/js/size-budget.test.mjs runs it) sees one whole file or the other.
const reportFile = new URL('../target/size-report.json', import.meta.url);
const partial = new URL(`../target/size-report.json.${process.pid}`, import.meta.url);
writeFileSync(partial, JSON.stringify(report, null, 2) + '\n');
renameSync(partial, reportFile);

if (!packed.files.some((f) => f.path.endsWith('.wasm'))) {
  console.error('size report: the packed package has no .wasm file');
  process.exit(1);
}
// A budget for each form the module ships in.
if (gz > budget) {
  console.error(`size report: the gzipped .wasm is ${gz} bytes, over the budget of ${budget} bytes`);
  process.exit(1);
}
if (inlineGz > chunkBudget) {
  console.error(`size report: the gzipped browser chunk is ${inlineGz} bytes, over the budget of ${chunkBudget} bytes`);
  process.exit(1);
}
