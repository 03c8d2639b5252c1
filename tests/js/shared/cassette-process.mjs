// A process that records an Agent's run into a cassette file, line by line, and dies by
// SIGKILL inside a tool (`first`); and one that restores the agent from the last checkpoint
// and resumes, recording on into the same file (`second`). Each appends the events its
// listener saw, as JSON at delivery, to events.jsonl. tests/js/cassette.test.mjs replays the
// file and compares.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from 'pi-agent-wasm';
import { Recorder } from 'pi-agent-wasm/cassette';
import { model, scriptedStream, tools } from './cassette-run.mjs';

const [phase, dir] = process.argv.slice(2);
const line = (file) => (text) => appendFileSync(join(dir, file), `${text}\n`);
const [slow, fast] = tools();
// The slow tool kills the process on turn 2, while it runs.
const dying = { ...slow, execute: async (id, args, signal, onUpdate) => {
  if (phase === 'first' && args.turn === 2) process.kill(process.pid, 'SIGKILL');
  return slow.execute(id, args, signal, onUpdate);
} };
const options = {
  initialState: { model, tools: [dying, fast], systemPrompt: 'You are scripted.' },
  streamFn: scriptedStream,
  onCheckpoint: (snapshot) => writeFileSync(join(dir, 'snapshot.json'), JSON.stringify(snapshot)),
};
const recorder = new Recorder({ onLine: line('cassette.jsonl'), append: phase === 'second' ? 'agent' : undefined });
const agent = phase === 'first'
  ? new Agent({ ...options, record: recorder })
  : new Agent({ ...options, record: recorder, restore: JSON.parse(readFileSync(join(dir, 'snapshot.json'), 'utf8')) });
const seen = line('events.jsonl');
agent.subscribe((event) => seen(JSON.stringify(event)));
if (phase === 'first') await agent.prompt('Work for 20 turns.');
else await agent.resume();
