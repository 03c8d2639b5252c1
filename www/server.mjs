// The demo's one small server: serves www/ and the built package (pkg/), and the embedded
// scripted demo model as an OpenAI Chat Completions–compatible streaming endpoint at
// /demo/v1/chat/completions (and, under /demo/unauthorized/, a provider that refuses every
// key, to show the page's error state offline). Prints the page's URL.
//
//   node www/server.mjs [--port N] [--host H] [--allowed-hosts a,b] [--worker URL]
//   (npm start builds first, then runs this)
//
// `/worker/...` is relayed to the Worker of examples/worker (`--worker`, WORKER_URL, default
// http://127.0.0.1:8799), so the page's "Worker backend" mode talks to its own origin.
//
// Hardened for a machine whose browser visits other sites: requests must name a local host
// (DNS rebinding), bodies are limited (413), and a malformed model request is a 400 with a
// JSON error. Any web page can still POST here without a preflight (as text/plain), so
// nothing on the request path may cost more than linear time in the body.
import { createServer, request as forward } from 'node:http';
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
// Host names served besides the local ones, comma-separated; `*` allows any.
const extraHosts = new Set(
  String(arg('allowed-hosts', process.env.ALLOWED_HOSTS ?? ''))
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean),
);
const workerUrl = new URL(String(arg('worker', process.env.WORKER_URL ?? 'http://127.0.0.1:8799')));

/** Relays `/worker/<path>` to the Worker as `<path>`, streaming both ways (events included). */
function relay(req, res, path) {
  const target = new URL(path + (new URL(req.url, 'http://x').search), workerUrl);
  const headers = { ...req.headers, host: target.host };
  const upstream = forward(target, { method: req.method, headers }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', (error) => !res.headersSent && fail(res, 502, `The Worker at ${workerUrl.origin} is not reachable (${error.code ?? error.message}): run \`npx wrangler dev --port ${workerUrl.port || 80}\` in examples/worker.`));
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** The largest request body read (the demo's requests are a few KB). */
const MAX_BODY = 1024 * 1024;

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

/** Whether the Host header names this machine: `localhost` (and `*.localhost`), 127.0.0.1,
 * [::1], or a name given with --allowed-hosts. A page on another site whose name was
 * re-pointed at 127.0.0.1 (DNS rebinding) still sends its own name, and is refused. */
function hostAllowed(header) {
  if (extraHosts.has('*')) return true;
  if (typeof header !== 'string') return false;
  const value = header.toLowerCase();
  const name = value.startsWith('[') ? value.slice(0, value.indexOf(']') + 1) : value.split(':', 1)[0];
  return name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1' || name === '[::1]' || extraHosts.has(name);
}

/** Sends `{ error: { message } }` with `status`. */
function fail(res, status, message, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
}

/** The request body as text, or undefined (after answering 413) when it exceeds MAX_BODY.
 * The rest of a body that is too large is read and dropped (so the client, still sending,
 * sees the answer rather than a reset), up to a bound: then the connection is cut. */
function readBody(req, res) {
  const tooLarge = () => {
    fail(res, 413, `Request body is larger than ${MAX_BODY} bytes`);
    let dropped = 0;
    req.on('data', (chunk) => {
      dropped += chunk.length;
      if (dropped > 16 * MAX_BODY) req.socket.destroy();
    });
    return undefined;
  };
  if (Number(req.headers['content-length']) > MAX_BODY) return Promise.resolve(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const done = (value) => {
      req.off('data', onData).off('end', onEnd).off('error', reject);
      resolve(value);
    };
    const onData = (chunk) => {
      size += chunk.length;
      if (size <= MAX_BODY) return chunks.push(chunk);
      done(tooLarge());
    };
    // Decoded once whole, so a character split between chunks stays whole.
    const onEnd = () => done(Buffer.concat(chunks).toString('utf8'));
    req.on('data', onData).on('end', onEnd).on('error', reject);
  });
}

/** What is wrong with a Chat Completions body for the demo model, or undefined. Checked before
 * answering, so a malformed request gets a 400 rather than an empty 200. */
function problem(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object';
  if (!Array.isArray(body.messages)) return '`messages` must be an array';
  for (const [i, m] of body.messages.entries()) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return `messages[${i}] must be an object`;
    if (typeof m.role !== 'string') return `messages[${i}].role must be a string`;
    const c = m.content;
    if (c !== undefined && c !== null && typeof c !== 'string') {
      if (!Array.isArray(c)) return `messages[${i}].content must be a string or an array`;
      const bad = c.findIndex((b) => b === null || typeof b !== 'object' || (b.type === 'text' && typeof b.text !== 'string'));
      if (bad >= 0) return `messages[${i}].content[${bad}] must be an object (a text part has a string \`text\`)`;
    }
    if (m.tool_calls !== undefined && (!Array.isArray(m.tool_calls) || m.tool_calls.some((t) => t === null || typeof t !== 'object'))) {
      return `messages[${i}].tool_calls must be an array of objects`;
    }
  }
  return undefined;
}

async function demoModel(req, res) {
  const raw = await readBody(req, res);
  if (raw === undefined) return;
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return fail(res, 400, 'Request body is not JSON');
  }
  const wrong = problem(body);
  if (wrong) return fail(res, 400, `Malformed request: ${wrong}`);
  let pieces;
  try {
    pieces = stream(respond(body), body.model);
  } catch (error) {
    return fail(res, 400, `Malformed request: ${error.message}`);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let closed = false;
  res.on('close', () => { closed = true; });
  for (const [piece, delay] of pieces) {
    if (closed) return;
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    res.write(piece);
  }
  res.end();
}

const server = createServer(async (req, res) => {
  if (!hostAllowed(req.headers.host)) {
    req.resume();
    return fail(res, 403, 'This host name is not served here; start the demo server with --allowed-hosts <name> (or ALLOWED_HOSTS) to allow it.');
  }
  const url = new URL(req.url, 'http://localhost');
  try {
    if (url.pathname === '/demo/v1/chat/completions' && req.method === 'POST') return await demoModel(req, res);
    if (url.pathname.startsWith('/worker/')) return relay(req, res, url.pathname.slice('/worker'.length));
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
    if (!res.headersSent) {
      const missing = error.code === 'ENOENT' || error.code === 'EISDIR';
      // A path that is not valid percent-encoding is the request's fault.
      res.writeHead(missing ? 404 : error instanceof URIError ? 400 : 500);
    }
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
