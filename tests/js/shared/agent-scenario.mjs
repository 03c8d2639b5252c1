// One tool-using agent run with the built-in stream function, written once and run in Node,
// Chromium and workerd against the local OpenAI-compatible server of openai-server.mjs
// (answering with `scenarioAnswer`). Returns plain data to compare.

/** The tool result a request body of `api` ends with, if any. */
function lastToolResult(body, api) {
  switch (api) {
    case 'google-generative-ai':
      return body.contents.at(-1).parts.find((p) => p.functionResponse)?.functionResponse.response.output;
    case 'openai-responses': {
      const last = body.input.at(-1);
      return last.type === 'function_call_output' ? last.output : undefined;
    }
    case 'anthropic-messages': {
      const last = body.messages.at(-1).content;
      return Array.isArray(last) ? last.find((b) => b.type === 'tool_result')?.content : undefined;
    }
    default:
      return body.messages.at(-1).role === 'tool' ? body.messages.at(-1).content : undefined;
  }
}

/** The server's script: a tool call first, then an answer quoting the tool result. Pass
 * the chunk helpers of the API's dialect (openai-server.mjs `SCENARIO_SERVERS`). */
export function scenarioAnswer(body, { textChunks, toolCallChunks, google = false, api = google ? 'google-generative-ai' : 'openai-completions' }) {
  const result = lastToolResult(body, api);
  if (result !== undefined) return textChunks(`The answer is ${result} — fertig ✓`);
  return toolCallChunks('call_1', 'calc', { expression: '17*23', note: 'ünïcødé 😀' });
}

/** The scenario's tool: multiplies the two numbers of an `a*b` expression. */
export const CALC = {
  name: 'calc', label: 'Calculator', description: 'Multiplies a*b',
  parameters: { type: 'object', properties: { expression: { type: 'string' }, note: { type: 'string' } }, required: ['expression'] },
  execute: async (_id, { expression }) => {
    const [a, b] = expression.split('*').map(Number);
    return { content: [{ type: 'text', text: String(a * b) }], details: {} };
  },
};

export async function runToolScenario(pkg, baseUrl, api = 'openai-completions', { agentClass = false } = {}) {
  const model = {
    id: api === 'google-generative-ai' ? 'gemini-2.5-flash' : 'local-model', name: 'Local', api, provider: 'local', baseUrl,
    reasoning: false, input: ['text'], cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 32000, maxTokens: 4096,
  };
  const calc = CALC;
  const updates = [];
  let lastArgs;
  const onEvent = (e) => {
    if (e.type !== 'message_update') return;
    updates.push(e.assistantMessageEvent.type);
    if (e.assistantMessageEvent.type === 'toolcall_delta') lastArgs = JSON.stringify(e.message.content[e.assistantMessageEvent.contentIndex].arguments);
  };
  let messages;
  if (agentClass) {
    // The same run through the Agent class (its default stream function is the built-in one).
    const agent = new pkg.Agent({ initialState: { systemPrompt: 'Be terse.', model, tools: [calc] }, getApiKey: () => 'local-key' });
    agent.subscribe(onEvent);
    await agent.prompt([{ role: 'user', content: 'what is 17*23?', timestamp: 1 }]);
    messages = agent.state.messages;
  } else {
    messages = await pkg.runAgentLoop(
      [{ role: 'user', content: 'what is 17*23?', timestamp: 1 }],
      { messages: [{ role: 'system', content: 'Be terse.', timestamp: 0 }], tools: [calc] },
      { model, apiKey: 'local-key', convertToLlm: (m) => m },
      onEvent,
      undefined,
      pkg.streamSimple,
    );
  }
  return {
    roles: messages.map((m) => m.role),
    stopReasons: messages.filter((m) => m.role === 'assistant').map((m) => m.stopReason),
    toolArgs: messages.find((m) => m.role === 'assistant')?.content.find((b) => b.type === 'toolCall')?.arguments,
    lastStreamedArgs: lastArgs,
    toolResult: messages.find((m) => m.role === 'toolResult')?.content[0].text,
    answer: messages.at(-1).content[0]?.text,
    usage: messages.at(-1).usage,
    updateTypes: [...new Set(updates)].sort(),
    ...(messages.at(-1).errorMessage ? { errorMessage: messages.at(-1).errorMessage } : {}),
  };
}

export const EXPECTED_SCENARIO = {
  roles: ['system', 'user', 'assistant', 'toolResult', 'assistant'],
  stopReasons: ['toolUse', 'stop'],
  toolArgs: { expression: '17*23', note: 'ünïcødé 😀' },
  lastStreamedArgs: JSON.stringify({ expression: '17*23', note: 'ünïcødé 😀' }),
  toolResult: '391',
  answer: 'The answer is 391 — fertig ✓',
  updateTypes: ['text_delta', 'text_end', 'text_start', 'toolcall_delta', 'toolcall_end', 'toolcall_start'],
};
