// @vitest-environment jsdom
// A unit test of a calculator agent, as a frontend app tests its code: vitest with the jsdom
// environment (a DOM and the browser's globals, in Node). The agent asks an OpenAI-compatible
// server (LLM_BASE_URL and LLM_MODEL, a local Ollama by default) "what is 17*23?", runs the
// tool, which lists its call in the document, and streams the answer into the document.
import { expect, test } from 'vitest';
import { Agent } from 'pi-agent-wasm';

const model = {
  id: process.env.LLM_MODEL ?? 'qwen2.5:7b', name: 'Local model', api: 'openai-completions', provider: 'local',
  baseUrl: process.env.LLM_BASE_URL ?? 'http://127.0.0.1:11434/v1',
  reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 32768, maxTokens: 4096,
};

test('the agent runs the calculator and answers with its result', async () => {
  document.body.innerHTML = '<ol id="tools"></ol><p id="answer"></p>';
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
    getApiKey: () => process.env.LLM_API_KEY ?? 'local-key',
  });
  agent.subscribe((event) => {
    if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
      answer.textContent += event.assistantMessageEvent.delta;
    }
  });

  await agent.prompt('what is 17*23?');

  const last = agent.state.messages.at(-1);
  expect(last.errorMessage).toBeUndefined();
  expect(last.stopReason).toBe('stop');
  expect([...toolList.children].map((li) => li.textContent)).toEqual(['calc {"a":17,"b":23} = 391']);
  expect(answer.textContent).toContain('391');
}, 30000);
