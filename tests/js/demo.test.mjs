// The demo page (www/) served by the main job's server with the embedded scripted model,
// driven in headless Chromium (Debian's, via playwright-core): a parallel tool conversation,
// abort during a slow tool, steering during a slow tool, an unreachable provider and
// recovery. Saves a screenshot of the finished conversation to test-results/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium, repoRoot } from './helpers.mjs';

let server;
let url;
let browser;

before(async () => {
  server = spawn(process.execPath, [join(repoRoot, 'www/server.mjs'), '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/\S+\//);
      if (m) resolve(m[0]);
    });
    server.on('exit', (code) => reject(new Error(`demo server exited with ${code}`)));
  });
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

async function ask(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

const idle = (page) => page.waitForFunction(() => !window.demo.agent.state.isStreaming && document.querySelector('#send').textContent === 'Send', null, { timeout: 20000 });

test('demo: "what is 17*23, and what time is it?" runs two tools in parallel and answers 391; the inspector is balanced', async () => {
  const { page, problems } = await open();
  assert.match(await page.textContent('#model-label'), /Scripted demo model — not an LLM/);
  await ask(page, 'what is 17*23, and what time is it?');
  await page.waitForFunction(() => window.demo.agent.state.isStreaming);
  await idle(page);
  const cards = await page.$$eval('.card', (els) => els.map((e) => ({ cls: e.className, text: e.textContent })));
  assert.equal(cards.length, 2);
  for (const c of cards) assert.match(c.cls, /\bdone\b/);
  assert.match(cards[0].text, /calculator/);
  assert.match(cards[1].text, /clock/);
  const answer = await page.$$eval('.msg.assistant .body', (els) => els.at(-1).textContent);
  assert.match(answer, /391/);
  assert.equal(await page.$$eval('.msg.assistant .thinking:not([hidden])', (els) => els.length), 2, 'thinking shown');
  assert.match(await page.$$eval('.msg.assistant .footer', (els) => els.at(-1).textContent), /tokens in \d+ · out \d+/);
  const types = await page.$$eval('#events li', (els) => els.map((e) => e.dataset.type));
  const count = (t) => types.filter((x) => x === t).length;
  assert.equal(count('agent_start'), 1);
  assert.equal(count('agent_end'), 1);
  assert.equal(count('turn_start'), count('turn_end'));
  assert.equal(count('message_start'), count('message_end'));
  assert.equal(count('tool_execution_start'), 2);
  assert.equal(count('tool_execution_end'), 2);
  // In parallel: both started before either ended.
  const tools = types.filter((t) => t.startsWith('tool_execution_') && t !== 'tool_execution_update');
  assert.deepEqual(tools, ['tool_execution_start', 'tool_execution_start', 'tool_execution_end', 'tool_execution_end']);
  assert.equal(types[0], 'agent_start');
  assert.equal(types.at(-1), 'agent_end');
  // The inspector expands an event on click.
  await page.click('#events li:first-child .event-row');
  assert.match(await page.textContent('#events li:first-child pre'), /"type": "agent_start"/);
  mkdirSync(join(repoRoot, 'test-results'), { recursive: true });
  await page.screenshot({ path: join(repoRoot, 'test-results/demo-conversation.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo: Abort during a slow tool shows the aborted result and the page is ready again', async () => {
  const { page, problems } = await open();
  await ask(page, 'run a slow long task');
  await page.waitForFunction(() => /step 1 of 5/.test(document.querySelector('.card-progress')?.textContent ?? ''), null, { timeout: 20000 });
  assert.equal(await page.isDisabled('#abort'), false);
  await page.click('#abort');
  await idle(page);
  const card = await page.$eval('.card', (e) => ({ cls: e.className, text: e.textContent }));
  assert.match(card.cls, /\bfailed\b/);
  assert.match(card.text, /aborted at step/);
  assert.match(await page.textContent('.msg.assistant:last-of-type'), /Aborted/);
  assert.equal(await page.isDisabled('#abort'), true);
  await ask(page, 'hello');
  await idle(page);
  assert.match(await page.$$eval('.msg.assistant .body', (els) => els.at(-1).textContent), /scripted demo model/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo: a steering message typed during a slow tool is delivered before the next model request', async () => {
  const { page, problems } = await open({ width: 390, height: 844 }); // phone width
  await ask(page, 'start a slow long task');
  await page.waitForFunction(() => /step 1 of 5/.test(document.querySelector('.card-progress')?.textContent ?? ''), null, { timeout: 20000 });
  assert.equal(await page.textContent('#send'), 'Steer');
  await ask(page, 'also mention cats');
  assert.match(await page.textContent('#queue'), /steering · queued/);
  await idle(page);
  assert.equal(await page.$$eval('#queue li', (els) => els.length), 0, 'delivered, so no longer queued');
  const msgs = await page.$$eval('#transcript > li', (els) => els.map((e) => `${e.className}: ${e.textContent}`));
  const steerAt = msgs.findIndex((m) => m.includes('also mention cats') && m.startsWith('msg user'));
  assert.ok(steerAt > 0, 'the steering message is in the transcript');
  assert.match(msgs[steerAt], /You \(steering\)/);
  assert.match(msgs.at(-1), /Noted your message: “also mention cats”/, 'the model saw it in its next request');
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo: an unreachable base URL shows a readable error, and the page recovers', async () => {
  const { page, problems } = await open();
  await page.click('#settings-toggle');
  await page.selectOption('#preset', 'local');
  await page.fill('#base-url', 'http://127.0.0.1:9/v1');
  await ask(page, 'hello');
  await idle(page);
  const error = await page.textContent('.msg.assistant .error');
  assert.match(error, /Error: Connection error/);
  await page.selectOption('#preset', 'demo');
  await ask(page, 'hello');
  await idle(page);
  assert.match(await page.$$eval('.msg.assistant .body', (els) => els.at(-1).textContent), /scripted demo model/);
  // The browser reports the refused connection itself; nothing else may log an error.
  assert.deepEqual(problems.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(p)), []);
  await page.close();
});

test('demo: a refused API key shows the provider\'s error text, never the key', async () => {
  const { page, problems } = await open();
  await page.click('#settings-toggle');
  await page.selectOption('#preset', 'openai');
  await page.fill('#base-url', `${url}demo/unauthorized/v1`);
  await page.fill('#api-key', 'sk-demo-secret-123456');
  await ask(page, 'hello');
  await idle(page);
  const error = await page.textContent('.msg.assistant .error');
  assert.match(error, /Error: OpenAI API error \(401\): .*Incorrect API key provided/);
  assert.ok(!error.includes('sk-demo-secret'));
  const events = await page.evaluate(() => JSON.stringify(window.demo.agent.state.messages));
  assert.ok(!events.includes('sk-demo-secret'), 'the key is in no message');
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'not stored unless asked');
  assert.deepEqual(problems.filter((p) => !/401|Failed to load resource/.test(p)), []);
  await page.close();
});
