// What each README example (`<!-- test: node NAME -->`) must do when run as written: the
// servers it talks to, the environment it is given, and the checks on what it printed and
// what the servers saw. Used by tests/js/readme.test.mjs.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startOpenAIServer, textChunks, toolCallChunks, responsesTextChunks } from './openai-server.mjs';
import { startProxyServer, PROXY_TOKEN, LLM_KEY } from './proxy-server.mjs';

/** Runs `file` with `env` added (and `--import` preloads); resolves to its stdout lines. */
function node(file, env, preload = []) {
  return new Promise((resolve, reject) => {
    const args = [...preload.flatMap((p) => ['--import', p]), file];
    execFile(process.execPath, args, { env: { ...process.env, ...env }, timeout: 30000 }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out.trim().split('\n')));
  });
}

const hasToolResult = (body) => body.messages.some((m) => m.role === 'tool');

/**
 * The internet, for an example that names a public API: a preload that sends the
 * process's `fetch` calls for `origin` to a local server instead. Only the address
 * changes; the package, its request and its key handling run as they would.
 */
function redirectPreload(dir, origin, to) {
  const file = join(dir, 'redirect-fetch.mjs');
  writeFileSync(
    file,
    `const real = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (!url.startsWith(${JSON.stringify(origin)})) return real(input, init);
  const target = ${JSON.stringify(to)} + url.slice(${origin.length});
  return real(typeof input === 'string' || input instanceof URL ? target : new Request(target, input), init);
};
`,
  );
  return file;
}

