// Attribution headers (pi-ai `getAttributionHeaders`, spec L-78's identity): the built-in
// stream sends the same provider attribution headers as pi-ai 1.6.0's streamSimple, for the
// loop's default identity, a caller's identity and none, to OpenRouter, NVIDIA NIM, OpenCode
// and other targets, on all four APIs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runAgentLoop, streamSimple } from 'pi-agent-wasm';
import { runAgentLoop as piRunAgentLoop } from '@earendil-works/pi-agent-core';
import { streamSimple as piStreamSimple } from '@earendil-works/pi-ai/compat';
import { startScenarioServer } from './shared/openai-server.mjs';

// The scenario server asks for this tool once, then answers.
const calc = {
  name: 'calc', label: 'calc', description: 'multiplies', parameters: { type: 'object', properties: { expression: { type: 'string' } } },
  execute: async () => ({ content: [{ type: 'text', text: '391' }], details: {} }),
};
const HEADERS = ['http-referer', 'x-openrouter-title', 'x-openrouter-categories', 'x-billing-invoke-origin', 'x-opencode-client'];

async function headersOf(run, stream, api, provider, identity, baseUrlFor = (u) => u) {
  const server = await startScenarioServer(api);
  try {
    const model = {
      id: 'm', name: 'm', api, provider, baseUrl: baseUrlFor(server.baseUrl), reasoning: false, input: ['text'],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 10000, maxTokens: 100,
    };
    await run([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [calc] },
      { model, apiKey: 'k', convertToLlm: (m) => m, ...(identity === undefined ? {} : { identity }) }, () => {}, undefined, stream);
    const h = server.requests[0].headers;
    return Object.fromEntries(HEADERS.filter((k) => h[k] !== undefined).map((k) => [k, h[k]]));
  } finally {
    await server.close();
  }
}

test('attribution headers match pi-ai for OpenRouter, NVIDIA, OpenCode and others, with default, custom and no identity', async () => {
  const custom = { attribution: { name: 'myapp', url: 'https://example.test/app', categories: ['chat', 'tools'] } };
  const cases = [
    ['openai-completions', 'openrouter', undefined],
    ['openai-completions', 'openrouter', custom],
    ['openai-completions', 'openrouter', { attribution: null }],
    ['openai-completions', 'nvidia', custom],
    ['openai-completions', 'opencode', undefined],
    ['openai-completions', 'other', custom],
    ['openai-responses', 'openrouter', undefined],
    ['anthropic-messages', 'openrouter', custom],
    ['google-generative-ai', 'opencode', custom],
  ];
  let seen = 0;
  for (const [api, provider, identity] of cases) {
    const ours = await headersOf(runAgentLoop, streamSimple, api, provider, identity);
    const theirs = await headersOf(piRunAgentLoop, piStreamSimple, api, provider, identity);
    assert.deepEqual(ours, theirs, `${api} ${provider} ${JSON.stringify(identity)}`);
    seen += Object.keys(ours).length;
  }
  assert.ok(seen >= 10, 'the cases send attribution headers');
});

test('L-37: DEFAULT_AGENT_IDENTITY has one home, the export, read at each run as pi reads it', async () => {
  const ours = await import('pi-agent-wasm');
  const pi = await import('@earendil-works/pi-agent-core');
  assert.deepEqual(ours.DEFAULT_AGENT_IDENTITY, pi.DEFAULT_AGENT_IDENTITY);
  const seen = async (mod) => {
    let identity;
    const streamFn = (model, context, options) => {
      identity = structuredClone(options.identity);
      return streamSimple(model, context, { ...options, apiKey: undefined, env: {} });
    };
    const model = { id: 'm', api: 'openai-completions', provider: 'p', baseUrl: 'http://127.0.0.1:1' };
    await mod.runAgentLoop([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [] },
      { model, convertToLlm: (m) => m, identity: { version: '2' } }, () => {}, undefined, streamFn);
    return identity;
  };
  const before = [await seen(ours), await seen(pi)];
  assert.deepEqual(before[0], before[1]);
  // A caller who changes the exported object changes what later runs send, in both.
  const saved = [structuredClone(ours.DEFAULT_AGENT_IDENTITY), structuredClone(pi.DEFAULT_AGENT_IDENTITY)];
  ours.DEFAULT_AGENT_IDENTITY.userAgent = 'edited/1';
  pi.DEFAULT_AGENT_IDENTITY.userAgent = 'edited/1';
  try {
    const after = [await seen(ours), await seen(pi)];
    assert.equal(after[0].userAgent, 'edited/1');
    assert.deepEqual(after[0], after[1]);
  } finally {
    delete ours.DEFAULT_AGENT_IDENTITY.userAgent;
    delete pi.DEFAULT_AGENT_IDENTITY.userAgent;
  }
  assert.deepEqual([ours.DEFAULT_AGENT_IDENTITY, pi.DEFAULT_AGENT_IDENTITY], saved);
});

test('L-78: the built-in provider makes each request\'s identity from config.identity then, as pi: a change between two requests (reassigned, or edited in place) is in the second request\'s headers', async () => {
  for (const edit of [(config) => { config.identity = { attribution: { name: 'A2', url: 'https://a2.test' } }; }, (config) => { config.identity.attribution.name = 'A2'; }]) {
    const titles = {};
    for (const [name, run, stream] of [['ours', runAgentLoop, undefined], ['pi', piRunAgentLoop, piStreamSimple]]) {
      const server = await startScenarioServer('openai-completions');
      try {
        const model = { id: 'm', name: 'm', api: 'openai-completions', provider: 'openrouter', baseUrl: server.baseUrl, reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 10000, maxTokens: 100 };
        const config = { model, apiKey: 'k', convertToLlm: (m) => m, identity: { attribution: { name: 'A1', url: 'https://a1.test' } } };
        const tool = { ...calc, execute: async () => { edit(config); return { content: [{ type: 'text', text: '391' }], details: {} }; } };
        await run([{ role: 'user', content: 'hi', timestamp: 1 }], { messages: [], tools: [tool] }, config, () => {}, undefined, stream);
        titles[name] = server.requests.map((r) => r.headers['x-openrouter-title']);
      } finally {
        await server.close();
      }
    }
    assert.deepEqual(titles.ours, ['A1', 'A2']);
    assert.deepEqual(titles.ours, titles.pi);
  }
});
