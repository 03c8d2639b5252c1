// A page attached to a Durable Object session (issue 33): it follows the session's events and
// runs its client tools (`client: true` in the Worker), answering each waiting call with the
// tool's result. Not in pi. Depends on no wasm, so a page imports it from
// `pi-agent-wasm/cloudflare` without the engine.
import { DataLines } from './data-lines.js';

/** Calls `fetch` as a method of the global object when it is the global one (a detached
 * `window.fetch` throws "Illegal invocation"). */
function fetcher(f) {
  if (f === undefined) return (...a) => globalThis.fetch(...a);
  if (typeof f !== 'function') throw new TypeError('connectSession: options.fetch must be a function');
  return f;
}

/** The error result of a tool that threw or gave what a session does not take. */
const failure = (text) => ({ content: [{ type: 'text', text }], details: {}, isError: true });

/**
 * Attaches to the session at `url` (`…/sessions/:id`): runs each waiting call of a tool in
 * `options.tools` once, and answers it with `POST …/tool-calls/:callId/result`. Calls that
 * waited before the page attached are taken from the session's `pending` list; later ones
 * from its `tool_execution_waiting` events. Reconnects after a lost connection (from the last
 * event seen). Returns `{ ready, close(), lastEventId }`.
 */
export function connectSession(url, options = {}) {
  if (typeof url !== 'string' && !(url instanceof URL)) throw new TypeError('connectSession: url must be a string or a URL');
  const { tools = [], token, headers = {}, onEvent, onError, retryMs = 1000 } = options;
  if (typeof retryMs !== 'number' || !(retryMs >= 10) || !Number.isFinite(retryMs)) throw new TypeError('connectSession: options.retryMs must be a number of milliseconds, 10 or more');
  if (!Array.isArray(tools) || !tools.every((t) => typeof t?.name === 'string' && typeof t.execute === 'function')) {
    throw new TypeError('connectSession: options.tools must be an array of tools, each with a name and an execute function');
  }
  const request = fetcher(options.fetch);
  const base = String(url).replace(/\/+$/, '');
  const byName = new Map(tools.map((t) => [t.name, t]));
  // The token wins over an Authorization header given in `headers`, whatever its case.
  const own = Object.entries(headers ?? {}).filter(([name]) => token === undefined || name.toLowerCase() !== 'authorization');
  const auth = { ...Object.fromEntries(own), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
  const controller = new AbortController();
  const signal = controller.signal;
  /** Ids of the calls running here now: each runs once at a time. */
  const running = new Set();
  /** Per call answered here (or found answered): the session's last event id then. A
   * waiting event at or before it is one seen again (a replay); a later one asks anew. */
  const answeredAt = new Map();
  let lastEventId;
  let markReady;
  let refuse;
  const ready = new Promise((resolve, reject) => {
    markReady = resolve;
    refuse = reject;
  });
  ready.catch(() => {});
  const report = (error) => {
    if (signal.aborted) return;
    try {
      onError?.(error);
    } catch {
      // A throwing onError changes nothing here.
    }
  };

  /** Posts the result, and notes when the session took it (or had an answer already). */
  async function answer(id, result) {
    const to = `${base}/tool-calls/${encodeURIComponent(id)}/result`;
    const post = (body) => request(to, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
    let response = await post(result);
    // The session refused the result (its shape, or over its size limit): the call gets an
    // error result that says why, rather than waiting on.
    if (response.status === 400 || response.status === 413) {
      const why = response.status === 413 ? 'it is larger than the session takes' : (await response.json().catch(() => ({}))).detail ?? 'malformed';
      response = await post(failure(`The client's result was refused: ${why}`));
    }
    if (response.ok) {
      answeredAt.set(id, Number((await response.json().catch(() => ({}))).lastEventId ?? lastEventId ?? 0));
      return;
    }
    // 409: answered elsewhere (another page), expired or aborted meanwhile.
    if (response.status === 409) {
      answeredAt.set(id, Number(lastEventId ?? 0));
      return;
    }
    report(new Error(`connectSession: answering ${id} got HTTP ${response.status}`));
  }

  /** Runs a waiting call of one of the page's tools, unless it runs here already or (for a
   * waiting event, `eventId`) was answered after that event. */
  async function run(id, name, args, eventId) {
    const tool = byName.get(name);
    if (tool === undefined || running.has(id)) return;
    if (eventId !== undefined && answeredAt.has(id) && !(Number(eventId) > answeredAt.get(id))) return;
    running.add(id);
    try {
      await runOnce(id, tool, args);
    } finally {
      running.delete(id);
    }
  }

  async function runOnce(id, tool, args) {
    let result;
    try {
      const r = await tool.execute(id, args, signal);
      result = { content: r?.content, details: r?.details ?? {} };
      if (r?.isError !== undefined) result.isError = r.isError;
      JSON.stringify(result);
    } catch (error) {
      result = failure(error instanceof Error ? error.message : String(error));
    }
    if (signal.aborted) return;
    await answer(id, result).catch(report);
  }

  /** The calls that waited before this connection: the session's `pending` list. */
  async function catchUp() {
    const response = await request(base, { headers: auth, signal });
    if (!response.ok) return response;
    const state = await response.json();
    lastEventId ??= state.lastEventId;
    for (const c of state.pending ?? []) if (c?.kind === 'client') run(c.id, c.tool, c.arguments);
    return response;
  }

  function dispatch(id, data) {
    if (id !== undefined) lastEventId = id;
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    try {
      onEvent?.(event);
    } catch (error) {
      report(error);
    }
    if (event?.type === 'tool_execution_waiting' && event.kind === 'client') run(event.toolCallId, event.toolName, event.args, id);
  }

  async function follow() {
    const response = await request(`${base}/events`, {
      headers: { ...auth, accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) },
      signal,
    });
    if (!response.ok || response.body === null) return response;
    markReady();
    const lines = new DataLines();
    let id;
    let data = [];
    const onLine = (line) => {
      if (line === '') {
        if (data.length > 0) dispatch(id, data.join('\n'));
        id = undefined;
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line.startsWith('id:')) id = line.slice(3).trim();
    };
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      lines.push(value, onLine);
    }
    return response;
  }

  (async () => {
    while (!signal.aborted) {
      try {
        let response = await catchUp();
        if (response.ok) response = await follow();
        // Not allowed: nothing to retry.
        if (response.status === 401 || response.status === 403) {
          const error = new Error(`connectSession: HTTP ${response.status} from the session`);
          report(error);
          refuse(error);
          break;
        }
      } catch (error) {
        if (signal.aborted) break;
        report(error);
      }
      // Lost, ended or not there yet (404): again after a while.
      await new Promise((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, retryMs);
        signal.addEventListener('abort', done);
      });
    }
    markReady();
  })();

  return {
    ready,
    close: () => controller.abort(),
    get lastEventId() {
      return lastEventId;
    },
  };
}
