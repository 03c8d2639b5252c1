// The demo's one small server: serves www/ and the built package (pkg/), and the embedded
// scripted demo model as an OpenAI Chat Completions–compatible streaming endpoint at
// /demo/v1/chat/completions (and, under /demo/unauthorized/, a provider that refuses every
// key, to show the page's error state offline). Prints the page's URL.
//
//   node www/server.mjs [--port N] [--host H]     (npm start builds first, then runs this)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { respond, stream } from './demo-model.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const port = Number(arg('port', process.env.PORT ?? 8787));
const host = arg('host', process.env.HOST ?? '127.0.0.1');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.json': 'application/json', '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
};

/** A file under www/ or pkg/ for a URL path; undefined for anything else. */
function fileFor(pathname) {
  const clean = normalize(decodeURIComponent(pathname)).replace(/^([/\\])+/, '');
  const [top] = clean.split(/[/\\]/);
  if (top === 'pkg') return join(root, clean);
  if (clean === '' || clean === '.') return join(root, 'www', 'index.html');
  const file = join(root, 'www', clean);
  return file.startsWith(join(root, 'www') + sep) ? file : undefined;
}

async function demoModel(req, res) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'Request body is not JSON' } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let closed = false;
  res.on('close', () => { closed = true; });
  for (const [piece, delay] of stream(respond(body), body.model)) {
    if (closed) return;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    res.write(piece);
  }
  res.end();
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://localhost');
  try {
    if (url.pathname === '/demo/v1/chat/completions' && req.method === 'POST') return await demoModel(req, res);
    if (url.pathname.startsWith('/demo/unauthorized/') && req.method === 'POST') {
      // Plays a provider refusing the key, so the page's error state can be seen offline.
      req.resume();
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } }));
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST' });
      return res.end();
    }
    const file = fileFor(url.pathname);
    if (!file || req.method !== 'GET') {
      res.writeHead(404);
      return res.end('not found');
    }
    const bytes = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    res.end(bytes);
  } catch (error) {
    if (!res.headersSent) res.writeHead(error.code === 'ENOENT' || error.code === 'EISDIR' ? 404 : 500);
    res.end();
  }
});

// The default port may be taken: then the next ones are tried (an explicit one is kept).
const explicit = process.argv.includes('--port') || process.env.PORT !== undefined;
let attempt = 0;
server.on('error', (error) => {
  if (error.code === 'EADDRINUSE' && !explicit && attempt < 20) {
    attempt += 1;
    server.listen(port + attempt, host);
    return;
  }
  console.error(`demo server: ${error.message}`);
  process.exit(1);
});
server.on('listening', () => {
  const { port: actual } = server.address();
  console.log(`pi-agent-wasm demo: http://${host}:${actual}/`);
});
server.listen(port, host);
