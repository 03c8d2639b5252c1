import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
const which = process.argv[2] || 'ours';
const impl = which === 'ours' ? { run: ours.runAgentLoop, stream: ours.createAssistantMessageEventStream } : { run: piCore.runAgentLoop, stream: piStream };
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const model = { id: 'bench', api: 'bench', provider: 'bench' };
const base = { role: 'assistant', api: 'bench', provider: 'bench', model: 'bench', usage };
function resp(make, turn, last) {
  const s = make();
  const call = { type: 'toolCall', id: `read${turn}`, name: 'read', arguments: { path: `src/file${turn}.rs` } };
  const partial = { ...base, content: last ? [{type:'text', text:'done'}] : [call], stopReason: last ? 'stop' : 'toolUse', timestamp: Date.now() };
  s.push({ type: 'start', partial });
  s.push({ type: 'done', reason: partial.stopReason, message: partial });
  return s;
}
const FILE = 'fn main() { println!("hello"); }\n'.repeat(16384 / 32);
const read = { name: 'read', label: 'read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  execute: async (id) => ({ content: [{ type: 'text', text: FILE + id }], details: {} }) };
const N = +(process.argv[3] || 400);
for (let r = 0; r < 4; r++) {
  let turn = 0;
  const streamFn = () => { turn += 1; return resp(impl.stream, turn, turn >= N); };
  const t0 = performance.now();
  await impl.run([{ role: 'user', content: 'go', timestamp: 1 }], { messages: [], tools: [read] }, { model, convertToLlm: (m) => m }, async () => {}, undefined, streamFn);
  console.log(which, ((performance.now() - t0) / N).toFixed(3), 'ms/turn');
}
