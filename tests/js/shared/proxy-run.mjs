// Running a streamProxy implementation and recording what it did, the same way for this
// package and for pi-agent-core, so runs can be compared event by event.
import assert from 'node:assert/strict';
import { normalize } from './scenario.mjs';

export { normalize };

/**
 * Runs `streamProxy(model, context, options)` and consumes it. `pushed`: every event as it
 * was when the implementation pushed it (a deep copy taken then, so the shared partial's
 * later edits do not show; independent of how the body was chunked). `consumed`: what a
 * `for await` consumer saw, without the shared partial. `hung`: result() did not settle
 * within `timeout` ms.
 */
export async function runProxy(streamProxy, model, context, options, { timeout = 5000, onEvent } = {}) {
  const out = { pushed: [], consumed: [] };
  let stream;
  try {
    stream = streamProxy(model, context, options);
  } catch (error) {
    out.threw = String(error);
    return out;
  }
  const push = stream.push.bind(stream);
  stream.push = (event) => {
    // A push after the stream ended is ignored by the stream: not an event anyone sees.
    const accepted = !stream.done;
    push(event);
    if (accepted) out.pushed.push(structuredClone(event));
  };
  let timer;
  const hang = new Promise((resolve) => { timer = setTimeout(resolve, timeout, 'hung'); });
  const consume = (async () => {
    for await (const event of stream) {
      const { partial, message, error, ...rest } = event;
      out.consumed.push(rest);
      await onEvent?.(event, out.consumed.length - 1);
    }
    return stream.result();
  })();
  const result = await Promise.race([consume, hang]);
  clearTimeout(timer);
  if (result === 'hung') out.hung = true;
  else out.result = structuredClone(result);
  out.live = result;
  return out;
}

/** `runProxy` with the global fetch replaced by `fetchFn` for the call (pi's streamProxy
 * only uses the global one). */
export async function withFetch(fetchFn, fn) {
  const saved = globalThis.fetch;
  globalThis.fetch = fetchFn;
  try {
    return await fn();
  } finally {
    globalThis.fetch = saved;
  }
}

/** A fetch answering every call with a real Response whose body yields `chunks` in order
 * (each its own read), then ends, or with `hold` stays open. Records the calls. */
export function bodyFetch(chunks, init = { status: 200, headers: { 'content-type': 'text/event-stream' } }, { hold = false } = {}) {
  const calls = [];
  const fetchFn = async (url, options) => {
    calls.push({ url, options });
    let i = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (i < chunks.length) controller.enqueue(chunks[i++]);
        else if (hold) return new Promise(() => {});
        else controller.close();
        return undefined;
      },
    });
    return new Response(body, init);
  };
  fetchFn.calls = calls;
  return fetchFn;
}

/** Like `bodyFetch`, with a fault at chunk `at`: `error` makes the body fail there (a reset
 * connection), `stall` stops it there for good and calls `onStall`. */
export function faultyFetch(chunks, { kind, at }, onStall) {
  return async () => {
    let i = 0;
    const body = new ReadableStream({
      pull(controller) {
        if (i === at && kind === 'error') return controller.error(new TypeError('terminated'));
        if (i === at && kind === 'stall') {
          onStall();
          return new Promise(() => {});
        }
        if (i < chunks.length) controller.enqueue(chunks[i++]);
        else controller.close();
        return undefined;
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
}

/** Two runs (with their `requests`) are the same: events as pushed and as consumed, the
 * final message, the requests. */
export function assertSameRun(o, p) {
  assert.deepEqual(normalize(o.pushed), normalize(p.pushed), 'events as pushed');
  assert.deepEqual(o.consumed, p.consumed, 'events as consumed');
  assert.deepEqual(normalize(o.result), normalize(p.result), 'final message');
  assert.deepEqual(o.requests ?? [], p.requests ?? [], 'requests (method, URL, headers, body)');
}

/** The runs with the final errorMessage set aside: where only the wording differs. */
export function assertSameButMessage(o, p) {
  const strip = (run) => {
    const pushed = normalize(run.pushed);
    if (pushed.at(-1)?.type === 'error') delete pushed.at(-1).error.errorMessage;
    const result = normalize(run.result);
    delete result.errorMessage;
    return { pushed, result, consumed: run.consumed };
  };
  assert.deepEqual(strip(o), strip(p));
}

export async function waitFor(predicate, ms = 3000) {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}
