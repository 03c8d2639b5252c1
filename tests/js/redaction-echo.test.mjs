// The API key never surfaces, however a server echoes it (issue 12, defect 8): for each of
// the four APIs of the built-in stream, servers on 127.0.0.1 echo the key they received in
// JSON error bodies (escaped as JSON.stringify, Go and Python escape it, and as JSON quoted
// inside JSON by a gateway), text and HTML bodies, in-stream error events, a response
// header that reaches the message, and URLs (a key in the base URL's query echoed back, a
// connection error that prints the URL), and an injected fetch throws errors naming it.
// Keys: short ones (replaced where they stand alone, so a 1-character key does not shred
// the text) and long ones with quotes, backslashes, slashes, spaces, `&<>%'`. Neither the errorMessage nor any event may hold it in any spelling.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { APIS, faultServer, modelAt, runLoop, sentKey } from './shared/four-apis.mjs';

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

// Header values are bytes: keys are ASCII (as real keys are), with every special sort.
const LONG = ['sk-SECRET"{x}|y z\\w&1/2<3>%\'-0123456789', 'sk-plain-SECRET-0123456789abcdef'];
const SHORT = ['Q', 'q7', 'a"b'];

/** The ways a key can be spelt in text: as is, JSON-escaped once and twice, URI-encoded,
 * as HTML. */
