// A response body as a reader: one home for what counts as a readable body, for the built-in
// providers' reads (loop.js `bodyReader`, for fetch.rs) and for streamProxy (proxy.js).

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
