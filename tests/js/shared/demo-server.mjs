// The demo's own server (www/server.mjs) for the browser tests of the page, and the few
// page steps they share.
import { spawn } from 'node:child_process';
import { before, after } from 'node:test';
import { join } from 'node:path';
import { repoRoot, launchChromium } from '../helpers.mjs';

/** Starts www/server.mjs on a free port; resolves to { child, url } (url ends with "/"). */
export async function startDemoServer(args = [], env = {}) {
  const child = spawn(process.execPath, [join(repoRoot, 'www/server.mjs'), '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const address = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/\S+\//);
      if (m) resolve(m[0]);
    });
    child.on('exit', (code) => reject(new Error(`demo server exited with ${code}`)));
  });
  return { child, url: address };
}

/** Types `text` into the composer and presses Enter (Send, or Steer while a run goes on). */
export async function ask(page, text) {
  await page.fill('#input', text);
  await page.press('#input', 'Enter');
}

/** Types `text` into the composer and queues it with the Follow-up button. */
export async function followUp(page, text) {
  await page.fill('#input', text);
  await page.click('#follow-up');
}

/** Each user message of the transcript as { who, body } (the label as written, not as styled). */
export const userMessages = (page) =>
  page.$$eval('#transcript .msg.user', (els) => els.map((e) => ({ who: e.querySelector('.who').textContent, body: e.querySelector('.body').textContent })));

/** A fresh page of the demo in `browser` at `url`, its agent ready; collects console errors
 * and page errors in `problems`. */
export async function openDemo(browser, url, viewport = { width: 1200, height: 900 }) {
  const page = await browser.newPage({ viewport });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.demo?.agent);
  return { page, problems };
}

/** Resolves once the page's agent is idle and the composer's button reads Send again. */
export const idle = (page) =>
  page.waitForFunction(() => !window.demo.agent.state.isStreaming && document.querySelector('#send').textContent === 'Send', null, { timeout: 20000 });

/** A page of its own (a new browser context: a new session), in local mode; collects page errors. */
export async function openOwnContext(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => window.demo?.worker);
  return { context, page, problems };
}

/** A page of its own (a new browser context: a new session) switched to the Worker backend. */
export async function openWorkerBackend(browser, url) {
  const { context, page, problems } = await openOwnContext(browser, url);
  await page.click('#settings-toggle');
  await page.selectOption('#preset', 'worker');
  return { context, page, problems };
}

/** For a test file of the page: starts the demo server and Chromium before its tests and
 * stops them after. Returns `{ url, open(viewport) }` (`url` is set once the server runs;
 * `open` is openDemo on that browser and server). */
export function demoPage() {
  let server;
  let browser;
  const demo = { url: undefined, open: (viewport) => openDemo(browser, demo.url, viewport) };
  before(async () => {
    ({ child: server, url: demo.url } = await startDemoServer());
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    server?.kill();
  });
  return demo;
}
