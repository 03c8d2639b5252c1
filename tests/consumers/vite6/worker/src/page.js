// The page of a calculator agent that runs in a module Web Worker, which keeps the page
// responsive while the agent works: the page starts the worker, hands it the question and
// the model server (a local Ollama by default; this page's ?llm= and ?model= parameters
// name another), and shows the tool calls and the answer the worker posts back.
const params = new URLSearchParams(location.search);
const toolList = document.querySelector('#tools');
const answer = document.querySelector('#answer');

const worker = new Worker(new URL('./agent-worker.js', import.meta.url), { type: 'module' });
worker.addEventListener('message', ({ data }) => {
  if (data.type === 'tool') {
    const item = document.createElement('li');
    item.textContent = data.text;
    toolList.append(item);
  } else if (data.type === 'text') {
    answer.textContent += data.delta;
  } else if (data.type === 'end') {
    document.body.dataset.state = data.stopReason === 'stop' ? 'done' : `failed: ${data.error}`;
  }
});
worker.addEventListener('error', (event) => {
  document.body.dataset.state = `failed: the worker did not run: ${event.message ?? 'see the console'}`;
});

worker.postMessage({
  question: 'what is 17*23?',
  baseUrl: params.get('llm') ?? 'http://127.0.0.1:11434/v1',
  modelId: params.get('model') ?? 'qwen2.5:7b',
});