const RUNS = {
  /** An aborted run stops waiting for a tool that never ends (docs/errors.md, abortGraceMs). */
  async 'abort-grace'(file) {
    const server = await startOpenAIServer((body) => (hasToolResult(body) ? textChunks('never sent') : toolCallChunks('call_1', 'wait', {})));
    try {
      const t0 = Date.now();
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      assert.deepEqual(out, ['true Operation aborted: not settled 200 ms after the abort (abortGraceMs)', 'false']);
      assert.ok(Date.now() - t0 >= 250, 'it waited for the grace');
      // The aborted run asked the model nothing more after the tool call.
      assert.equal(server.requests.length, 1);
    } finally {
      await server.close();
    }
  },
  /** The Agent class: a tool, steering from a listener, an abort from a listener
   * (L-145, L-137, L-149). */
  async 'agent-class'(file) {
    const server = await startOpenAIServer((body) => {
      const messages = body.messages;
      if (messages.some((m) => typeof m.content === 'string' && m.content.includes('slowly'))) {
        return textChunks('1, 2, 3, 4, 5, 6, 7, 8, 9, 10, '.repeat(20));
      }
      if (hasToolResult(body)) return textChunks('391, three hundred ninety-one.');
      return toolCallChunks('call_1', 'calc', { a: 17, b: 23 });
    });
    try {
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      assert.deepEqual(out, ['391, three hundred ninety-one.', 'aborted']);
      // The steering message was sent with the tool result, before the answer was requested.
      const second = server.requests[1].body.messages;
      assert.equal(second.at(-2).role, 'tool');
      assert.deepEqual(second.at(-1), { role: 'user', content: 'Also write the result in words.' });
      assert.equal(server.requests[1].headers.authorization, 'Bearer ollama');
    } finally {
      await server.close();
    }
  },

  /** Checkpoints: a snapshot saved at every event, the process "dies" when the tool starts,
   * and a restored agent finishes the run without asking the model again for the tool call. */
  async checkpoint(file) {
    const server = await startOpenAIServer((body) => {
      if (hasToolResult(body)) return textChunks('Oslo has 18 C and light rain.');
      return toolCallChunks('call_1', 'weather', { city: 'Oslo' });
    });
    try {
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      assert.deepEqual(out, ['Oslo has 18 C and light rain.']);
      assert.equal(server.requests.length, 2, 'the tool call was not requested again');
      const second = server.requests[1].body.messages;
      assert.equal(second.at(-1).role, 'tool');
      assert.equal(second.at(-1).content, 'Oslo: 18 C, light rain');
    } finally {
      await server.close();
    }
  },

  /** Record, replay and fork (docs/record-replay.md): the replay and the divergence make no
   * request; the fork asks the model once more, with the changed result. */
  async 'record-replay'(file) {
    const server = await startOpenAIServer((body) => {
      if (hasToolResult(body)) return textChunks(`Answer from: ${body.messages.at(-1).content}`);
      return toolCallChunks('call_1', 'weather', { city: 'Oslo' });
    });
    try {
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      assert.equal(out.length, 4, out.join('\n'));
      assert.match(out[0], /^recorded \d+ lines; key kept out: true$/);
      assert.match(out[1], /^replayed \d+ events; answer: Answer from: Oslo: 18 C, light rain$/);
      assert.match(out[2], /^replay_divergence request 0 differs in message \d+ at event \d+$/);
      assert.equal(out[3], 'forked: Answer from: Oslo: 30 C, sunny');
      // Two requests recorded, none in the replays, one for the fork.
      assert.equal(server.requests.length, 3);
      assert.equal(server.requests[2].body.messages.at(-1).content, 'Oslo: 30 C, sunny');
    } finally {
      await server.close();
    }
  },

  /** Approvals: the transfer waits, the listener approves, the tool runs once and the model answers. */
  async approvals(file) {
    const server = await startOpenAIServer((body) => {
      if (hasToolResult(body)) return textChunks(`Done: ${body.messages.at(-1).content}.`);
      return toolCallChunks('call_1', 'transfer', { to: '42', eur: 25 });
    });
    try {
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      assert.deepEqual(out, ['waiting: transfer {"to":"42","eur":25} (25 EUR is over the 10 EUR limit)', 'Done: sent 25 EUR to 42.']);
      assert.equal(server.requests.length, 2);
    } finally {
      await server.close();
    }
  },

  /** The loop function with the built-in stream's own options. */
  async 'builtin-stream'(file) {
    const server = await startOpenAIServer((body) => {
      if (hasToolResult(body)) return textChunks(`It is ${body.messages.at(-1).content}.`);
      return toolCallChunks('call_1', 'clock', {});
    });
    try {
      const out = await node(file, { LLM_BASE_URL: server.baseUrl });
      const types = out.slice(0, -1);
      assert.equal(types[0], 'agent_start');
      assert.equal(types.at(-1), 'agent_end');
      assert.equal(types.filter((t) => t === 'turn_start').length, 2);
      assert.ok(types.includes('tool_execution_end'));
      assert.match(out.at(-1), /^It is \d{4}-\d\d-\d\dT[\d:.]+Z\.$/);
      for (const { headers } of server.requests) {
        assert.equal(headers['x-team'], 'docs');
        assert.equal(headers.authorization, 'Bearer ollama');
      }
    } finally {
      await server.close();
    }
  },

  /** A catalogue model (gpt-4o-mini speaks OpenAI Responses), its key from OPENAI_API_KEY;
   * api.openai.com is a local server. */
  async 'models-env'(file) {
    const server = await startOpenAIServer(() => responsesTextChunks('Hello, Hallo, Bonjour.'), { api: 'responses' });
    try {
      const preload = redirectPreload(dirname(file), 'https://api.openai.com/v1', server.baseUrl);
      const out = await node(file, { OPENAI_API_KEY: 'sk-readme-from-env' }, [preload]);
      assert.deepEqual(out, ['Hello, Hallo, Bonjour.']);
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0].url, '/v1/responses');
      assert.equal(server.requests[0].headers.authorization, 'Bearer sk-readme-from-env');
      assert.equal(server.requests[0].body.model, 'gpt-4o-mini');
    } finally {
      await server.close();
    }
  },

  /** streamProxy against a proxy that runs pi-ai with a key only it holds. */
  async proxy(file) {
    const llm = await startOpenAIServer(() => responsesTextChunks('Hello through the proxy.'), { api: 'responses' });
    const proxy = await startProxyServer({ llmBaseUrl: llm.baseUrl });
    try {
      const out = await node(file, { PROXY_URL: proxy.url, PROXY_TOKEN });
      assert.deepEqual(out, ['Hello through the proxy.']);
      assert.equal(proxy.requests[0].headers.authorization, `Bearer ${PROXY_TOKEN}`);
      assert.equal(llm.requests[0].headers.authorization, `Bearer ${LLM_KEY}`);
    } finally {
      await proxy.close();
      await llm.close();
    }
  },

  /** The SSE decoder, split inside an event; a final event without its blank line. */
  async 'sse-decoder'(file) {
    const out = await node(file, {});
    assert.deepEqual(out, ["[] [ { type: 'ping', data: '1', lastEventId: '' } ]", '[] true']);
  },
};

/** Runs the README example `name` (written to `file`) with its checks. */
export async function runReadmeNode(name, file) {
  const run = RUNS[name];
  assert.ok(run, `no checks for the README example "${name}" in tests/js/shared/readme-runs.mjs`);
  await run(file);
}
