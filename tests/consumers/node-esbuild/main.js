// A calculator agent on the command line, bundled into one file for a server or a
// serverless function (ESM or CommonJS output). Asks an OpenAI-compatible server
// (LLM_BASE_URL and LLM_MODEL, a local Ollama by default; the key in LLM_API_KEY), runs the
// tool, prints each tool call and the answer.
import { Agent } from 'pi-agent-wasm';

const model = {
  id: process.env.LLM_MODEL ?? 'qwen2.5:7b', name: 'Local model', api: 'openai-completions', provider: 'local',
  baseUrl: process.env.LLM_BASE_URL ?? 'http://127.0.0.1:11434/v1',
  reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 32768, maxTokens: 4096,
};

const calc = {
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => {
    const result = String(a * b);
    console.log(`calc ${JSON.stringify({ a, b })} = ${result}`);
    return { content: [{ type: 'text', text: result }], details: {} };
  },
};

async function main() {
  const agent = new Agent({
    initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
    getApiKey: () => process.env.LLM_API_KEY ?? 'local-key',
  });
  agent.subscribe((event) => {
    if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
      process.stdout.write(event.assistantMessageEvent.delta);
    }
  });
  await agent.prompt('what is 17*23?');
  process.stdout.write('\n');
  const last = agent.state.messages.at(-1);
  if (last.stopReason !== 'stop') {
    console.error(`the run ended with ${last.stopReason}: ${last.errorMessage}`);
    process.exitCode = 1;
  }
}

main();
