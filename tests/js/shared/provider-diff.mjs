// A differential harness for the built-in providers: a local HTTP server replays wire
// transcripts in irregular chunks, and a tool-using agent run goes through either stream
// function, so our events and request bodies can be compared with pi-ai's.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { runAgentLoop } from 'pi-agent-wasm';
import { getModel } from '@earendil-works/pi-ai/compat';

export const tool = {
  name: 'read', label: 'Read', description: 'Reads a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  execute: async (_id, args) => ({ content: [{ type: 'text', text: `body of ${args.path}` }], details: {} }),
};

export function normalize(v) {
  return JSON.parse(JSON.stringify(v, (k, x) => (k === 'timestamp' || k === 'durationMs' ? 0 : x)));
}

export function harness({ fixtures, provider, key, basePath }) {
  const servers = [];
  const read = (f) => readFileSync(new URL(f, fixtures), 'utf8');

  async function serve(bodies, { status = 200, type = 'text/event-stream' } = {}) {
    const requests = [];
    const server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => { raw += d; });
      req.on('end', async () => {
        requests.push({ url: req.url, headers: req.headers, body: JSON.parse(raw) });
        const text = bodies[Math.min(requests.length - 1, bodies.length - 1)];
        res.writeHead(status, { 'content-type': type });
        const bytes = Buffer.from(text);
        for (let i = 0, step = 5; i < bytes.length; i += step, step = (step * 7) % 31 + 2) {
          res.write(bytes.subarray(i, i + step));
          await new Promise((r) => setImmediate(r));
        }
        res.end();
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    return { baseUrl: `http://127.0.0.1:${server.address().port}${basePath}`, requests };
  }

  /** One agent run against `bodies` (one per request) with `streamFn`. */
  async function runWith(streamFn, bodies, { extra = {}, serveOptions = {}, modelId, history = [] } = {}) {
    const server = await serve(bodies, serveOptions);
    const model = { ...getModel(provider, modelId), baseUrl: server.baseUrl };
    const events = [];
    const messages = await runAgentLoop(
      [{ role: 'user', content: 'go', timestamp: 1 }],
      { messages: [{ role: 'system', content: 'Be brief.', timestamp: 0 }, ...history], tools: [tool] },
      { model, apiKey: key, convertToLlm: (m) => m, ...extra },
      (e) => { events.push(e); }, undefined, streamFn,
    );
    return { events: normalize(events), messages: normalize(messages), requests: normalize(server.requests) };
  }

  const close = () => Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return { read, runWith, close };
}
