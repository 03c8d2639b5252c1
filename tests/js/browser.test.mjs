// The built package in real headless Chromium (Debian's), through its "browser" entry,
// which fetches and instantiates the .wasm with top-level await.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStaticServer, launchChromium } from './helpers.mjs';
import { EXPECTED } from './shared/sse-scenario.mjs';

let server;
let browser;

before(async () => {
  server = await startStaticServer();
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const PAGE = `<!doctype html>
<meta charset="utf-8">
<script type="importmap">{ "imports": { "pi-agent-wasm": "/pkg/browser.js" } }</script>
<script type="module">
  import * as pkg from 'pi-agent-wasm';
  import { runSseScenario } from '/tests/js/shared/sse-scenario.mjs';
  window.__result = runSseScenario(pkg);
</script>`;

test('SseDecoder decodes the shared scenario identically at every split (browser entry)', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.route(`${server.url}/__test.html`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: PAGE }),
  );
  await page.goto(`${server.url}/__test.html`);
  const r = await page.waitForFunction(() => window.__result, null, { timeout: 15000 }).then((h) => h.jsonValue());
  assert.deepEqual(problems, []);
  assert.deepEqual(r.events, EXPECTED.events);
  assert.equal(r.truncated, EXPECTED.truncated);
  assert.equal(r.retry, EXPECTED.retry);
  assert.equal(r.firstMismatch, -1);
  assert.ok(r.splits > 100);
  await page.close();
});
