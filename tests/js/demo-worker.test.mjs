// The demo page's "Worker backend" mode in headless Chromium (Debian's): the session runs in
// examples/worker (bundled by wrangler, run by workerd through Miniflare), the demo server
// relays /worker to it, and the page sends a prompt over HTTP and follows the session's
// events. After a reload the page shows the conversation again, each message once. Queued
// messages are labelled by their kind, live and after a reload.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { launchChromium } from './helpers.mjs';
import { bundleExample, runExample } from './shared/example-worker.mjs';
import { startDemoServer, openWorkerBackend, openOwnContext, ask, followUp, userMessages, idle } from './shared/demo-server.mjs';

let out;
let mf;
let server;
let url;
let browser;

before(async () => {
  out = bundleExample();
  mf = runExample(out);
  const workerUrl = String(await mf.ready);
  ({ child: server, url } = await startDemoServer(['--worker', workerUrl]));
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.kill();
  await mf?.dispose();
  if (out) rmSync(out, { recursive: true, force: true });
});

test('demo: the Worker backend runs a session over HTTP; live events, and a reload shows it once', async () => {
  const { context, page, problems } = await openWorkerBackend(browser, url);
  assert.match(await page.textContent('#model-label'), /Worker backend/);
  await page.fill('#input', 'What is 17*23?');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => window.demo.worker.running, null, { timeout: 20000 });
  await page.waitForFunction(() => !window.demo.worker.running && document.querySelector('#send').textContent === 'Send', null, { timeout: 20000 });
  const answer = await page.$$eval('.msg.assistant .body', (els) => els.at(-1).textContent);
  assert.match(answer, /391/);
  const card = await page.$$eval('.card', (els) => els.map((e) => e.className + ' ' + e.textContent));
  assert.equal(card.length, 1);
  assert.match(card[0], /calculator/);
  assert.match(card[0], /\bdone\b/);
  const types = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  assert.equal(types.filter((t) => t === 'agent_start').length, 1);
  assert.equal(types.at(-1), 'agent_end');
  assert.equal(await page.evaluate(() => window.demo.agent.state.messages.filter((m) => m.role !== 'system').length), 0, 'the page ran no agent of its own');

  // The same tab reloaded: the Worker backend is kept, and the session's events replay, each once.
  await page.reload();
  await page.waitForFunction(() => window.demo?.worker);
  assert.match(await page.textContent('#model-label'), /Worker backend/);
  await page.waitForFunction((n) => document.querySelectorAll('#events li').length >= n, types.length, { timeout: 20000 });
  await page.waitForTimeout(300);
  const again = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  assert.deepEqual(again, types);
  assert.equal(await page.$$eval('.msg.user', (els) => els.length), 1);
  // The replayed card is the one shown live: status, duration, arguments and result. (The
  // calculator takes about 0 ms, measured or replayed: a slow tool's replayed duration is
  // checked in the labels test below.)
  assert.deepEqual(await page.$$eval('.card', (els) => els.map((e) => e.className + ' ' + e.textContent)), card);
  assert.match(await page.$$eval('.msg.assistant .body', (els) => els.at(-1).textContent), /391/);

  // Steering while the Worker's slow tool runs, then Abort, both over HTTP.
  const runs = async () => page.$$eval('#events li', (els) => els.filter((e) => e.dataset.type === 'agent_end').length);
  const ended = await runs();
  await page.fill('#input', 'run a slow long task');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => document.querySelector('.card.running, .card:not(.done):not(.failed)'), null, { timeout: 20000 });
  await page.fill('#input', 'Also mention the weather.');
  await page.press('#input', 'Enter');
  await page.waitForFunction((n) => [...document.querySelectorAll('#events li')].filter((e) => e.dataset.type === 'agent_end').length > n, ended, { timeout: 30000 });
  const users = await page.$$eval('.msg.user', (els) => els.map((e) => e.textContent));
  assert.ok(users.some((t) => t.includes('Also mention the weather.')), 'the steering message was delivered');
  assert.equal(await page.$$eval('#queue li', (els) => els.length), 0, 'nothing left queued');

  await page.fill('#input', 'another slow long task');
  await page.press('#input', 'Enter');
  await page.waitForFunction(() => window.demo.worker.running, null, { timeout: 20000 });
  await page.waitForTimeout(400);
  await page.click('#abort');
  await page.waitForFunction(() => !window.demo.worker.running, null, { timeout: 20000 });
  assert.ok(await page.$$eval('.error.aborted', (els) => els.length) >= 1, 'the aborted answer is shown');
  assert.deepEqual(problems, []);
  await context.close();
});

