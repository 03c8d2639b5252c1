// The demo page (www/) in headless Chromium (Debian's, via playwright-core), local mode with
// the server's scripted model: what the page shows around a run. Queued messages are
// labelled by their kind; the conversation and the event inspector follow new content
// unless the user has scrolled up; costs come from the model catalogue (pi-agent-wasm/models)
// and are never made up. (The Worker backend's labels are in demo-worker.test.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getModel } from 'pi-agent-wasm/models';
import { demoPage, idle, ask, followUp, userMessages } from './shared/demo-server.mjs';

const demo = demoPage();
/** A fresh page of the demo; collects console errors and page errors. */
const open = demo.open;
/** Two animation frames: what the page does after a DOM change (observers, layout) is done. */
const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const lastFooter = (page) => page.$$eval('.msg.assistant .footer', (els) => els.at(-1).textContent);

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

/** Where a scrolling panel stands: `gap`, how far its end is below what shows; `hidden`, how
 * far the last shown item of `last` reaches below the panel's visible part (<= 0: all of it
 * shows). */
const panel = (page, selector, last) =>
  page.$eval(selector, (box, last) => {
    const item = [...box.querySelectorAll(last)].filter((e) => e.getClientRects().length > 0).at(-1);
    const bottom = box.getBoundingClientRect().top + box.clientTop + box.clientHeight;
    return {
      top: box.scrollTop,
      height: box.scrollHeight,
      overflows: box.scrollHeight > box.clientHeight + 50,
      gap: box.scrollHeight - box.scrollTop - box.clientHeight,
      hidden: item ? item.getBoundingClientRect().bottom - bottom : Infinity,
      text: item?.textContent ?? '',
    };
  }, last);
const PANELS = {
  conversation: ['#transcript', '.msg .footer'],
  inspector: ['#events', 'li'],
};

/** Both panels are at their end, and their last items (the last usage line, the last event) show whole. */
async function atEnd(page, runs) {
  await settle(page);
  const conversation = await panel(page, ...PANELS.conversation);
  assert.ok(conversation.overflows, 'the conversation is longer than its panel');
  assert.ok(conversation.gap <= 1, `the conversation is scrolled to its end (${conversation.gap} px short)`);
  assert.match(conversation.text, /tokens in \d+ · out \d+/);
  assert.ok(conversation.hidden <= 0.5, `the last usage line shows whole (${conversation.hidden} px of it hidden)`);
  const inspector = await panel(page, ...PANELS.inspector);
  assert.ok(inspector.overflows, 'the events are longer than their panel');
  assert.ok(inspector.gap <= 1, `the inspector is scrolled to its end (${inspector.gap} px short)`);
  assert.match(inspector.text, /agent_end/);
  assert.ok(inspector.hidden <= 0.5, `the last event shows whole (${inspector.hidden} px of it hidden)`);
  assert.equal(await page.$$eval('#events li[data-type=agent_end]', (els) => els.length), runs);
}

/** Turns the mouse wheel over `selector` by `dy` and waits until the panel has scrolled. */
async function wheel(page, selector, dy) {
  const box = await page.locator(selector).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const before = await page.$eval(selector, (e) => e.scrollTop);
  await page.mouse.wheel(0, dy);
  await page.waitForFunction(([s, before, up]) => {
    const e = document.querySelector(s);
    return up ? e.scrollTop < before - 100 : e.scrollHeight - e.scrollTop - e.clientHeight <= 1;
  }, [selector, before, dy < 0]);
}

test('demo: the conversation and the inspector follow new content to its last line, unless the user has scrolled up', async () => {
  const { page, problems } = await open({ width: 1000, height: 600 });
  await ask(page, 'what is 17*23, and what time is it?');
  await idle(page);
  await ask(page, 'what is 6*7 and what time is it?');
  await idle(page);
  await atEnd(page, 2);

  // Scrolled up in both: a new run adds to both, and neither moves.
  const held = {};
  for (const [name, [selector, last]] of Object.entries(PANELS)) {
    await wheel(page, selector, -400);
    held[name] = await panel(page, selector, last);
  }
  await ask(page, 'what is 2*3?');
  await idle(page);
  await settle(page);
  for (const [name, [selector, last]] of Object.entries(PANELS)) {
    const now = await panel(page, selector, last);
    assert.ok(now.height > held[name].height, `${name}: the run added to it`);
    assert.ok(now.top <= held[name].top + 1, `${name}: stays where the user scrolled (${held[name].top} -> ${now.top})`);
    assert.ok(now.gap > 100, `${name}: not pulled to its end`);
  }

  // Back at the end in both: they follow again.
  for (const [selector] of Object.values(PANELS)) await wheel(page, selector, 100000);
  await ask(page, 'what is 8*9?');
  await idle(page);
  await atEnd(page, 4);
  assert.deepEqual(problems, []);
  await page.close();
});

test('demo: costs come from the model catalogue: none for the scripted model, the catalogue\'s price for a known model, none for an unknown id', async () => {
  const { page, problems } = await open();
  const lastRun = () => page.evaluate(() => ({ usage: window.demo.agent.state.messages.at(-1).usage, model: window.demo.agent.state.model }));
  const noCost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

  // The scripted model is not an LLM: it has no price, and the page shows none.
  await ask(page, 'hello');
  await idle(page);
  assert.match(await lastFooter(page), /^tokens in \d+ · out \d+$/);
  assert.deepEqual((await lastRun()).model.cost, noCost);

  // A model the catalogue knows (OpenRouter's openai/gpt-4o-mini, here answered by the demo
  // server, which speaks the same Chat Completions API): its price is the catalogue's.
  const known = getModel('openrouter', 'openai/gpt-4o-mini');
  assert.ok(known.cost.input > 0 && known.cost.output > 0);
  await page.click('#settings-toggle');
  await page.selectOption('#preset', 'openrouter');
  await page.fill('#base-url', `${demo.url}demo/v1`);
  await page.fill('#model-id', 'openai/gpt-4o-mini');
  await page.fill('#api-key', 'test-key-0000');
  await page.waitForFunction(() => /\$0\.15 in .* \$0\.60 out/.test(document.querySelector('#price-hint')?.textContent));
  await ask(page, 'hello');
  await idle(page);
  const priced = await lastRun();
  assert.deepEqual(priced.model.cost, known.cost);
  const u = priced.usage;
  const price = known.cost;
  const expected = (u.input * price.input + u.output * price.output + u.cacheRead * price.cacheRead + u.cacheWrite * price.cacheWrite) / 1e6;
  assert.ok(expected > 0);
  assert.ok(Math.abs(u.cost.total - expected) < 1e-12, `${u.cost.total} is the catalogue's price for the tokens, ${expected}`);
  assert.match(await lastFooter(page), new RegExp(`^tokens in ${u.input} · out ${u.output} · \\$${expected.toFixed(6).replace('.', '\\.')}$`));

  // A model id the catalogue does not know: no price, rather than a made-up one.
  await page.fill('#model-id', 'openai/not-in-the-catalogue');
  await page.waitForFunction(() => /no price/i.test(document.querySelector('#price-hint')?.textContent));
  await ask(page, 'hello');
  await idle(page);
  const unknown = await lastRun();
  assert.deepEqual(unknown.model.cost, noCost);
  const footer = await lastFooter(page);
  assert.match(footer, /^tokens in \d+ · out \d+/);
  assert.doesNotMatch(footer, /\$/);
  assert.match(footer, /price unknown/);
  assert.deepEqual(problems, []);
  await page.close();
});
