// Agent sessions on Durable Objects: one object per session id, steered and followed over
// HTTP (see docs/checkpoints-and-sessions.md, "Agent sessions on Durable Objects"). Offline by default: the demo's
// scripted model answers through the built-in provider, over a `fetch` that never leaves the
// Worker. With LLM_BASE_URL set, a real OpenAI-compatible server answers, with the key from
// the LLM_API_KEY secret.
import { streamSimple } from 'pi-agent-wasm';
import { AgentSession, routeSessions } from 'pi-agent-wasm/cloudflare';
import { respond, stream } from '../../../www/demo-model.mjs';
import { demoTools } from '../../../www/tools.js';

/** The scripted demo model as a `fetch`: a Chat Completions request in, its SSE stream out. */
async function demoFetch(_url, init) {
  const body = JSON.parse(init.body);
  const pieces = stream(respond(body), body.model);
  const encoder = new TextEncoder();
  const signal = init.signal;
  const events = new ReadableStream({
    async start(controller) {
      for (const [piece, delay] of pieces) {
        if (signal?.aborted) break;
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        controller.enqueue(encoder.encode(piece));
      }
      controller.close();
    },
  });
  return new Response(events, { headers: { 'content-type': 'text/event-stream' } });
}

function modelOf(env) {
  const real = env.LLM_BASE_URL !== undefined && env.LLM_BASE_URL !== '';
  return {
    id: real ? env.LLM_MODEL : 'demo-scripted', name: real ? env.LLM_MODEL : 'Scripted demo model',
    api: 'openai-completions', provider: real ? 'openai' : 'demo', baseUrl: real ? env.LLM_BASE_URL : 'https://demo.invalid/v1',
    reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096,
  };
}

export class Session extends AgentSession {
  agentOptions(env) {
    const real = env.LLM_BASE_URL !== undefined && env.LLM_BASE_URL !== '';
    return {
      initialState: { model: modelOf(env), systemPrompt: 'You are a helpful assistant. Be brief.', tools: demoTools },
      // The demo model takes any key; this one appears in no answer (keys are hidden from
      // metadata wherever they occur, so a short one like "demo" would hide parts of names).
      getApiKey: () => (real ? env.LLM_API_KEY : 'offline-demo-key-0000'),
      streamFn: (model, context, options) => streamSimple(model, context, real ? options : { ...options, fetch: demoFetch }),
    };
  }
}

export default {
  async fetch(request, env) {
    const options = { token: env.SESSION_TOKEN, cors: env.CORS_ORIGIN || undefined };
    return (await routeSessions(request, env.SESSIONS, options)) ?? new Response('pi-agent-sessions: see /sessions/:id', { status: 404 });
  },
};
