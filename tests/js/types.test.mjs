// The event type strings are declared in two places: Rust (src/event.rs AGENT_EVENT_TYPES)
// and the TypeScript unions (src/js/index.d.ts, src/js/ai.d.ts). They must list the same strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';

const rust = readFileSync(join(repoRoot, 'src/event.rs'), 'utf8');
// The loop's types (index.d.ts) and pi-ai's data model (ai.d.ts).
const dts = ['index.d.ts', 'ai.d.ts'].map((f) => readFileSync(join(repoRoot, 'src/js', f), 'utf8')).join('\n');

function rustEventTypes() {
  const block = rust.slice(rust.indexOf('pub const AGENT_EVENT_TYPES'), rust.indexOf('];', rust.indexOf('pub const AGENT_EVENT_TYPES')));
  return [...block.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
}

function tsUnion(name) {
  const start = dts.indexOf(`export type ${name} =`);
  const end = dts.indexOf('\n\n', start);
  return [...dts.slice(start, end).matchAll(/type: "([a-z_]+)"/g)].map((m) => m[1]);
}

test('AgentEvent type strings: Rust list equals the TypeScript union', () => {
  assert.deepEqual([...tsUnion('AgentEvent')].sort(), [...rustEventTypes()].sort());
  assert.equal(rustEventTypes().length, 10);
});

test('AssistantMessageEvent type strings: the TypeScript union lists all twelve of spec L-18', () => {
  assert.deepEqual(tsUnion('AssistantMessageEvent'), [
    'start', 'text_start', 'text_delta', 'text_end', 'thinking_start', 'thinking_delta', 'thinking_end',
    'toolcall_start', 'toolcall_delta', 'toolcall_end', 'done', 'error',
  ]);
  const kinds = [...rust.matchAll(/=> "([a-z_]+)",/g)].map((m) => m[1]);
  for (const t of tsUnion('AssistantMessageEvent')) assert.ok(kinds.includes(t), t);
});
