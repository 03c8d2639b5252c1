// What becomes of a built-in provider's response body once the answer is whole (its end event
// came: `[DONE]`, `message_stop`, `response.completed`) and the run no longer reads it. pi-ai's
// clients read such a body to its end; this package did too, but cancelled it, and a cancel is
// not free: Node's fetch aborts its controller for it (a fifth of a small request's CPU) and the
// connection is not reused. Now: a body whose answer is whole is read to its end in the
// background; should more come after the end, or nothing within a second, it is cancelled then;
// a body cut short (an abort) is cancelled at once. Real servers on 127.0.0.1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { faultServer, modelAt, runLoop, sseAnswer } from './shared/four-apis.mjs';

const KEY = 'sk-release-secret-0123456789';
const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

/** A server whose answer is `sseAnswer(api)`; `then(res)` decides what follows the end.
 * `seen` resolves with how the response ended: 'finished' (the server ended it) or 'cut'
 * (the client went away first). */
async function serve(api, then) {
  let ended;
  const seen = new Promise((resolve) => { ended = resolve; });
  const server = await faultServer((_req, res) => {
    res.on('close', () => ended(res.writableFinished ? 'finished' : 'cut'));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseAnswer(api, 'whole answer'));
    then(res);
  });
  servers.push(server);
  return { server, seen };
}

const within = (ms, p) => Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms))]);

for (const api of ['openai-completions', 'anthropic-messages', 'openai-responses']) {
  test(`${api}: a whole answer whose body ends a little later is read to its end, not cancelled`, async () => {
    const { server, seen } = await serve(api, (res) => setTimeout(() => res.end(), 50));
    const { last } = await runLoop(modelAt(api, server.origin), KEY);
    assert.equal(last.stopReason, 'stop');
    assert.equal(last.content[0].text, 'whole answer');
    assert.equal(await within(5000, seen), 'finished');
  });

  test(`${api}: more data after the end: the body is cancelled, the answer kept`, async () => {
    const { server, seen } = await serve(api, (res) => {
      const more = setInterval(() => { if (!res.destroyed) res.write(': still here\n\n'); }, 20);
      res.on('close', () => clearInterval(more));
    });
    const { last } = await runLoop(modelAt(api, server.origin), KEY);
    assert.equal(last.stopReason, 'stop');
    assert.equal(last.content[0].text, 'whole answer');
    assert.equal(await within(5000, seen), 'cut');
  });

  test(`${api}: a server silent after the end: the answer comes at once, the body is cancelled later`, async () => {
    const { server, seen } = await serve(api, () => {});
    let answered = false;
    const cutFirst = seen.then(() => !answered);
    const { last } = await runLoop(modelAt(api, server.origin), KEY);
    answered = true;
    assert.equal(last.stopReason, 'stop');
    assert.equal(await within(5000, seen), 'cut');
    assert.equal(await cutFirst, false, 'the answer waited for the body to be cancelled');
  });
}

test('a body cut short by an abort is cancelled at once', async () => {
  const api = 'openai-completions';
  let ended;
  const seen = new Promise((resolve) => { ended = resolve; });
  const server = await faultServer((_req, res) => {
    res.on('close', () => ended(res.writableFinished ? 'finished' : 'cut'));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseAnswer(api, 'half').split('data: [DONE]')[0].split('\n\n').slice(0, 2).join('\n\n') + '\n\n');
  });
  servers.push(server);
  const controller = new AbortController();
  const run = runLoop(modelAt(api, server.origin), KEY, {}, controller.signal);
  setTimeout(() => controller.abort(), 100);
  const { last } = await run;
  assert.equal(last.stopReason, 'aborted');
  assert.equal(await within(500, seen), 'cut');
});

test('a Node process whose last answer\'s server stays silent after the end exits: the wait keeps nothing alive past the cancel', async () => {
  const api = 'openai-completions';
  const { server } = await serve(api, () => {});
  const script = `
    import { runAgentLoop, streamSimple } from 'pi-agent-wasm';
    import { modelAt } from ${JSON.stringify(new URL('./shared/four-apis.mjs', import.meta.url).href)};
    const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] },
      { model: modelAt(${JSON.stringify(api)}, ${JSON.stringify(server.origin)}), apiKey: 'k', convertToLlm: (m) => m }, () => {}, undefined, streamSimple);
    console.log(messages.at(-1).content[0].text);`;
  // Asynchronously: the server answering it lives in this process.
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8', timeout: 20_000,
  });
  assert.equal(stdout.trim(), 'whole answer');
});

