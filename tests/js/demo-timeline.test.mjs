// The demo page's timeline (www/), in headless Chromium (Debian's, via playwright-core), with
// the server's scripted model: every run of the page's agent is recorded; "Replay" plays the
// recorded runs again offline (the same conversation, no request); an opened event's "Fork
// here" goes on from that event with a steering message, running nothing before it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { demoPage, idle, ask } from './shared/demo-server.mjs';

const demo = demoPage();
const bodies = (page) => page.$$eval('.msg .body', (els) => els.map((e) => e.textContent));

test('demo timeline: replay shows the same conversation offline; fork here goes on from an event with a steering message (issue 34)', async () => {
  const { page, problems } = await demo.open();
  await ask(page, 'What is 17*23?');
  await idle(page);
  const before = await bodies(page);
  assert.match(before.at(-1), /391/);
  const requests = [];
  page.on('request', (r) => { if (r.url().includes('/demo/v1/')) requests.push(r.url()); });
  await page.click('#replay');
  await page.waitForFunction(() => /Replayed offline/.test(document.querySelector('#status').textContent), null, { timeout: 20000 });
  assert.deepEqual(await bodies(page), before, 'the replay shows the same conversation');
  assert.match(await page.textContent('#status'), /no request made and no tool run/);
  assert.deepEqual(requests, [], 'the replay asked the model nothing');
  // Fork at the tool's result, with a steering message: the model is asked once more.
  await page.uncheck('#hide-updates');
  const types = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  const row = `#events li:nth-child(${types.indexOf('tool_execution_end') + 1})`;
  await page.click(`${row} .event-row`);
  await page.fill(`${row} .fork input`, 'also mention cats');
  await page.click(`${row} .fork button`);
  await page.waitForFunction(() => /Forked at event/.test(document.querySelector('#status').textContent) || document.body.classList.contains('busy'), null, { timeout: 20000 });
  await idle(page);
  const forked = await bodies(page);
  assert.equal(forked[0], before[0], 'the conversation up to the fork is shown');
  assert.ok(forked.includes('also mention cats'), forked.join(' | '));
  assert.match(forked.at(-1), /Noted your message: “also mention cats”/);
  assert.equal(requests.length, 1, 'only the answer after the fork point was requested');
  assert.deepEqual(problems, []);
  await page.close();
});
