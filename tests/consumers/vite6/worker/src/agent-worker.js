// A calculator agent in a module Web Worker: for each question the page sends, the agent
// asks the model server, runs the tool here in the worker and posts each tool call, the
// streamed answer and the end of the run to the page.
import { Agent } from 'pi-agent-wasm';

const calc = {
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => {
    const result = String(a * b);
    self.postMessage({ type: 'tool', text: `calc ${JSON.stringify({ a, b })} = ${result}` });
    return { content: [{ type: 'text', text: result }], details: {} };
  },
};

self.addEventListener('message', async ({ data: { question, baseUrl, modelId } }) => {
  const model = {
    id: modelId, name: 'Local model', api: 'openai-completions', provider: 'local', baseUrl,
    reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 32768, maxTokens: 4096,
  };
  const agent = new Agent({
    initialState: { systemPrompt: 'Be terse.', model, tools: [calc] },
    getApiKey: () => 'local-key',
  });
  agent.subscribe((event) => {
    if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
      self.postMessage({ type: 'text', delta: event.assistantMessageEvent.delta });
    }
  });
  try {
    await agent.prompt(question);
    const last = agent.state.messages.at(-1);
    self.postMessage({ type: 'end', stopReason: last.stopReason, error: last.errorMessage });
  } catch (error) {
    self.postMessage({ type: 'end', stopReason: 'error', error: String(error) });
  }
});
