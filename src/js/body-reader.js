// A response body as a reader, and its chunks as bytes: one home for what counts as a readable
// body and as a byte chunk, for the built-in providers' reads (loop.js, for fetch.rs) and for
// streamProxy (proxy.js).

/**
 * `{ read, cancel }` over `body`: a ReadableStream's own reader, or one over an async iterable
 * (node-fetch's body, a Node stream, an async generator), whose `cancel` is the iterator's
 * `return`; `undefined` for any other body. `read()` gives `{ done, value }` steps.
 */
export function bodyReaderOf(body) {
  if (body != null && typeof body.getReader === 'function') return body.getReader();
  if (body != null && typeof body[Symbol.asyncIterator] === 'function') {
    const iterator = body[Symbol.asyncIterator]();
    return { read: () => iterator.next(), cancel: () => iterator.return?.() };
  }
  return undefined;
}

/** Empty chunks a read passes in a row before it waits for a timer (`readPastEmpty`). */
const EMPTY_RUN = 16;

/**
 * `reader.read()`'s next step that is no empty chunk, as a plain `{ done, value }`: an empty
 * chunk is no data, so a caller's timeout goes on through it. A reader that answers at once
 * with no bytes, again and again (a body whose `pull` enqueues empty chunks), would otherwise
 * keep its caller in microtasks, where no timer or event ever runs again (neither an abort nor
 * a timeout could end it): every `EMPTY_RUN` empty chunks in a row, a timer is waited for.
 * `stop()` true ends the reads (`{ done: true }`).
 */
export async function readPastEmpty(reader, stop) {
  for (let n = 1; ; n++) {
    const step = await reader.read();
    const done = quietly(step, 'done');
    const value = done === false ? quietly(step, 'value') : undefined;
    if (done !== false || !isEmpty(value)) return step === null || typeof step !== 'object' ? step : { done, value };
    if (n % EMPTY_RUN === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    if (stop()) return { done: true, value: undefined };
  }
}

/** Whether a chunk holds no bytes. One that cannot be read (a detached buffer's view, whose
 * length reads 0) is not empty: its reader names it. */
function isEmpty(value) {
  if (value === '') return true;
  // A view with bytes, the usual chunk, is told at once (no second view made of it here).
  if (ArrayBuffer.isView(value) && quietly(value, 'byteLength') !== 0) return false;
  try {
    return bytesOf(value)?.length === 0;
  } catch {
    return false;
  }
}

/** Cancels `reader`'s body, never throwing: a cancel that throws or rejects (a reader of the
 * caller's `fetch`, a body already closed) is let be. */
export function cancelQuietly(reader) {
  Promise.resolve()
    .then(() => reader.cancel())
    .catch(() => {});
}

/** `o[k]` of a value the caller's `fetch` made: `undefined` for a primitive or a throwing read. */
export function quietly(o, k) {
  if (o === null || (typeof o !== 'object' && typeof o !== 'function')) return undefined;
  try {
    return o[k];
  } catch {
    return undefined;
  }
}

/** `ArrayBuffer.prototype.byteLength`'s getter: it throws for anything but an ArrayBuffer, of
 * any realm. */
const BYTE_LENGTH = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;

function isArrayBuffer(v) {
  try {
    BYTE_LENGTH.call(v);
    return true;
  } catch {
    return false;
  }
}

/**
 * A body chunk's bytes as a fresh Uint8Array of this realm, for any `ArrayBuffer` view or
 * `ArrayBuffer`, of any realm (a test environment such as jsdom, or a `fetch` from an iframe
 * or a polyfill, hands over typed arrays that `instanceof` does not recognise); `undefined`
 * for anything else (a look-alike included). The view's range is read without running its
 * own code twice, and the constructor checks it against the real buffer: it throws for a
 * detached buffer or a range outside it.
 */
export function bytesOf(value) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(quietly(value, 'buffer'), quietly(value, 'byteOffset'), quietly(value, 'byteLength'));
  if (isArrayBuffer(value)) return new Uint8Array(value, 0);
  return undefined;
}
