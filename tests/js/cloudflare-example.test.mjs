// examples/worker, the way its README commands run it: wrangler bundles the example (its
// `pi-agent-wasm` dependency is this repository, as `npm install` links `file:../..`), and
// workerd runs it. Offline: the scripted demo model answers through the built-in provider
// over the Worker's own `fetch`, so a session uses a tool and answers with no key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { bundleExample, runExample } from './shared/example-worker.mjs';

let out;
let mf;

after(async () => {
  await mf?.dispose();
  if (out) rmSync(out, { recursive: true, force: true });
});

test('examples/worker bundles with wrangler and answers over the sessions API offline (demo model)', async () => {
  out = bundleExample();
  mf = runExample(out, { CORS_ORIGIN: 'https://app.example' });
  const res = await mf.dispatchFetch('http://localhost/sessions/demo/prompt', { method: 'POST', body: JSON.stringify({ text: 'What is 17*23?' }) });
  assert.equal(res.status, 202);
  const deadline = Date.now() + 20000;
  let state;
  do {
    await new Promise((r) => setTimeout(r, 100));
    state = await (await mf.dispatchFetch('http://localhost/sessions/demo')).json();
  } while ((state.running || state.messages?.at(-1)?.role !== 'assistant') && Date.now() < deadline);
  assert.deepEqual(state.messages.map((m) => m.role), ['system', 'user', 'assistant', 'toolResult', 'assistant']);
  assert.equal(state.messages[3].content[0].text, '391');
  assert.match(state.messages.at(-1).content.map((b) => b.text ?? '').join(''), /391/);
  // CORS for the page's origin: the preflight, and the header on answers.
  const pre = await mf.dispatchFetch('http://localhost/sessions/demo/steer', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-headers': 'content-type' } });
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example');
  assert.match(pre.headers.get('access-control-allow-methods'), /POST/);
  const got = await mf.dispatchFetch('http://localhost/sessions/demo', { headers: { origin: 'https://app.example' } });
  assert.equal(got.headers.get('access-control-allow-origin'), 'https://app.example');
});
