// How a failed fetch is worded, for the built-in stream (called from wasm through the glue)
// and for streamProxy: one home for both.

/** An error's message with its cause (fetch's "fetch failed" says nothing by itself: the
 * cause says refused, unknown host, reset). Never throws, whatever it is given. */
export function describeError(error) {
  try {
    if (error !== null && typeof error === 'object' && typeof error.message === 'string') {
      let text = error.message || error.name || 'Error';
      const { cause } = error;
      const detail = cause == null ? '' : typeof cause === 'object' ? String(cause.message || cause.code || '') : String(cause);
      if (detail !== '' && !text.includes(detail)) text += ` (${detail})`;
      return text;
    }
    return String(error);
  } catch {
    return 'Unknown error';
  }
}
