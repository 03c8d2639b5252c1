// The built package in real headless Chromium (Debian's), through its "browser" entry,
// which loads the .wasm from its inline chunk on first use (no top-level await).
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
  await pkg.ready();
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

/** Opens `body` (a module script) on the static server's origin, with optional response headers. */
async function openModulePage(body, { headers = {}, setup } = {}) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await setup?.(page);
  const html = `<!doctype html><meta charset="utf-8">
<script type="importmap">{ "imports": { "pi-agent-wasm": "/pkg/browser.js" } }</script>
<script type="module">${body}</script>`;
  await page.route(`${server.url}/__load.html`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', headers, body: html }),
  );
  await page.goto(`${server.url}/__load.html`);
  const r = await page.waitForFunction(() => window.__r, null, { timeout: 15000 }).then((h) => h.jsonValue());
  await page.close();
  return { r, problems };
}

const RUN_ONCE = `
  const stream = () => {
    const s = pkg.createAssistantMessageEventStream();
    const message = { role: 'assistant', api: 'x', provider: 'x', model: 'x', content: [{ type: 'text', text: 'hi' }], stopReason: 'stop', timestamp: 1,
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
    queueMicrotask(() => { s.push({ type: 'start', partial: { ...message, content: [] } }); s.push({ type: 'done', reason: 'stop', message }); });
    return s;
  };
  const run = () => pkg.runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [] },
    { model: { id: 'x', api: 'x', provider: 'x' }, convertToLlm: (m) => m }, () => {}, undefined, stream);
  const failure = (e) => ({ code: e.code, message: e.message });
`;

test('browser: the loop loads the module on first use; SseDecoder before ready() names the fix (issue 11)', async () => {
  const { r, problems } = await openModulePage(`
    import * as pkg from 'pi-agent-wasm';
    ${RUN_ONCE}
    let early;
    try { new pkg.SseDecoder(); early = 'constructed'; } catch (e) { early = failure(e); }
    const messages = await run();
    const decoded = new pkg.SseDecoder().feed(new TextEncoder().encode('data: ok\\n\\n'));
    window.__r = { early, texts: messages.map((m) => m.role), decoded };
  `);
  assert.deepEqual(problems, []);
  assert.equal(r.early.code, 'wasm_not_ready');
  assert.match(r.early.message, /await ready\(\)/);
  assert.deepEqual(r.texts, ['user', 'assistant']);
  assert.deepEqual(r.decoded, [{ type: 'message', data: 'ok', lastEventId: '' }]);
});

test('browser: a chunk that fails to load rejects with wasm_load_failed, and the next call loads it (issue 11)', async () => {
  let blocked = true;
  const { r, problems } = await openModulePage(
    `
    import * as pkg from 'pi-agent-wasm';
    ${RUN_ONCE}
    const first = await run().then(() => 'ran', failure);
    const ready = await pkg.ready().then(() => 'ready', failure);
    let decoder;
    try { new pkg.SseDecoder(); } catch (e) { decoder = failure(e); }
    // The stream function encodes the failure in its stream, as pi's contract asks.
    const agent = new pkg.Agent({ initialState: { model: { id: 'm', api: 'openai-completions', provider: 'p', baseUrl: 'http://127.0.0.1:9/v1' } } });
    await agent.prompt('hi');
    const agentError = agent.state.messages.at(-1).errorMessage;
    const direct = await pkg.streamSimple({ id: 'm', api: 'openai-completions', provider: 'p', baseUrl: 'http://127.0.0.1:9/v1' }, { messages: [] }, {}).result();
    await fetch('/__unblock');
    const second = await run().then((m) => m.length, failure);
    window.__r = { first, ready, decoder, second, agentError, direct: { stopReason: direct.stopReason, errorMessage: direct.errorMessage, model: direct.model } };
  `,
    {
      setup: (page) =>
        Promise.all([
          page.route('**/pkg/wasm-inline.js', (route) => (blocked ? route.fulfill({ status: 404, body: 'gone' }) : route.continue())),
          page.route('**/__unblock', (route) => {
            blocked = false;
            return route.fulfill({ status: 204 });
          }),
        ]),
    },
  );
  assert.deepEqual(problems, []);
  assert.equal(r.first.code, 'wasm_load_failed');
  assert.match(r.first.message, /could not load its WebAssembly module/);
  assert.match(r.first.message, /wasm-inline\.js/);
  assert.equal(r.ready.code, 'wasm_load_failed');
  // Not "still loading": the load failed, and the decoder says so.
  assert.deepEqual(r.decoder, r.ready);
  assert.equal(r.agentError, r.first.message);
  assert.deepEqual(r.direct, { stopReason: 'error', errorMessage: r.first.message, model: 'm' });
  assert.equal(r.second, 2);
});

test("browser: a Content-Security-Policy without 'wasm-unsafe-eval' gets an error that says so (issue 11)", async () => {
  const { r } = await openModulePage(
    `
    import * as pkg from 'pi-agent-wasm';
    ${RUN_ONCE}
    window.__r = await run().then(() => 'ran', failure);
  `,
    { headers: { 'content-security-policy': "script-src 'self' 'unsafe-inline'" } },
  );
  assert.equal(r.code, 'wasm_load_failed');
  assert.match(r.message, /CompileError|EvalError|WebAssembly/);
  assert.match(r.message, /'wasm-unsafe-eval'/);
});
