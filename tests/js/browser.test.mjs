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

for (const api of ['openai-completions', 'openai-responses', 'anthropic-messages', 'google-generative-ai']) {
  test(`the built-in stream runs a tool-using loop in Chromium over fetch: ${api} (issue 5)`, async () => {
    const { startScenarioServer } = await import('./shared/openai-server.mjs');
    const { EXPECTED_SCENARIO } = await import('./shared/agent-scenario.mjs');
    const llm = await startScenarioServer(api);
    const prefix = new URL(llm.baseUrl).pathname + '/';
    // The page's own origin forwards the API path to the model server, streaming.
    const site = await startStaticServer(undefined, { proxy: { [prefix]: new URL(llm.baseUrl).origin } });
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(String(e)));
    const html = `<!doctype html>
<meta charset="utf-8">
<script type="importmap">{ "imports": { "pi-agent-wasm": "/pkg/browser.js" } }</script>
<script type="module">
  import * as pkg from 'pi-agent-wasm';
  import { runToolScenario } from '/tests/js/shared/agent-scenario.mjs';
  runToolScenario(pkg, location.origin + ${JSON.stringify(prefix.slice(0, -1))}, ${JSON.stringify(api)}).then((r) => { window.__run = r; }, (e) => { window.__run = { error: String(e) }; });
</script>`;
    await page.route(`${site.url}/__agent.html`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: html }));
    await page.goto(`${site.url}/__agent.html`);
    const r = await page.waitForFunction(() => window.__run, null, { timeout: 20000 }).then((h) => h.jsonValue());
    await page.close();
    await site.close();
    await llm.close();
    assert.deepEqual(problems, []);
    const { usage, ...rest } = r;
    assert.deepEqual(rest, EXPECTED_SCENARIO);
    assert.equal(usage.input, 11);
    assert.equal(llm.requests.length, 2);
  });
}
