// Records a run of the demo (its scripted model, www/demo-model.mjs, served on 127.0.0.1, and
// its tools, www/tools.js) into examples/cassette/demo.cassette.jsonl: the cassette that
// examples/cassette/demo.test.mjs replays. Run it again after changing the demo:
//   node examples/cassette/record-demo.mjs
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { Agent } from 'pi-agent-wasm';
import { Recorder } from 'pi-agent-wasm/cassette';
import { respond, stream } from '../../www/demo-model.mjs';
import { demoTools } from '../../www/tools.js';

const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => { raw += d; });
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const [piece] of stream(respond(JSON.parse(raw)))) res.write(piece);
    res.end();
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const model = {
  id: 'demo-scripted', name: 'Scripted demo model', api: 'openai-completions', provider: 'demo',
  baseUrl: `http://127.0.0.1:${server.address().port}/v1`, reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32768, maxTokens: 4096,
};
const recorder = new Recorder();
const tools = demoTools.filter((t) => t.name === 'calculator' || t.name === 'clock');
const agent = new Agent({ initialState: { model, tools }, getApiKey: () => 'demo', record: recorder });
await agent.prompt('What is 17*23 and what time is it?');
await agent.prompt('Thanks! And 6*7?');
server.close();
writeFileSync(new URL('./demo.cassette.jsonl', import.meta.url), recorder.toString());
console.log(agent.state.messages.at(-1).content.find((b) => b.type === 'text')?.text);