function spellingsOf(key) {
  const json = JSON.stringify(key).slice(1, -1);
  const forms = [key, json, JSON.stringify(json).slice(1, -1), encodeURIComponent(key), encodeURI(key), key.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')];
  return [...new Set(forms)];
}

/** No spelling of `key` in `text`; for a long key, not even an 8-character piece of one. */
function assertHidden(text, key, where) {
  for (const form of spellingsOf(key)) {
    if (key.length >= 8) {
      for (let i = 0; i + 8 <= form.length; i++) assert.ok(!text.includes(form.slice(i, i + 8)), `${where}: "${form.slice(i, i + 8)}" of the key leaked: ${text.slice(-300)}`);
    } else {
      assert.ok(!text.includes(`key ${form}.`) && !text.includes(`key=${form}`), `${where}: the key ${JSON.stringify(key)} leaked: ${text.slice(-300)}`);
    }
  }
}

const jsonError = (message) => JSON.stringify({ error: { message, type: 'invalid_request_error' } });
const goEscaped = (text) => text.replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
const asciiEscaped = (text) => text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** Padding before the echo, so that the 4,000-character cut of the error text falls inside
 * the key for one of these lengths whatever the API's wording around it. */
const PADS = [3950, 3962, 3974, 3986].map((n) => 'x'.repeat(n));

/** In-stream error events echoing `message`, per API. */
const STREAM_ERROR = {
  'openai-completions': (m) => `data: ${JSON.stringify({ id: 'c', choices: [], error: { message: m } })}\n\n`,
  'openai-responses': (m) => `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response: { error: { code: 'x', message: m } } })}\n\n`,
  'anthropic-messages': (m) => `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'x', message: m } })}\n\n`,
  'google-generative-ai': (m) => `data: ${JSON.stringify({ error: { code: 401, message: m } })}\n\n`,
};

/** Each echo: how the server answers, given the key it received. */
const ECHOES = {
  'a JSON error body': (res, key) => res.writeHead(401, { 'content-type': 'application/json' }).end(jsonError(`bad key ${key}.`)),
  'a JSON error body quoted inside JSON by a gateway': (res, key) => res.writeHead(502, { 'content-type': 'application/json' }).end(jsonError(jsonError(`bad key ${key}.`))),
  'a text error body': (res, key) => res.writeHead(403, { 'content-type': 'text/plain' }).end(`bad key ${key}.`),
  'an HTML error page': (res, key) => res.writeHead(403, { 'content-type': 'text/html' }).end(`<p>bad key ${key.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}.</p>`),
  'a response header that reaches the message': (res, key) => res.writeHead(200, { 'content-type': `application/json; key=${encodeURIComponent(key)}` }).end('{}'),
  'an error event inside the stream': (res, key, api) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end(STREAM_ERROR[api](`bad key ${key}.`)),
};
/** Echoes whose key the error text's cut may remove whole: no [redacted] is required. */
for (const [i, pad] of PADS.entries()) {
  ECHOES[`a JSON error body escaped as Go escapes it, cut near the key (${i})`] = (res, key) => res.writeHead(401, { 'content-type': 'application/json' }).end(goEscaped(jsonError(`${pad} bad key ${key}.`)));
  ECHOES[`a JSON error body escaped as Python escapes it, cut near the key (${i})`] = (res, key) => res.writeHead(401, { 'content-type': 'application/json' }).end(asciiEscaped(jsonError(`${pad} bad key ${key}.`)));
  ECHOES[`a text error body, cut near the key (${i})`] = (res, key) => res.writeHead(403, { 'content-type': 'text/plain' }).end(`${pad} bad key ${key}.`);
}

for (const api of Object.keys(APIS)) {
  test(`${api}: a key echoed in bodies, events and headers is hidden in every spelling, whatever its length`, async () => {
    for (const key of [...LONG, ...SHORT]) {
      for (const [where, echo] of Object.entries(ECHOES)) {
        const server = await faultServer((req, res) => echo(res, sentKey(req), api));
        servers.push(server);
        const { events, last } = await runLoop(modelAt(api, server.origin), key);
        assert.equal(server.requests.length, 1);
        assert.equal(sentKey(server.requests[0]), key, 'the key was sent as it is');
        assert.equal(last.stopReason, 'error', `${where}: ${last.errorMessage}`);
        if (!where.includes('cut')) assert.match(last.errorMessage, /\[redacted\]/, `${where}, key ${JSON.stringify(key)}: ${last.errorMessage.slice(-200)}`);
        assertHidden(JSON.stringify(events), key, `${api}, ${where}`);
        await server.close();
      }
    }
  });

  test(`${api}: a key in the base URL is hidden where the server echoes the URL and where a connection error prints it`, async () => {
    for (const key of [...LONG, ...SHORT]) {
      // The server sees the URL as fetch serialised it (percent-encoded its own way).
      const server = await faultServer((req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${req.url}`));
      servers.push(server);
      const echoed = await runLoop(modelAt(api, server.origin, `?key=${key}`), key);
      assert.match(echoed.last.errorMessage, /no route for .*key=\[redacted\]/, echoed.last.errorMessage);
      assertHidden(JSON.stringify(echoed.events), key, `${api}, URL echo`);
      await server.close();
      // An unparsable URL: fetch quotes it in its error.
      const broken = await runLoop({ ...modelAt(api, 'http://127.0.0.1:99999'), baseUrl: `http://127.0.0.1:99999/${key}` }, key);
      assert.match(broken.last.errorMessage, /^Connection error: .*\[redacted\]/, broken.last.errorMessage);
      assertHidden(JSON.stringify(broken.events), key, `${api}, URL in a connection error`);
    }
  });

  test(`${api}: an injected fetch that throws an error naming the key (or its URL-encoded form, in a cause) is reported without it`, async () => {
    for (const key of [...LONG, ...SHORT]) {
      const throwing = [
        () => { throw new Error(`refused key=${key}`); },
        async () => { throw new TypeError('fetch failed', { cause: new Error(`key=${encodeURIComponent(key)} rejected`) }); },
        async () => { throw `key=${key}`; }, // eslint-disable-line no-throw-literal
      ];
      for (const fetch of throwing) {
        const { events, last } = await runLoop(modelAt(api, 'http://127.0.0.1:9'), key, { fetch });
        assert.match(last.errorMessage, /^Connection error: .*\[redacted\]/, last.errorMessage);
        assertHidden(JSON.stringify(events), key, `${api}, thrown by fetch`);
      }
    }
  });
}

test('a short key is replaced only where it stands alone: the words around it stay whole', async () => {
  const server = await faultServer((req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`token ${sentKey(req)} rejected: contact support at support@q7.example\\nq7`));
  servers.push(server);
  const { last } = await runLoop(modelAt('openai-completions', server.origin), 'q7');
  // `\n` (an escaped newline in the body) before the key counts as a boundary.
  assert.equal(last.errorMessage, '401 token [redacted] rejected: contact support at support@[redacted].example\\n[redacted]');
  const words = await faultServer((_req, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('QQ Quota exceeded; Q-series'));
  servers.push(words);
  assert.equal((await runLoop(modelAt('openai-completions', words.origin), 'Q')).last.errorMessage, '500 QQ Quota exceeded; [redacted]-series');
});