test('demo: the Worker backend labels a steering message steering and a follow-up follow-up, live and after a reload', async () => {
  const { context, page, problems } = await openWorkerBackend(browser, url); // a tab of its own: a new session
  await ask(page, 'run a slow long task');
  await page.waitForFunction(() => /step 1 of 5/.test(document.querySelector('.card-progress')?.textContent ?? ''), null, { timeout: 20000 });
  await ask(page, 'Also mention the weather.'); // Enter during a run steers
  await followUp(page, 'hello again');
  assert.deepEqual(await page.$$eval('#queue li .badge', (els) => els.map((e) => e.textContent)), ['steering · queued', 'follow-up · queued']);
  await page.waitForFunction(() => !window.demo.worker.running && document.querySelectorAll('#events li[data-type=agent_end]').length === 1, null, { timeout: 30000 });
  assert.equal(await page.$$eval('#queue li', (els) => els.length), 0, 'both delivered');
  const labelled = [
    { who: 'You', body: 'run a slow long task' },
    { who: 'You (steering)', body: 'Also mention the weather.' },
    { who: 'You (follow-up)', body: 'hello again' },
  ];
  assert.deepEqual(await userMessages(page), labelled);
  const answers = await page.$$eval('.msg.assistant .body', (els) => els.map((e) => e.textContent));
  assert.match(answers.at(-2), /Noted your message: “Also mention the weather\.”/, 'steered into the summary of the results');
  assert.match(answers.at(-1), /scripted demo model/, 'the follow-up answered in a turn of its own');

  // A reload replays the session: the same labels, and the slow tool's card as it was, with
  // the seconds the loop measured rather than the moment the replay took.
  const types = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  const cards = await page.$$eval('.card', (els) => els.map((e) => e.className + ' ' + e.textContent));
  assert.match(cards.join(), /long_task.*done · [1-9]\d{3,}(\.\d+)? ms/);
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('#events li').length >= n, types.length, { timeout: 20000 });
  assert.deepEqual(await userMessages(page), labelled);
  assert.deepEqual(await page.$$eval('.card', (els) => els.map((e) => e.className + ' ' + e.textContent)), cards);
  assert.deepEqual(problems, []);
  await context.close();
});

test('demo: with the Worker backend a transfer waits for approval across a reload (the card comes back, Approve runs it once), and the page title is run by this page for the Worker (connectSession)', async () => {
  const { context, page, problems } = await openWorkerBackend(browser, url);
  await ask(page, 'transfer 25 EUR to account 42');
  await page.waitForSelector('.card.waiting button.approve', { timeout: 20000 });
  // Reloaded while the Worker waits: the card and its buttons come back from the session.
  await page.reload();
  await page.waitForFunction(() => window.demo?.worker);
  await page.waitForSelector('.card.waiting button.approve', { timeout: 20000 });
  assert.match(await page.textContent('.card.waiting'), /25 EUR is over the 10 EUR limit/);
  await page.click('.card.waiting button.approve');
  await page.waitForFunction(() => !window.demo.worker.running && document.querySelectorAll('#events li[data-type=agent_end]').length === 1, null, { timeout: 30000 });
  const answers = () => page.$$eval('.msg.assistant .body', (els) => els.map((e) => e.textContent));
  assert.match((await answers()).at(-1), /Sent 25 EUR to account 42\./);
  const ends = await page.$$eval('#events li[data-type=tool_execution_end]', (els) => els.length);
  assert.equal(ends, 1, 'the transfer ran once');

  // A client tool of the Worker's session, run in this page.
  await ask(page, 'what is the title of this page?');
  await page.waitForFunction(() => document.querySelectorAll('#events li[data-type=agent_end]').length === 2, null, { timeout: 30000 });
  assert.match((await answers()).at(-1), /The page is titled pi-agent-wasm demo\./);
  assert.deepEqual(problems, []);
  await context.close();
});