// An abort ends the response whatever the `fetch` does with the signal: the body is cancelled
// at the abort (found by an outside tester: a `fetch` that dropped `init.signal`, over a body
// that kept trickling, left the run reading forever).
test('an abort with a fetch that drops the signal: the run ends as aborted and the body is cancelled', async () => {
  const api = 'openai-completions';
  const trickle = await faultServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const line = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: '.' }, finish_reason: null }] })}\n\n`;
    const more = setInterval(() => { if (!res.destroyed) res.write(line); }, 20);
    res.on('close', () => { clearInterval(more); trickle.closed?.(); });
  });
  servers.push(trickle);
  const closed = new Promise((resolve) => { trickle.closed = resolve; });
  const dropSignal = (url, init) => fetch(url, { method: init.method, headers: init.headers, body: init.body });
  const controller = new AbortController();
  const run = runLoop(modelAt(api, trickle.origin), KEY, { fetch: dropSignal }, controller.signal);
  setTimeout(() => controller.abort(), 150);
  const { last } = await within(5000, run);
  assert.equal(last.stopReason, 'aborted');
  assert.match(last.content[0].text, /^\.+$/);
  await within(5000, closed);
});

test('a shared signal keeps no listener of the built-in stream after its runs', async () => {
  const { getEventListeners } = await import('node:events');
  const api = 'openai-completions';
  const { server } = await serve(api, (res) => res.end());
  const controller = new AbortController();
  // Node's own fetch leaves a listener per request on the signal it is given: this one is not
  // given it, so what is left is the stream's.
  const dropSignal = (url, init) => fetch(url, { method: init.method, headers: init.headers, body: init.body });
  for (let i = 0; i < 12; i++) {
    const { last } = await runLoop(modelAt(api, server.origin), KEY, { fetch: dropSignal }, controller.signal);
    assert.equal(last.stopReason, 'stop');
  }
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});

/** A `fetch` whose body's reader gives `steps` (then the end), recording `cancel`. */
function scriptedFetch(steps, log) {
  return async () => {
    let i = 0;
    const reader = {
      read: async () => (i < steps.length ? steps[i++] : { done: true, value: undefined }),
      cancel: async () => { log.push('cancel'); },
    };
    return { ok: true, status: 200, statusText: 'OK', headers: new Headers({ 'content-type': 'text/event-stream' }), body: { getReader: () => reader } };
  };
}

test('a read result that is no read result (no boolean done) ends the response with an error naming it, and cancels the body', async () => {
  const bytes = new TextEncoder().encode(sseAnswer('openai-completions', 'never read'));
  for (const bad of [{}, { done: 0, value: bytes }, { done: 'false', value: bytes }, null]) {
    const log = [];
    const { last } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: scriptedFetch([bad], log) });
    assert.equal(last.stopReason, 'error', JSON.stringify(bad));
    assert.match(last.errorMessage, /read\(\) gave (an object|null) without a boolean done/);
    assert.deepEqual(log, ['cancel']);
  }
});

test('chunks of another realm are read as bytes: Uint8Array, DataView and ArrayBuffer', async () => {
  const vm = await import('node:vm');
  const bytes = new TextEncoder().encode(sseAnswer('openai-completions', 'from afar'));
  const half = bytes.length >> 1;
  const make = {
    Uint8Array: vm.runInNewContext('(a) => new Uint8Array(a)'),
    DataView: vm.runInNewContext('(a) => new DataView(new Uint8Array(a).buffer)'),
    ArrayBuffer: vm.runInNewContext('(a) => new Uint8Array(a).buffer'),
  };
  for (const [kind, of] of Object.entries(make)) {
    const steps = [bytes.slice(0, half), bytes.slice(half)].map((b) => ({ done: false, value: of(Array.from(b)) }));
    const { last } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: scriptedFetch(steps, []) });
    assert.equal(last.stopReason, 'stop', `${kind}: ${last.errorMessage}`);
    assert.equal(last.content[0].text, 'from afar');
  }
});

test('a body that is an async iterable (node-fetch, a Node stream, an async generator) is read like a ReadableStream; an abort ends it', async () => {
  const { Readable } = await import('node:stream');
  const bytes = new TextEncoder().encode(sseAnswer('openai-completions', 'iterated'));
  const half = bytes.length >> 1;
  const respond = (body) => async () => ({ ok: true, status: 200, statusText: 'OK', headers: new Headers({ 'content-type': 'text/event-stream' }), body });
  const bodies = {
    'a Node stream': () => Readable.from([Buffer.from(bytes.slice(0, half)), Buffer.from(bytes.slice(half))]),
    'an async generator': () => (async function* () { yield bytes.slice(0, half); yield bytes.slice(half); })(),
  };
  for (const [kind, make] of Object.entries(bodies)) {
    const { last } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: respond(make()) });
    assert.equal(last.stopReason, 'stop', `${kind}: ${last.errorMessage}`);
    assert.equal(last.content[0].text, 'iterated');
  }
  // An abort while the iterator waits: the iterator is told (its return), which ends its
  // pending read, as a Node stream's does, and the run ends.
  let returned = false;
  let ended;
  const endless = {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise((resolve) => { ended = () => resolve({ done: true, value: undefined }); }),
      return: async () => { returned = true; ended?.(); return { done: true, value: undefined }; },
    }),
  };
  const controller = new AbortController();
  const run = runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: respond(endless) }, controller.signal);
  setTimeout(() => controller.abort(), 50);
  const { last } = await within(5000, run);
  assert.equal(last.stopReason, 'aborted');
  assert.equal(returned, true);
  // A body that is neither: an error naming it.
  const { last: odd } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: respond('data: text') });
  assert.equal(odd.stopReason, 'error');
  assert.match(odd.errorMessage, /the body is no stream: it has neither getReader\(\) nor Symbol\.asyncIterator/);
});

// A body whose reader answers at once, again and again, with no bytes (a custom `fetch`'s
// stream whose `pull` enqueues empty chunks) made no progress and never let a timer or an
// event run: the abort's event, `timeoutMs`'s timer and the test's own deadline all waited
// behind the reads, forever (found by an outside tester). In a child process, as a spin here
// would freeze this runner's timers too.
test('a body of endless empty chunks does not starve the event loop: an abort, or timeoutMs, ends the run (built-in stream and streamProxy)', async () => {
  const script = `
    import { runAgentLoop, streamSimple, streamProxy } from 'pi-agent-wasm';
    import { modelAt } from ${JSON.stringify(new URL('./shared/four-apis.mjs', import.meta.url).href)};
    let reads = 0;
    const fetch = async () => ({ ok: true, status: 200, statusText: 'OK', headers: new Headers({ 'content-type': 'text/event-stream' }),
      body: new ReadableStream({ pull(c) { reads += 1; c.enqueue(new Uint8Array(0)); } }) });
    const run = (options, signal) => runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [] },
      { model: modelAt('openai-completions', 'http://127.0.0.1:9'), apiKey: 'k', convertToLlm: (m) => m, fetch, ...options }, () => {}, signal, streamSimple);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const aborted = (await run({}, controller.signal)).at(-1);
    const timedOut = (await run({ timeoutMs: 50 })).at(-1);
    const proxied = streamProxy(modelAt('openai-completions', 'http://127.0.0.1:9'), { messages: [] },
      { proxyUrl: 'http://127.0.0.1:9', authToken: 't', fetch, timeoutMs: 50 });
    const viaProxy = await proxied.result();
    console.log(JSON.stringify([aborted.stopReason, timedOut.stopReason, timedOut.errorMessage, reads > 0, viaProxy.stopReason, viaProxy.errorMessage]));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)), encoding: 'utf8', timeout: 20_000,
  });
  const [aborted, timedOut, message, read, viaProxy, proxyMessage] = JSON.parse(stdout);
  assert.equal(aborted, 'aborted');
  assert.equal(timedOut, 'error');
  assert.match(message, /^Request timed out: no data for 50 ms/);
  assert.equal(read, true);
  assert.equal(viaProxy, 'error');
  assert.match(proxyMessage, /^Request timed out: no data for 50 ms/);
});

