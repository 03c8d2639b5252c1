// Seeded fuzz of streamProxy: damaged bodies in random chunkings, with transport faults,
// must keep every invariant (shared/proxy-fuzz.mjs); bodies pi reads must give pi's events;
// the chunking must never matter; and pi must be seen breaking the invariants, so the
// generator is known to find bugs. Then partial tool arguments, fixed and fuzzed, against
// pi's at every delta.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as pi from '@earendil-works/pi-agent-core';
import { PROXY_TOKEN, sse } from './shared/proxy-server.mjs';
import { normalize, runProxy, withFetch, bodyFetch, faultyFetch } from './shared/proxy-run.mjs';
import { model, context, ev } from './shared/proxy-fixtures.mjs';
import { fuzzCase, invariants, argumentText, USAGE } from './shared/proxy-fuzz.mjs';

const FUZZ_CASES = 400;

test(`fuzz: ${FUZZ_CASES} seeded bodies keep every invariant; pi-readable ones equal pi; chunking never matters`, async () => {
  const piBroken = new Map();
  for (let seed = 1; seed <= FUZZ_CASES; seed++) {
    const c = fuzzCase(seed);
    const call = (impl, chunks) => withFetch(bodyFetch(chunks), () => runProxy(impl, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN }, { timeout: 2000 }));
    const o = await call(ours.streamProxy, c.chunks);
    const p = await call(pi.streamProxy, c.chunks);
    const label = `seed ${seed} (${c.name}): ${JSON.stringify(c.text).slice(0, 300)}`;
    assert.deepEqual(invariants(o, PROXY_TOKEN), [], label);
    const again = await call(ours.streamProxy, c.otherChunks);
    assert.deepEqual(normalize(again.pushed), normalize(o.pushed), `chunking changed the events: ${label}`);
    if (c.mutation.piSane) assert.deepEqual(normalize(o.pushed), normalize(p.pushed), `differs from pi: ${label}`);
    if (c.mutation.same) {
      const plain = await call(ours.streamProxy, [new TextEncoder().encode(sse(c.events))]);
      assert.deepEqual(normalize(o.pushed), normalize(plain.pushed), `not read like the plain body: ${label}`);
    }
    // The same body with a transport fault, through both.
    const faulted = {};
    for (const [name, impl] of [['ours', ours.streamProxy], ['pi', pi.streamProxy]]) {
      const controller = new AbortController();
      const fetchFn = faultyFetch(c.chunks, c.fault, () => setTimeout(() => controller.abort(), 2));
      const onEvent = (e, index) => { if (c.fault.kind === 'abort' && index === c.fault.at) controller.abort(); };
      faulted[name] = await withFetch(fetchFn, () => runProxy(impl, model, context('text'), { proxyUrl: 'http://proxy.invalid', authToken: PROXY_TOKEN, signal: controller.signal }, { timeout: 2000, onEvent }));
    }
    const f = faulted.ours;
    assert.deepEqual(invariants(f, PROXY_TOKEN), [], `with ${c.fault.kind} at ${c.fault.at}: ${label}`);
    const cut = f.pushed.at(-1).error;
    if (c.fault.kind === 'error' && cut?.errorMessage.startsWith('Reading')) assert.equal(cut.errorMessage, 'Reading the proxy response failed: terminated', label);
    // Aborted by the signal (not by a server event saying so): the abort is the message.
    if (cut?.stopReason === 'aborted' && cut.errorMessage !== 'upstream said no') assert.equal(cut.errorMessage, 'Request aborted by user', label);
    if (c.fault.kind === 'error' && c.mutation.piSane) {
      // The events before the failure are pi's; pi words the message as the bare error.
      const strip = (run) => normalize(run.pushed).map((e) => (e.type === 'error' ? { ...e, error: { ...e.error, errorMessage: undefined } } : e));
      assert.deepEqual(strip(f), strip(faulted.pi), `with a reset: ${label}`);
    }
    for (const run of Object.values(faulted)) {
      const broken = invariants(run, PROXY_TOKEN);
      if (run === faulted.pi && broken.length > 0) piBroken.set(`${c.fault.kind} fault`, broken);
    }
    const broken = invariants(p, PROXY_TOKEN);
    if (broken.length > 0) piBroken.set(c.name, [...new Set([...(piBroken.get(c.name) ?? []), ...broken.map((b) => b.replace(/\d+|\{.*/g, '#'))])]);
  }
  // The generator finds real bugs: pi breaks invariants on these kinds of body (holes,
  // usage undefined, "undefined" deltas, and a final message rewritten by whatever comes
  // after done: late lines, or a reset connection).
  const kinds = [...piBroken.keys()];
  for (const kind of ['badIndex', 'noUsage', 'afterDone', 'badDelta', 'error fault']) assert.ok(kinds.includes(kind), `pi broke nothing on ${kind}: ${JSON.stringify([...piBroken])}`);
});

