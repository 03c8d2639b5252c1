// Benchmark (C) in headless Chromium (Debian's, via playwright-core): the same runs as
// bench/provider.mjs, inside one page. pi-agent-core and pi-ai are bundled for the browser
// with esbuild; this package is loaded as built (pkg/browser.js). Same-origin server.
// Run: node bench/provider-browser.mjs [chunks]   (after npm run build). Never asserted.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startBenchServer } from './chat-bodies.mjs';
import { launchChromium } from '../tests/js/helpers.mjs';

const CHUNKS = Number(process.argv[2] ?? 100_000);
const root = new URL('../', import.meta.url);

const piBundle = await build({
  stdin: {
    contents: "export { runAgentLoop } from '@earendil-works/pi-agent-core';\nexport { streamSimple } from '@earendil-works/pi-ai/compat';",
    resolveDir: fileURLToPath(root),
    loader: 'js',
  },
  bundle: true, format: 'esm', platform: 'browser', write: false, minify: true, logLevel: 'silent',
  define: { 'process.env.NODE_ENV': '"production"' },
});
const files = {
  '/pi.js': ['text/javascript', piBundle.outputFiles[0].contents],
  '/run.js': ['text/javascript', readFileSync(new URL('provider-run.mjs', import.meta.url))],
  '/index.html': ['text/html', '<!doctype html><meta charset="utf-8"><title>bench</title>'],
};
for (const f of readdirSync(new URL('pkg/', root))) {
  const type = f.endsWith('.wasm') ? 'application/wasm' : f.endsWith('.js') ? 'text/javascript' : 'text/plain';
  files[`/pkg/${f}`] = [type, readFileSync(new URL(`pkg/${f}`, root))];
}

const server = await startBenchServer(CHUNKS, files);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${server.origin}/index.html`);
  const r = await page.evaluate(async (baseUrl) => {
    const ours = await import('/pkg/browser.js');
    const pi = await import('/pi.js');
    const { compare } = await import('/run.js');
    return compare({
      ours: { runAgentLoop: ours.runAgentLoop, streamSimple: ours.streamSimple },
      pi: { runAgentLoop: pi.runAgentLoop, streamSimple: pi.streamSimple },
    }, baseUrl);
  }, server.baseUrl);
  const mbps = (ms) => server.totalBytes / 1e6 / (ms / 1000);
  console.log(`(C) Chromium, ${CHUNKS} chunks, ${(server.totalBytes / 1e6).toFixed(1)} MB of SSE, ${r.updates} updates per run`);
  console.log(`  ours  median ${r.ours.toFixed(0)} ms  ${mbps(r.ours).toFixed(1)} MB/s`);
  console.log(`  pi    median ${r.pi.toFixed(0)} ms  ${mbps(r.pi).toFixed(1)} MB/s`);
  console.log(`  throughput ours/pi: ${r.ratio.toFixed(2)}x`);
} finally {
  await browser.close();
  await server.close();
}
