// The demo page (www/) in headless Chromium (Debian's, via playwright-core), local mode with
// the server's scripted model: what the page shows around a run. Queued messages are
// labelled by their kind. (The Worker backend's labels are in demo-worker.test.mjs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from './helpers.mjs';
import { startDemoServer, ask, followUp, userMessages } from './shared/demo-server.mjs';

let server;
let url;
let browser;

before(async () => {
  ({ child: server, url } = await startDemoServer());
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.kill();
});

/** A fresh page of the demo; collects console errors and page errors. */
async function open(viewport = { width: 1200, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.demo?.agent);
  return { page, problems };
}

const idle = (page) => page.waitForFunction(() => !window.demo.agent.state.isStreaming && document.querySelector('#send').textContent === 'Send', null, { timeout: 20000 });

test('demo: a queued steering message is labelled steering, and a follow-up follow-up', async () => {
  const { page, problems } = await open();
  await ask(page, 'run a slow long task');
  await page.waitForFunction(() => /step 1 of 5/.test(document.querySelector('.card-progress')?.textContent ?? ''), null, { timeout: 20000 });
  await ask(page, 'also mention cats'); // Enter during a run steers
  await followUp(page, 'hello again');
  assert.deepEqual(await page.$$eval('#queue li .badge', (els) => els.map((e) => e.textContent)), ['steering · queued', 'follow-up · queued']);
  await idle(page);
  assert.equal(await page.$$eval('#queue li', (els) => els.length), 0, 'both delivered');
  assert.deepEqual(await userMessages(page), [
    { who: 'You', body: 'run a slow long task' },
    { who: 'You (steering)', body: 'also mention cats' },
    { who: 'You (follow-up)', body: 'hello again' },
  ]);
  // Delivered as their kinds: the steering message went into the summary of the tool's
  // result, the follow-up came once the agent would have stopped, as a turn of its own.
  const answers = await page.$$eval('.msg.assistant .body', (els) => els.map((e) => e.textContent));
  assert.match(answers.at(-2), /Noted your message: “also mention cats”/);
  assert.match(answers.at(-1), /scripted demo model/);
  assert.deepEqual(problems, []);
  await page.close();
});