// A `fetch` that resolves to no Response was reported as "0 status code (no body)", as if a
// server had answered (found by an outside tester).
test('a fetch that gives no Response: an error naming what it gave', async () => {
  const gave = { null: null, undefined, 'a string': 'data: x', 'a number': 42, 'an object': { ok: true } };
  for (const [kind, value] of Object.entries(gave)) {
    const { last } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch: async () => value });
    assert.equal(last.stopReason, 'error', kind);
    assert.equal(last.errorMessage, `Connection error: fetch gave ${kind}, not a Response`);
  }
});

// After the run let go of a body (a timeout here), the glue's read past empty chunks went on
// pulling from an async-iterable body with no `return`, forever: the process never exited
// (found by an outside tester).
test('a body let go after timeoutMs is pulled no more, even an async iterable without return()', async () => {
  let pulls = 0;
  const body = { [Symbol.asyncIterator]: () => ({ next: async () => { pulls += 1; return { done: false, value: new Uint8Array(0) }; } }) };
  const fetch = async () => ({ ok: true, status: 200, statusText: 'OK', headers: new Headers({ 'content-type': 'text/event-stream' }), body });
  const { last } = await runLoop(modelAt('openai-completions', 'http://127.0.0.1:9'), KEY, { fetch, timeoutMs: 100 });
  assert.match(last.errorMessage, /^Request timed out: no data for 100 ms/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const after = pulls;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(pulls, after, 'pulled on after the run let go of the body');
});
