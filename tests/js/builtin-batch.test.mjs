// The built-in stream hands each network chunk's updates to the glue in one batch, which
// applies them to the JS partial and emits each `message_update` itself (issue 13). These
// tests send a whole response in one write, so many events share one chunk, and check that
// the batch keeps pi's per-event semantics, side by side with pi-agent-core 1.6.0 and
// pi-ai 1.6.0's streamSimple over the same HTTP answer:
// - an async sink is a barrier between updates of one chunk (L-140);
// - a sink that throws, or returns a thenable that rejects or whose `then` getter throws,
//   on an update in the middle of a chunk rejects the run with that error (L-82), and no
//   later update is delivered;
// - each update's `message` is the partial as of that event, not as of the chunk's end
//   (pi's provider reads ahead of its consumer, so its copies may already show later text:
//   there the comparison with pi leaves the copies out);
// - an abort from inside a sink mid-chunk stops the updates there and ends the response as
//   aborted, as in pi, holding what was delivered (pi's provider reads a few events ahead, by
//   an amount its timing decides, so only the outcome is compared with pi); once the end of
//   the response was read, the updates that close it still come and it stands.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple, getModel } from '@earendil-works/pi-ai/compat';
import { faultServer } from './shared/four-apis.mjs';

const FIXTURES = new URL('../fixtures/openai-completions/', import.meta.url);
// Ours twice: the loop's default stream (the built-in provider inside the loop), and the
// package's streamSimple passed as the stream function, as pi's is.
const IMPLS = {
  ours: [ours.runAgentLoop, undefined],
  oursStreamSimple: [ours.runAgentLoop, ours.streamSimple],
  pi: [pi.runAgentLoop, piStreamSimple],
};
const OURS = ['ours', 'oursStreamSimple'];

/** A server that answers request n with fixture `files[n]` (the last one repeated), whole;
 * a file named `anthropic/…` is one of the Anthropic fixtures. */
async function serve(files) {
  const server = await faultServer((_req, res, n) => {
    const file = files[Math.min(n, files.length - 1)];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(readFileSync(new URL(file, file.startsWith('anthropic/') ? new URL('../', FIXTURES) : FIXTURES)));
  });
  return { baseUrl: `${server.origin}/v1`, origin: server.origin, close: server.close };
}

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

const tool = {
  name: 'read', label: 'Read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  execute: async () => ({ content: [{ type: 'text', text: 'file body' }], details: {} }),
};

/** Runs `impl` against a fresh server with the sink and signal `make()` gives; returns what
 * the sink logged and how the run settled. Clock values are set aside. */
async function run(impl, files, make) {
  const { emit, signal } = make();
  const server = await serve(files);
  servers.push(server);
  const model = files[0].startsWith('anthropic/')
    ? { ...getModel('anthropic', 'claude-sonnet-4-5'), baseUrl: server.origin }
    : { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
  const log = [];
  const [runAgentLoop, streamSimple] = IMPLS[impl];
  let outcome;
  try {
    const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [tool] },
      { model, apiKey: 'sk-test', convertToLlm: (m) => m }, (e) => emit(e, log), signal, streamSimple);
    outcome = { messages };
  } catch (error) {
    outcome = { error: error instanceof Error ? error.message : String(error) };
  }
  return JSON.parse(JSON.stringify({ log, outcome }, (k, v) => (k === 'timestamp' || k === 'durationMs' ? 0 : v)));
}

/** Runs ours both ways and pi; they must agree (with `strip` applied to each log line).
 * Returns ours with the default stream. */
async function same(files, make, strip = (l) => l) {
  const b = await run('pi', files, make);
  let first;
  for (const impl of OURS) {
    const a = await run(impl, files, make);
    assert.deepEqual({ ...a, log: a.log.map(strip) }, { ...b, log: b.log.map(strip) }, `${impl}: ${files.join()}`);
    first ??= a;
  }
  return first;
}

