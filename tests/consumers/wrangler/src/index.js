// A calculator agent as a Cloudflare Worker: each request asks the model behind
// LLM_BASE_URL (an OpenAI-compatible server; it and LLM_MODEL are vars in wrangler.toml, the
// key is the secret LLM_API_KEY) "what is 17*23?" (or the ?q= question), runs the tool in
// the Worker and answers with the tool calls and the model's answer as JSON.
import { Agent } from 'pi-agent-wasm';

const calc = (log) => ({
  name: 'calc',
  label: 'Calculator',
  description: 'Multiplies two numbers',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async (_id, { a, b }) => {
    const result = String(a * b);
    log.push(`calc ${JSON.stringify({ a, b })} = ${result}`);
    return { content: [{ type: 'text', text: result }], details: {} };
  },
});

export default {
  async fetch(request, env) {
    const question = new URL(request.url).searchParams.get('q') ?? 'what is 17*23?';
    const model = {
      id: env.LLM_MODEL, name: 'Local model', api: 'openai-completions', provider: 'local',
      baseUrl: env.LLM_BASE_URL, reasoning: false, input: ['text'],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 32768, maxTokens: 4096,
    };
    const tools = [];
    let streamed = '';
    const agent = new Agent({
      initialState: { systemPrompt: 'Be terse.', model, tools: [calc(tools)] },
      getApiKey: () => env.LLM_API_KEY ?? 'local-key',
    });
    agent.subscribe((event) => {
      if (event.type === 'message_update' && event.assistantMessageEvent.type === 'text_delta') {
        streamed += event.assistantMessageEvent.delta;
      }
    });
    await agent.prompt(question);
    const last = agent.state.messages.at(-1);
    return Response.json(
      { tools, answer: streamed, stopReason: last.stopReason, error: last.errorMessage },
      { status: last.stopReason === 'stop' ? 200 : 502 },
    );
  },
};
