// Test helpers: a static file server on 127.0.0.1, headless Debian Chromium via
// playwright-core, and packing the package into a throwaway project.
import { createServer, request } from 'node:http';
import { readFile, mkdtemp, writeFile, rm } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, extname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css',
};

/** Serves files under `root` on an ephemeral 127.0.0.1 port. `proxy` maps a path prefix to
 * another local origin whose answers are piped through as they stream (pages may not call
 * another loopback port: Chromium's local network access rules). */
export async function startStaticServer(root = repoRoot, { proxy = {} } = {}) {
  const server = createServer(async (req, res) => {
    const target = Object.entries(proxy).find(([prefix]) => req.url.startsWith(prefix));
    if (target) {
      const upstream = request(new URL(req.url, target[1]), { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode, up.headers);
        up.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
      return;
    }
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(root, path);
    if (!file.startsWith(normalize(root + sep))) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) };
}

/** Launches Debian's Chromium headless (never a downloaded browser). */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** `npm pack`s the repo into a temp dir and installs the tarball into a fresh project there.
 * Returns { dir, tarball, files, cleanup }. */
export async function packAndInstall() {
  const dir = await mkdtemp(join(tmpdir(), 'pi-agent-wasm-pack-'));
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], {
      cwd: repoRoot,
      encoding: 'utf8',
    }),
  );
  const tarball = join(dir, info.filename);
  const project = join(dir, 'project');
  execFileSync('mkdir', ['-p', project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: project,
    stdio: 'pipe',
  });
  return {
    dir: project,
    tarball,
    files: info.files.map((f) => f.path),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Resolves once every callback queued so far, and what those queue in turn for a few
 * rounds, has run: a point in the order of events, not a wait for time. */
export async function drained(rounds = 5) {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

/** A deferred: a promise and the function that resolves it. */
export function deferred() {
  let resolve;
  const promise = new Promise((r) => { resolve = r; });
  return { promise, resolve };
}