/** A log line without its copy of the content. */
const kindOnly = (l) => l.replace(/ \[.*$/, '');

test('L-140: an async sink is a barrier between the updates of one network chunk; each update shows the partial as of its event', async () => {
  const make = () => ({
    emit: async (e, log) => {
      if (e.type !== 'message_update') return void log.push(e.type);
      const { type, delta, contentIndex } = e.assistantMessageEvent;
      log.push(`begin ${type} ${contentIndex} ${JSON.stringify(delta)} ${JSON.stringify(e.message.content)}`);
      await new Promise((r) => setTimeout(r, 1));
      await null;
      log.push('end');
    },
  });
  for (const files of [['text.sse'], ['tool_parallel.sse', 'text.sse'], ['thinking.sse'], ['usage_cached.sse']]) {
    const { log } = await same(files, make, kindOnly);
    // Every begin is followed by its own end before the next event.
    for (let i = 0; i < log.length; i++) if (log[i].startsWith('begin')) assert.equal(log[i + 1], 'end', files.join());
    // Ours: a text or thinking delta's copy ends with that delta, and the block's text grew by exactly it.
    const grown = new Map();
    for (const line of log.filter((l) => / (text|thinking)_delta /.test(l))) {
      const [, index, delta, content] = line.match(/^begin \w+ (\d+) (".*?(?<!\\)") (\[.*\])$/);
      const block = JSON.parse(content)[Number(index)];
      const text = block.text ?? block.thinking;
      const before = grown.get(index) ?? '';
      assert.equal(text, before + JSON.parse(delta), files.join());
      grown.set(index, text);
    }
    assert.ok(grown.size > 0, files.join());
  }
});

test('L-82: a sink that fails on an update in the middle of a chunk rejects the run; no later update is delivered', async () => {
  const failures = {
    throws: () => { throw new Error('sink threw'); },
    rejects: () => Promise.reject(new Error('sink rejected')),
    'then getter throws': () => ({ get then() { throw new Error('then getter threw'); } }),
    'thenable rejects': () => ({ then(_ok, fail) { fail(new Error('thenable rejected')); } }),
  };
  for (const [how, fail] of Object.entries(failures)) {
    for (const at of [1, 3]) {
      const make = () => {
        let seen = 0;
        return {
          emit: (e, log) => {
            log.push(e.type === 'message_update' ? e.assistantMessageEvent.type : e.type);
            if (e.type === 'message_update' && ++seen === at) return fail();
            return undefined;
          },
        };
      };
      const { log, outcome } = await same(['text.sse'], make);
      assert.ok(outcome.error, `${how} at ${at}`);
      // The failing update is the last event delivered.
      assert.equal(log.slice(log.indexOf('text_start')).length, at, `${how} at ${at}`);
    }
  }
});

test('an abort from inside a sink in the middle of a chunk stops the updates there; the response ends aborted with what was delivered', async () => {
  for (const files of [['text.sse'], ['thinking.sse'], ['tool_parallel.sse', 'text.sse']]) {
    for (const at of [1, 2, 3]) {
      const make = () => {
        const controller = new AbortController();
        let seen = 0;
        return {
          signal: controller.signal,
          emit: (e, log) => {
            const u = e.assistantMessageEvent;
            log.push(e.type === 'message_update' ? `${u.type} ${JSON.stringify(u.delta ?? '')}` : e.type);
            if (e.type === 'message_update' && ++seen === at) controller.abort();
          },
        };
      };
      const b = await run('pi', files, make);
      for (const impl of OURS) {
        const a = await run(impl, files, make);
        const what = `${impl}: ${files} at ${at}`;
        for (const { log, outcome } of [a, b]) {
          const last = outcome.messages.at(-1);
          assert.equal(last.stopReason, 'aborted', what);
          assert.equal(last.errorMessage, 'Request was aborted', what);
          assert.deepEqual(log.slice(-3), ['message_end', 'turn_end', 'agent_end'], what);
          assert.ok(!log.includes('tool_execution_start'), what);
        }
        // Ours: nothing after the update that aborted, and the message holds exactly the text
        // the delivered deltas built (pi's provider reads a few events further).
        const updates = a.log.filter((l) => /^(text|thinking|toolcall)_/.test(l));
        assert.equal(updates.length, at, what);
        const delivered = updates.filter((l) => l.startsWith('text_delta')).map((l) => JSON.parse(l.slice(11))).join('');
        const text = a.outcome.messages.at(-1).content.filter((c) => c.type === 'text').map((c) => c.text).join('');
        assert.equal(text, delivered, what);
      }
    }
  }
});

test('an abort in the updates that close a response whose end was read leaves it complete, as pi does', async () => {
  // tool_parallel.sse ends with two toolcall_end updates after its finish reason: aborting in
  // the first lets the response stand (toolUse); the tools then see the abort.
  const make = () => {
    const controller = new AbortController();
    return {
      signal: controller.signal,
      emit: (e, log) => {
        const u = e.assistantMessageEvent;
        log.push(e.type === 'message_update' ? u.type : e.type);
        if (u?.type === 'toolcall_end') controller.abort();
      },
    };
  };
  const b = await run('pi', ['tool_parallel.sse', 'text.sse'], make);
  for (const impl of OURS) {
    const a = await run(impl, ['tool_parallel.sse', 'text.sse'], make);
    for (const { outcome } of [a, b]) {
      const first = outcome.messages.find((m) => m.role === 'assistant');
      assert.equal(first.stopReason, 'toolUse', impl);
      const results = outcome.messages.filter((m) => m.role === 'toolResult');
      assert.equal(results.length, 2, impl);
      for (const r of results) assert.equal(r.isError, true, impl);
    }
    assert.deepEqual(a.outcome.messages.filter((m) => m.role === 'toolResult').map((m) => m.content),
      b.outcome.messages.filter((m) => m.role === 'toolResult').map((m) => m.content), impl);
  }
});

test('an abort on the last content update, with the end in the same chunk, ends the response aborted with all its content, as pi does', async () => {
  // pi-ai checks the signal after its read loop, which ends after its consumer saw the
  // last content update: the abort there is seen. Ours cuts at the end's mark.
  const cases = [
    [['text.sse'], (u, last) => u.type === 'text_delta' && last],
    [['anthropic/text.sse'], (u) => u.type === 'text_end'],
    [['anthropic/tool_single.sse', 'anthropic/text.sse'], (u) => u.type === 'toolcall_end'],
  ];
  for (const [files, when] of cases) {
    const make = () => {
      const controller = new AbortController();
      const deltas = [];
      return {
        signal: controller.signal,
        emit: (e, log) => {
          const u = e.assistantMessageEvent;
          log.push(e.type === 'message_update' ? u.type : e.type);
          if (u?.type === 'text_delta') deltas.push(u.delta);
          const last = u?.type === 'text_delta' && e.message.content[u.contentIndex].text === 'Hello, wörld 😀!';
          if (u && when(u, last)) controller.abort();
        },
      };
    };
    const b = await run('pi', files, make);
    for (const impl of OURS) {
      const a = await run(impl, files, make);
      for (const { outcome } of [a, b]) {
        const answer = outcome.messages.find((m) => m.role === 'assistant');
        assert.equal(answer.stopReason, 'aborted', `${impl}: ${files}`);
        assert.ok(!outcome.messages.some((m) => m.role === 'toolResult'), `${impl}: ${files}`);
      }
      const content = (r) => r.outcome.messages.find((m) => m.role === 'assistant').content;
      assert.deepEqual(content(a), content(b), `${impl}: ${files}`);
    }
  }
});

test('a sink return value is read as pi reads it: only its `then` (a Proxy whose other traps throw is no thenable)', async () => {
  const traps = { getPrototypeOf() { throw new Error('proto trap'); }, has() { throw new Error('has trap'); } };
  const make = () => ({
    emit: (e, log) => {
      log.push(e.type);
      return e.type === 'message_update' ? new Proxy({}, traps) : undefined;
    },
  });
  const { outcome } = await same(['text.sse'], make);
  assert.equal(outcome.messages.at(-1).stopReason, 'stop');
});

test('a sink that replaces or deletes the live partial\'s content breaks nothing: the run resolves (pi\'s rejects when it is deleted)', async () => {
  for (const [i, change] of [(p) => { p.content = []; }, (p) => { delete p.content; }, (p) => { p.content = null; }].entries()) {
    const make = () => {
      let seen = 0;
      return {
        emit: (e, log) => {
          log.push(e.type);
          if (e.type === 'message_update' && ++seen === 2) change(e.assistantMessageEvent.partial);
        },
      };
    };
    for (const impl of i === 0 ? [...OURS, 'pi'] : OURS) {
      const { outcome } = await run(impl, ['text.sse'], make);
      assert.ok(outcome.messages, `${impl}: ${outcome.error}`);
    }
    // Ours: the final message is the provider's, whatever the sink did to the copy it was shown.
    for (const impl of OURS) {
      const { outcome } = await run(impl, ['text.sse'], make);
      assert.deepEqual(outcome.messages.at(-1).content, [{ type: 'text', text: 'Hello, wörld 😀!' }], impl);
    }
  }
});

test('no update is held while the stream waits for the network: a chunk\'s updates reach the sink before the next chunk is sent', async () => {
  // The server sends the first three events, then waits until the sink has seen the second
  // text delta before it sends the rest. Were updates held until more bytes came, the run
  // would stall until the server gave up.
  const text = readFileSync(new URL('text.sse', FIXTURES), 'utf8');
  const events = text.split('\n\n').filter(Boolean).map((e) => `${e}\n\n`);
  for (const impl of OURS) {
    let seen;
    const sawSecondDelta = new Promise((resolve) => { seen = resolve; });
    let gaveUp = false;
    const server = await faultServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events.slice(0, 3).join(''));
      const timeout = new Promise((resolve) => setTimeout(() => { gaveUp = true; resolve(); }, 3000));
      await Promise.race([sawSecondDelta, timeout]);
      res.end(events.slice(3).join(''));
    });
    servers.push(server);
    const model = { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: `${server.origin}/v1` };
    let deltas = 0;
    const [runAgentLoop, streamFn] = IMPLS[impl];
    const messages = await runAgentLoop([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [] },
      { model, apiKey: 'sk-test', convertToLlm: (m) => m },
      (e) => { if (e.assistantMessageEvent?.type === 'text_delta' && ++deltas === 2) seen(); }, undefined, streamFn);
    assert.equal(gaveUp, false, `${impl}: the first chunk's updates were held until the server gave up`);
    assert.equal(messages.at(-1).stopReason, 'stop', impl);
  }
});

