// streamProxy: pi-agent-core's stream function for apps whose server holds the LLM key
// (spec L-161..L-163). It POSTs the request to `${proxyUrl}/api/stream`, reads the server's
// events (pi's events with `partial` stripped, one JSON per `data:` line), rebuilds the
// partial message and returns an AssistantMessageEventStream. Plain JS over `fetch`: it needs
// no wasm, so it works before (or without) the module being instantiated.
// Depends on event-stream.js, proxy-message.js and data-lines.js only.
//
// On a well-formed stream the request, the events, their `partial`s and the final message
// are pi's. Where pi hangs, throws, loses data or leaks the token, this ends the stream
// with one `error` event whose message (`stopReason` "error", or "aborted" when the signal
// fired) names the cause and never contains `authToken`. README lists each difference.
import { AssistantMessageEventStream } from './event-stream.js';
import { ProxyFailure, ProxyMessage } from './proxy-message.js';
import { DataLines } from './data-lines.js';
import { describeError as describe } from './describe-error.js';
import { redact } from './redact.js';
import { bodyReaderOf, bytesOf, cancelQuietly, readPastEmpty } from './body-reader.js';

/** The options sent to the server, in pi's order (L-161). */
const SENT_OPTIONS = [
  'temperature', 'samplingParams', 'maxTokens', 'reasoning', 'cacheRetention', 'sessionId',
  'disableContinuation', 'headers', 'metadata', 'transport', 'thinkingBudgets', 'maxRetryDelayMs',
];
const CLOSED_EARLY = 'Connection closed by proxy server before the response completed';
const ABORTED_BY_USER = 'Request aborted by user';
// How much of an unexpected body an error message quotes, and keeps to quote.
const QUOTE_CHARS = 300;
const KEEP_CHARS = 4096;

/**
 * pi's `streamProxy(model, context, { proxyUrl, authToken, signal?, ...options })`.
 * Besides pi's options it reads `fetch` (used instead of the global one, looked up per
 * call) and `timeoutMs` (the longest wait for the response and then for each piece of the
 * body, as in this package's built-in stream; opt-in).
 */
export function streamProxy(model, context, options) {
  const stream = new AssistantMessageEventStream();
  // Never rejects: every failure becomes the stream's final error event.
  new ProxyResponse(stream, model, options).run(context);
  return stream;
}

/** `f()`, or `fallback` when it throws: for reads of the caller's values (a signal, a
 * thrown value) where a getter or Proxy trap may throw, in code that must not. */
function attempt(f, fallback) {
  try {
    return f();
  } catch {
    return fallback;
  }
}

