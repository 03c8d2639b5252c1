// The README's Agent example (the first js block under "### The Agent class") runs as written
// in a child Node process, against a local OpenAI-compatible server: the tool runs, the
// steering message reaches the second request, the answer prints, and the abort lands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { repoRoot } from './helpers.mjs';
import { startOpenAIServer, textChunks, toolCallChunks } from './shared/openai-server.mjs';

function example() {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### The Agent class'));
  const start = section.indexOf('```js\n') + 6;
  return section.slice(start, section.indexOf('```', start));
}

test('README: the Agent example (tool, steering, abort) runs as written (L-145, L-137, L-149)', async () => {
  const server = await startOpenAIServer((body) => {
    const messages = body.messages;
    if (messages.some((m) => typeof m.content === 'string' && m.content.includes('slowly'))) {
      return textChunks('1, 2, 3, 4, 5, 6, 7, 8, 9, 10, '.repeat(20));
    }
    if (messages.some((m) => m.role === 'tool')) return textChunks('391, three hundred ninety-one.');
    return toolCallChunks('call_1', 'calc', { a: 17, b: 23 });
  });
  const dir = join(repoRoot, 'test-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'readme-agent-example.mjs');
  writeFileSync(file, example());
  try {
    const { stdout } = await new Promise((resolve, reject) => {
      execFile(process.execPath, [file], { env: { ...process.env, LLM_BASE_URL: server.baseUrl }, timeout: 30000 },
        (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve({ stdout: out })));
    });
    assert.deepEqual(stdout.trim().split('\n'), ['391, three hundred ninety-one.', 'aborted']);
    // The steering message was sent with the tool result, before the answer was requested.
    const second = server.requests[1].body.messages;
    assert.equal(second.at(-2).role, 'tool');
    assert.deepEqual(second.at(-1), { role: 'user', content: 'Also write the result in words.' });
    assert.equal(server.requests[1].headers.authorization, 'Bearer ollama');
  } finally {
    await server.close();
  }
});
