// A calculator agent in the browser: the model answers through an OpenAI-compatible server
// (a local Ollama by default; this page's ?llm= and ?model= parameters name another), the
// agent runs the tool in the page and streams the answer into it.
import { Agent } from 'pi-agent-wasm';

const params = new URLSearchParams(location.search);
const baseUrl = params.get('llm') ?? 'http://127.0.0.1:11434/v1';
const model = {
  id: params.get('model') ?? 'qwen2.5:7b', name: 'Local model', api: 'openai-completions', provider: 'local', baseUrl,
  reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 32768, maxTokens: 4096,
};

const toolList = document.querySelector('#tools');
const answer = document.querySelector('#answer');

const calc = {
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => {
    const result = String(a * b);
    const item = document.createElement('li');
    item.textContent = `calc ${JSON.stringify({ a, b })} = ${result}`;
    toolList.append(item);
    return { content: [{ type: 'text', text: result }], details: {} };
  },
};

const agent = new Agent({
  initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
  getApiKey: () => 'local-key',
});
agent.subscribe((event) => {
  if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
    answer.textContent += event.assistantMessageEvent.delta;
  }
});

agent.prompt('what is 17*23?').then(
  () => {
    const last = agent.state.messages.at(-1);
    document.body.dataset.state = last.stopReason === 'stop' ? 'done' : `failed: ${last.errorMessage}`;
  },
  (error) => {
    document.body.dataset.state = `failed: ${error}`;
  },
);
