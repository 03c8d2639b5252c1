// The demo page (www/) in headless Chromium, local mode with the scripted model: tool calls
// that wait (issue 33). A transfer over 10 EUR shows an Approve/Reject card, and the run goes
// on with the user's answer; the page title is a client tool the page itself answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { demoPage, idle, ask } from './shared/demo-server.mjs';

const demo = demoPage();
const answers = (page) => page.$$eval('.msg.assistant .body', (els) => els.map((e) => e.textContent));

test('demo: a transfer over 10 EUR waits on an Approve/Reject card; Approve runs it, Reject gives the model the refusal', async () => {
  const { page, problems } = await demo.open();
  await ask(page, 'transfer 25 EUR to account 42');
  await page.waitForSelector('.card.waiting button.approve', { timeout: 20000 });
  assert.match(await page.textContent('.card.waiting'), /25 EUR is over the 10 EUR limit/);
  assert.match(await page.textContent('.card.waiting .card-status'), /waiting for your approval/);
  assert.equal(await page.evaluate(() => window.demo.agent.waitingToolCalls.length), 1);
  await page.click('.card.waiting button.approve');
  await idle(page);
  assert.match((await answers(page)).at(-1), /Sent 25 EUR to account 42\./);
  assert.match(await page.textContent('.card.done'), /done/);
  assert.equal(await page.$$eval('.card-answer', (els) => els.length), 0, 'the card\'s buttons are gone once the call ended');

  await ask(page, 'send 50 EUR to account 7');
  await page.waitForSelector('.card.waiting button.reject', { timeout: 20000 });
  await page.click('.card.waiting button.reject');
  await idle(page);
  assert.match((await answers(page)).at(-1), /The user rejected tool call transfer: The user said no It did not run\./);
  // A small transfer does not ask.
  await ask(page, 'transfer 5 EUR to account 9');
  await idle(page);
  assert.match((await answers(page)).at(-1), /Sent 5 EUR to account 9\./);
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo: the page title is a client tool: the page runs it and the run goes on with its result', async () => {
  const { page, problems } = await demo.open();
  await ask(page, 'what is the title of this page?');
  await idle(page);
  assert.match((await answers(page)).at(-1), /The page is titled pi-agent-wasm demo\./);
  const types = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  assert.ok(types.includes('tool_execution_waiting'));
  assert.deepEqual(problems, []);
  await page.close();
});