test('demo: one run handed between the page and the Worker in its middle: "Continue in the Worker" while a transfer waits (approved and run there), then "Bring back to the page" while another waits (approved and run in the page)', async () => {
  const { context, page, problems } = await openOwnContext(browser, url);
  const answers = () => page.$$eval('.msg.assistant .body', (els) => els.map((e) => e.textContent));
  const session = () => page.evaluate(async () => (await fetch(`${location.origin}/worker/sessions/${window.demo.worker.id}`)).json());

  // In the page: the transfer waits for approval; the run moves to the Worker.
  await ask(page, 'transfer 25 EUR to account 42');
  await page.waitForSelector('.card.waiting button.approve', { timeout: 20000 });
  assert.equal(await page.textContent('#handoff'), 'Continue in the Worker');
  await page.click('#handoff');
  await page.waitForFunction(() => window.demo.worker.on && document.querySelector('#handoff').textContent === 'Bring back to the page', null, { timeout: 20000 });
  assert.match(await page.textContent('#model-label'), /Worker backend/);
  // The Worker asks again: the card's buttons now answer the session.
  await page.waitForFunction(() => (document.querySelector('.card.waiting .card-status')?.textContent ?? '') === 'waiting for your approval', null, { timeout: 20000 });
  assert.deepEqual((await session()).pending.map((c) => c.tool), ['transfer']);
  await page.click('.card.waiting button.approve');
  await page.waitForFunction(() => !window.demo.worker.running && document.querySelector('#send').textContent === 'Send', null, { timeout: 30000 });
  assert.match((await answers()).at(-1), /Sent 25 EUR to account 42\./);
  let s = await session();
  assert.deepEqual(s.messages.filter((m) => m.role === 'toolResult').map((m) => m.content[0].text), ['Sent 25 EUR to account 42.'], 'run in the Worker, once');
  assert.equal(await page.evaluate(() => window.demo.agent.state.messages.filter((m) => m.role !== 'system').length), 0, 'the page let go of its run');

  // In the Worker: another transfer waits; the run comes back to the page.
  await ask(page, 'transfer 30 EUR to account 5');
  await page.waitForFunction(() => document.querySelectorAll('.card.waiting button.approve:not([disabled])').length === 1, null, { timeout: 20000 });
  await page.click('#handoff');
  await page.waitForFunction(() => !window.demo.worker.on && document.querySelector('#handoff').textContent === 'Continue in the Worker', null, { timeout: 20000 });
  await page.waitForFunction(() => window.demo.agent.waitingToolCalls.length === 1, null, { timeout: 20000 });
  s = await session();
  assert.deepEqual([s.running, s.pending], [false, []], 'the session let go of its run');
  await page.click('.card.waiting button.approve:not([disabled])');
  await idle(page);
  assert.match((await answers()).at(-1), /Sent 30 EUR to account 5\./);
  const local = await page.evaluate(() => window.demo.agent.state.messages.filter((m) => m.role === 'toolResult').map((m) => m.content[0].text));
  assert.deepEqual(local, ['Sent 25 EUR to account 42.', 'Sent 30 EUR to account 5.']);
  assert.equal((await session()).messages.filter((m) => m.role === 'toolResult').length, 1, 'the Worker did not run the second transfer');
  assert.deepEqual(problems, []);
  await context.close();
});
