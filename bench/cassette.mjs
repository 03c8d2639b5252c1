// Record, replay and fork (pi-agent-wasm/cassette): the figures issue 34 asks for.
//   (R) recording's cost: scenario (A) of bench/loop.mjs with `config.record`, against the
//       same runs without it, alternating; also with the cassette written out as text.
//   (P) replaying a 1,000-turn cassette: time per turn over the first and the last 100 turns.
//   (K) forking at event N: the time from `fork` to the forked run's first event, at 10%,
//       50% and 90% of the 1,000-turn run (the run before N is not replayed).
//   Cassette size per turn at 250 and 1,000 turns.
// Run: node bench/cassette.mjs   (after npm run build). Timings are reported, never asserted.
import * as ours from 'pi-agent-wasm';
import { Recorder, replay, fork } from 'pi-agent-wasm/cassette';
import { scenarioA } from './scenario-a.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const impl = { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream };

console.log('(R) recording\'s cost: scenario (A) with config.record, this package');
{
  const times = { plain: [], recorded: [], text: [] };
  for (let i = 0; i < 3; i++) await scenarioA(impl), await scenarioA(impl, { record: new Recorder() });
  for (let i = 0; i < 21; i++) {
    const order = i % 2 ? ['plain', 'recorded'] : ['recorded', 'plain'];
    for (const kind of order) {
      if (kind === 'plain') times.plain.push((await scenarioA(impl)).ms);
      else {
        const recorder = new Recorder();
        const r = await scenarioA(impl, { record: recorder });
        times.recorded.push(r.ms);
        const t0 = performance.now();
        recorder.toString();
        times.text.push(r.ms + performance.now() - t0);
      }
    }
  }
  const [p, r, t] = [median(times.plain), median(times.recorded), median(times.text)];
  console.log(`  not recorded ${p.toFixed(1)} ms, recorded ${r.toFixed(1)} ms, recorded and written as text ${t.toFixed(1)} ms`);
  console.log(`  recording's cost: ${((r / p - 1) * 100).toFixed(1)}% (with the text: ${((t / p - 1) * 100).toFixed(1)}%) (goal <= 10%)`);
}

const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'bench', name: 'bench', api: 'bench', provider: 'bench', baseUrl: '', reasoning: false, input: ['text'], cost: usage.cost, contextWindow: 1e9, maxTokens: 1e6 };
/** A coding session's turn: a few text deltas, then a call of `read` (but the last). */
function session(turns) {
  return (_model, context) => {
    const n = context.messages.filter((m) => m.role === 'assistant').length;
    const s = ours.createAssistantMessageEventStream();
    const partial = { role: 'assistant', api: 'bench', provider: 'bench', model: 'bench', usage, content: [{ type: 'text', text: '' }], stopReason: 'stop', timestamp: Date.now() };
    s.push({ type: 'start', partial });
    for (const word of ['Reading ', 'file ', String(n)]) {
      partial.content[0].text += word;
      s.push({ type: 'text_delta', contentIndex: 0, delta: word, partial });
    }
    if (n < turns - 1) {
      partial.content.push({ type: 'toolCall', id: `read${n}`, name: 'read', arguments: { path: `src/file${n}.rs` } });
      partial.stopReason = 'toolUse';
    }
    s.push({ type: 'done', reason: partial.stopReason, message: partial });
    return s;
  };
}
const FILE = 'fn main() { println!("hello"); }\n'.repeat(32);
const read = { name: 'read', label: 'read', description: 'Reads a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: async (_id, { path }) => ({ content: [{ type: 'text', text: `${path}\n${FILE}` }], details: {} }) };
const untouchable = { ...read, execute: () => { throw new Error('replay ran the tool'); } };

async function recordSession(turns) {
  const recorder = new Recorder();
  const agent = new ours.Agent({ initialState: { model, tools: [read] }, streamFn: session(turns), record: recorder });
  await agent.prompt('Read the files.');
  return recorder.toString();
}

const small = await recordSession(250);
const cassette = await recordSession(1000);
console.log('cassette size');
console.log(`  250 turns ${(small.length / 1024).toFixed(0)} KB (${(small.length / 250 / 1024).toFixed(2)} KB a turn), 1,000 turns ${(cassette.length / 1024).toFixed(0)} KB (${(cassette.length / 1000 / 1024).toFixed(2)} KB a turn): ratio ${(cassette.length / small.length).toFixed(2)} for 4x the turns`);

console.log('(P) replaying the 1,000-turn cassette');
{
  const firsts = [], lasts = [], wholes = [];
  for (let i = 0; i < 5; i++) {
    const stamps = [];
    const t0 = performance.now();
    await replay(cassette, { initialState: { tools: [untouchable] }, streamFn: () => { throw new Error('replay asked the model'); }, onEvent: (e) => { if (e.type === 'turn_end') stamps.push(performance.now()); } });
    wholes.push(performance.now() - t0);
    firsts.push((stamps[99] - stamps[0]) / 99);
    lasts.push((stamps[999] - stamps[900]) / 99);
  }
  const [f, l] = [median(firsts), median(lasts)];
  console.log(`  whole replay ${median(wholes).toFixed(0)} ms; per turn: turns 1-100 ${f.toFixed(3)} ms, turns 901-1000 ${l.toFixed(3)} ms, last/first ${(l / f).toFixed(2)} (goal: linear, no step slower than the first)`);
}

console.log('(K) forking the 1,000-turn cassette at event N: time to the forked run\'s first event');
{
  const events = cassette.split('\n').filter((l) => l.includes('"type":"event"')).length;
  const total = Number(cassette.split('\n').filter((l) => l.includes('"type":"event"')).at(-1).match(/"i":(\d+)/)[1]);
  const parts = [];
  for (const share of [0.1, 0.5, 0.9]) {
    const at = Math.floor(total * share);
    const times = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      let first;
      await fork(cassette, { at }, { initialState: { tools: [read] }, streamFn: session(1000), onEvent: () => { first ??= performance.now() - t0; } }).catch(() => {});
      times.push(first ?? NaN);
    }
    parts.push(`at ${Math.round(share * 100)}% (event ${at}) ${median(times).toFixed(1)} ms`);
  }
  console.log(`  ${parts.join(', ')} (${events} event boundaries; goal: not growing with N beyond reading the cassette)`);
}