test('Agent with the built-in stream: an async listener is awaited per update of a chunk, and an abort from it stops the updates there', async () => {
  for (const at of [1, 3]) {
    const server = await serve(['tool_parallel.sse', 'text.sse']);
    servers.push(server);
    const model = { ...getModel('openai', 'gpt-4o-mini'), id: 'gpt-test', api: 'openai-completions', baseUrl: server.baseUrl };
    const agent = new ours.Agent({ initialState: { model, tools: [tool] }, getApiKey: () => 'sk-test' });
    const log = [];
    let updates = 0;
    agent.subscribe(async (event) => {
      if (event.type !== 'message_update') return;
      const n = ++updates;
      log.push(`begin ${n}`);
      await new Promise((r) => setTimeout(r, 1));
      log.push(`end ${n}`);
      if (n === at) agent.abort();
    });
    await agent.prompt('go');
    // Each update's listener finished before the next began, and none came after the abort.
    assert.deepEqual(log, Array.from({ length: at }, (_, i) => [`begin ${i + 1}`, `end ${i + 1}`]).flat());
    const last = agent.state.messages.at(-1);
    assert.equal(last.stopReason, 'aborted');
    assert.equal(agent.state.isStreaming, false);
    // No tool ran for the aborted response.
    assert.ok(!agent.state.messages.some((m) => m.role === 'toolResult'));
  }
});