class ProxyResponse {
  #stream;
  #model;
  #options;
  #signal;
  #token;
  #timeoutMs;
  #message;
  #finished = false;
  #sawData = false;
  /** The body has been opened: an abort from now on is pi's "Request aborted by user". */
  #reading = false;
  #head = '';
  /** Ends the wait in progress early (abort). */
  #wake = null;
  /** Cancels the body being read. */
  #cancel = null;
  #controller = null;
  // An event listener: a throw here would be uncaught.
  #onAbort = () => {
    this.#controller?.abort(attempt(() => this.#signal.reason, undefined));
    this.#wake?.();
  };

  constructor(stream, model, options) {
    this.#stream = stream;
    this.#model = model;
    this.#options = options;
    this.#message = new ProxyMessage(model, (text) => this.#redact(text));
  }

  async run(context) {
    try {
      await this.#exchange(context);
    } catch (error) {
      // A thrown revoked Proxy throws on `instanceof` too.
      this.#fail(attempt(() => error instanceof ProxyFailure, false) ? error.message : describe(error));
    } finally {
      attempt(() => this.#signal?.removeEventListener?.('abort', this.#onAbort));
      this.#wake = null;
      // Ended early (terminal event, failure): release the connection.
      if (this.#cancel !== null) this.#cancel();
      this.#stream.end();
    }
  }

  async #exchange(context) {
    const options = this.#options;
    if (options === null || typeof options !== 'object') {
      throw new ProxyFailure('streamProxy needs options with proxyUrl and authToken');
    }
    this.#token = options.authToken;
    const signal = options.signal;
    if (signal != null && typeof signal.addEventListener === 'function') this.#signal = signal;
    const timeout = Number(options.timeoutMs);
    // setTimeout fires at once for delays beyond 2^31-1 ms, so longer ones mean "none".
    if (timeout > 0 && timeout <= 2 ** 31 - 1) this.#timeoutMs = timeout;
    if (this.#model === null || typeof this.#model !== 'object') throw new ProxyFailure('streamProxy needs a model');
    if (options.proxyUrl == null) throw new ProxyFailure('streamProxy needs options.proxyUrl');
    checkToken(options.authToken);
    const fetch = typeof options.fetch === 'function' ? options.fetch : globalThis.fetch;
    if (typeof fetch !== 'function') throw new ProxyFailure('No fetch function: pass options.fetch');
    // Aborted already: send nothing (pi's fetch rejects before connecting).
    if (this.#signal?.aborted) throw new ProxyFailure(abortMessage(this.#signal));

    const sent = {};
    for (const key of SENT_OPTIONS) sent[key] = options[key];
    let body;
    try {
      body = JSON.stringify({ model: this.#model, context, options: sent });
    } catch (error) {
      throw new ProxyFailure(`Cannot serialise the request: ${describe(error)}`);
    }
    this.#signal?.addEventListener('abort', this.#onAbort);
    let fetchSignal = signal;
    if (this.#timeoutMs !== undefined) {
      // A timeout must stop the request too: the caller's signal cannot be fired from here.
      this.#controller = new AbortController();
      fetchSignal = this.#controller.signal;
    }
    const response = await this.#wait(
      fetch(`${options.proxyUrl}/api/stream`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${options.authToken}`, 'Content-Type': 'application/json' },
        body,
        signal: fetchSignal,
      }),
      'no response',
    );
    if (response === null || typeof response !== 'object') {
      throw new ProxyFailure(`fetch returned ${response === null ? 'null' : typeof response}, not a Response`);
    }
    const status = response.status;
    const ok = typeof response.ok === 'boolean' ? response.ok : status >= 200 && status < 300;
    if (!ok) throw new ProxyFailure(await this.#httpError(response));
    await this.#read(response);
  }

  /** Reads the event stream until a terminal event or the end of the body (L-162). */
  async #read(response) {
    const next = this.#openBody(response);
    this.#reading = true;
    const lines = new DataLines();
    const onLine = (line) => this.#line(line);
    for (;;) {
      let step;
      try {
        step = await this.#wait(next(), 'no data');
      } catch (error) {
        if (error instanceof ProxyFailure) throw error;
        throw new ProxyFailure(`Reading the proxy response failed: ${describe(error)}`);
      }
      // An abort that came after this read settled: drop what it read, as pi does.
      if (this.#signal?.aborted) throw new ProxyFailure(ABORTED_BY_USER);
      if (step === null || typeof step !== 'object') throw new ProxyFailure('The proxy response body returned an invalid read');
      if (step.done) break;
      if (lines.push(bytesOrText(step.value), onLine)) return;
    }
    this.#cancel = null;
    const last = lines.finish(onLine);
    if (this.#finished) return;
    if (last !== undefined) {
      try {
        this.#line(last);
      } catch (error) {
        // An unterminated last line that does not parse was cut off (pi reports the JSON error).
        if (last.startsWith('data:')) throw new ProxyFailure(`${CLOSED_EARLY}: the last event was cut off`);
        throw error;
      }
      if (this.#finished) return;
    }
    if (this.#sawData || header(response, 'content-type').includes('text/event-stream')) throw new ProxyFailure(CLOSED_EARLY);
    throw new ProxyFailure(notEventStream(response, this.#head));
  }

  /** A `next()` over the body: a ReadableStream, an async iterable (node-fetch) or, for a
   * body-less response, its `text()`. Sets `#cancel`. */
  #openBody(response) {
    const body = response.body;
    const reader = bodyReaderOf(body);
    if (reader !== undefined) {
      this.#cancel = () => {
        this.#cancel = null;
        cancelQuietly(reader);
      };
      return () => readPastEmpty(reader, () => this.#cancel === null);
    }
    if (body == null && typeof response.text === 'function') {
      let read = false;
      return async () => {
        if (read) return { done: true };
        read = true;
        return { done: false, value: String(await response.text()) };
      };
    }
    throw new ProxyFailure('The proxy response has no readable body');
  }

  /** One line of the body: a `data:` line is one event. Returns true after a terminal event. */
  #line(line) {
    // Hidden before it is cut, so a cut through the token cannot leave part of it.
    if (!this.#sawData && this.#head.length < KEEP_CHARS) this.#head += `${this.#redact(line).slice(0, KEEP_CHARS)}\n`;
    if (!line.startsWith('data:')) return false;
    const data = line.slice(5).trim();
    if (data === '') return false;
    this.#sawData = true;
    let event;
    try {
      event = JSON.parse(data);
    } catch (error) {
      // V8 quotes the start of the text in its message, which may cut through the token:
      // that quote is replaced by the line's own start, with the token hidden first.
      const reason = describe(error).replace(/, ".*" is not valid JSON$|, ".*"\.\.\. is not valid JSON$/s, ' (not valid JSON)');
      throw new ProxyFailure(`Invalid JSON in proxy event: ${reason}: ${quote(this.#redact(data))}`);
    }
    const out = this.#message.apply(event);
    if (out === undefined) return false;
    if (out.type === 'done' || out.type === 'error') this.#finished = true;
    this.#stream.push(out);
    return this.#finished;
  }

  /** Ends the stream with a failure; nothing once it has ended (L-163). */
  #fail(message) {
    if (this.#finished) return;
    this.#finished = true;
    const aborted = attempt(() => this.#signal?.aborted === true, false);
    const { partial } = this.#message;
    partial.stopReason = aborted ? 'aborted' : 'error';
    // Once aborted, the abort is the cause, whatever failed after it.
    partial.errorMessage = this.#redact(aborted ? this.#abortText() : message);
    const reason = partial.stopReason;
    this.#stream.push({ type: 'error', reason, error: partial });
  }

  /** The message of a non-2xx response: pi's `Proxy error: <status> <statusText>` or
   * `Proxy error: <body.error>`, plus the start of a plain-text body. */
  async #httpError(response) {
    const statusText = typeof response.statusText === 'string' ? response.statusText : '';
    let message = statusText === '' ? `Proxy error: ${response.status}` : `Proxy error: ${response.status} ${statusText}`;
    let text;
    try {
      if (typeof response.text === 'function') text = await this.#wait(response.text(), 'no data');
    } catch {
      // The status is all there is.
    }
    if (typeof text !== 'string') return message;
    const error = jsonError(text);
    if (error !== undefined) return `Proxy error: ${error}`;
    const trimmed = this.#redact(text.trim());
    if (trimmed !== '' && !isHtml(response, trimmed)) message += `: ${quote(trimmed)}`;
    return message;
  }

  /** Awaits `promise`; fails early when the signal fires, or after `timeoutMs`. The one
   * abort listener wakes whichever wait is current, so a long stream does not pile
   * reactions onto a promise that never settles. */
  #wait(promise, waitingFor) {
    if (this.#signal?.aborted) {
      Promise.resolve(promise).catch(() => {});
      return Promise.reject(new ProxyFailure(this.#abortText()));
    }
    return new Promise((resolve, reject) => {
      let timer;
      let settled = false;
      // Whichever comes first; a late settle (the promise after a timeout) must not clear
      // the wake of a later wait.
      const settle = (fn, value) => {
        if (settled) return;
        settled = true;
        if (timer !== undefined) clearTimeout(timer);
        if (this.#wake === wake) this.#wake = null;
        fn(value);
      };
      const wake = () => settle(reject, new ProxyFailure(this.#abortText()));
      this.#wake = wake;
      if (this.#timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.#controller?.abort(new Error('timeout'));
          settle(reject, new ProxyFailure(`Request timed out: ${waitingFor} for ${this.#timeoutMs} ms`));
        }, this.#timeoutMs);
      }
      Promise.resolve(promise).then((value) => settle(resolve, value), (error) => settle(reject, error));
    });
  }

  /** Before the response: the abort reason, as fetch rejects with it (pi's message);
   * after it, pi's own text. */
  #abortText() {
    return this.#reading ? ABORTED_BY_USER : abortMessage(this.#signal);
  }

  /** The token never reaches an event: `authToken` in any message becomes [redacted]. */
  #redact(text) {
    return redact(text, this.#token);
  }
}


/** A token fetch would refuse in a header; fetch's own error would quote the header, and
 * with it the token (pi's errorMessage does). */
function checkToken(token) {
  // eslint-disable-next-line no-control-regex
  if (typeof token === 'string' && /[\0\r\n]|[^\0-\xff]/.test(token)) {
    throw new ProxyFailure('authToken is not a valid HTTP header value (line breaks, NUL or characters above U+00FF)');
  }
}

function abortMessage(signal) {
  const reason = attempt(() => signal?.reason, undefined);
  return reason === undefined ? ABORTED_BY_USER : describe(reason);
}


function bytesOrText(value) {
  if (typeof value === 'string') return value;
  const bytes = bytesOf(value);
  if (bytes !== undefined) return bytes;
  throw new ProxyFailure(`The proxy response body produced a ${value === null ? 'null' : typeof value} chunk, not bytes`);
}

function header(response, name) {
  const headers = response.headers;
  try {
    if (headers != null && typeof headers.get === 'function') return String(headers.get(name) ?? '');
    if (headers != null && typeof headers === 'object') {
      const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
      return key === undefined ? '' : String(headers[key]);
    }
  } catch {
    // A broken headers object says nothing.
  }
  return '';
}

/** `error` of a JSON error body, as text; undefined when there is none. */
function jsonError(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  const error = data?.error;
  if (!error) return undefined;
  if (typeof error !== 'object') return String(error);
  // pi prints an object as "[object Object]".
  return typeof error.message === 'string' && error.message !== '' ? error.message : JSON.stringify(error);
}

function isHtml(response, text) {
  return header(response, 'content-type').includes('text/html') || text.startsWith('<');
}

function quote(text) {
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS)}…` : text;
}

/** A 2xx body without a single event: what it was instead. */
function notEventStream(response, head) {
  const trimmed = head.trim();
  const error = trimmed.length < KEEP_CHARS ? jsonError(trimmed) : undefined;
  if (error !== undefined) return `Proxy error: ${error}`;
  const type = header(response, 'content-type') || 'none';
  if (trimmed === '') return `The proxy response is empty (status ${response.status}, content-type ${type})`;
  return `The proxy response is not an event stream (content-type ${type}): ${quote(trimmed)}`;
}