test('partial tool arguments equal pi\'s at every delta, malformed JSON and huge open arrays included', async () => {
  // Arguments stream as toolcall_delta events; pi shows pi-ai's streaming-JSON snapshots,
  // which lag behind the text for a large open container (a copy budget). Both must match.
  const texts = [
    '{"city":"Zürich","n":[1,2,{"deep":"😀 \\"q\\" \\u00e9 \\ud83d\\ude00"}],"t":true,"f":fals',
    '{"a" 1 "b": [1 2 3], "c":: "x", "d": tru, "e": -1.5e+, "f": "\\q\\u12g", "__proto__": {"x": 1}} trailing',
    `{"zeros":[${Array(1200).fill(0).join(',')}],"after":"done"}`,
    `{"grid":[${Array(120).fill('[1,[2,[3]]]').join(',')}]}`,
    '[1,2,3]',
    '"just a string"',
    '{"unterminated": "abc',
    '}{"stray":1}',
  ];
  let lagged = false;
  for (const text of texts) {
    for (const size of [1, 2, 7, 64]) {
      const events = [ev.start, { type: 'toolcall_start', contentIndex: 0, id: 'c', toolName: 'lookup' }];
      for (let i = 0; i < text.length; i += size) events.push({ type: 'toolcall_delta', contentIndex: 0, delta: text.slice(i, i + size) });
      events.push({ type: 'done', reason: 'toolUse', usage: USAGE });
      const chunks = [new TextEncoder().encode(sse(events))];
      const o = await withFetch(bodyFetch(chunks), () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
      const p = await withFetch(bodyFetch(chunks), () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
      assert.deepEqual(normalize(o.pushed), normalize(p.pushed), `${text.slice(0, 60)} in ${size}-char deltas`);
      const zeros = o.pushed.filter((e) => e.type === 'toolcall_delta').map((e) => e.partial.content[0].arguments.zeros?.length ?? 0);
      let read = 0;
      o.pushed.filter((e) => e.type === 'toolcall_delta').forEach((e, i) => { read += e.delta.length; if (text.startsWith('{"zeros"') && zeros[i] < Math.floor((read - 11) / 2) - 1) lagged = true; });
    }
  }
  assert.ok(lagged, 'the huge-array case did not exercise the lagging preview');
});

test('partial tool arguments, fuzzed: 300 seeded (sometimes damaged) JSON texts in random deltas equal pi\'s', async () => {
  for (let seed = 1; seed <= 300; seed++) {
    const { text, deltas } = argumentText(seed);
    const events = [ev.start, { type: 'toolcall_start', contentIndex: 0, id: 'c', toolName: 'lookup' }, ...deltas.map((delta) => ({ type: 'toolcall_delta', contentIndex: 0, delta })), { type: 'done', reason: 'toolUse', usage: USAGE }];
    const chunks = [new TextEncoder().encode(sse(events))];
    const args = (run) => run.pushed.filter((e) => e.type === 'toolcall_delta').map((e) => e.partial.content[0].arguments);
    const o = await withFetch(bodyFetch(chunks), () => runProxy(ours.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
    const p = await withFetch(bodyFetch(chunks), () => runProxy(pi.streamProxy, model, context('text'), { proxyUrl: 'http://x.invalid', authToken: PROXY_TOKEN }));
    assert.deepEqual(args(o), args(p), `seed ${seed}: ${JSON.stringify(text)}`);
  }
});
