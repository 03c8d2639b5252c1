// The body of a line-oriented event stream (pi's proxy wire format: one JSON event per
// `data:` line) as lines, from byte chunks that may split a line, a CRLF pair or a UTF-8
// character anywhere. Depends on nothing.
//
// Lines end at LF, CRLF or CR (the three SSE line ends, WHATWG HTML §9.2.5). A line is
// handed out as soon as its end arrives, never waiting for a blank line, because pi reads
// each `data:` line as one event. Work is linear in the body: a chunk is scanned once and
// the pieces of an unfinished line are joined once, when it ends.

export class DataLines {
  #decoder = new TextDecoder();
  #pieces = [];
  #afterCr = false;
  // Per instance: a shared global regex's lastIndex would be clobbered by re-entrant use.
  #lineEnd = /[\r\n]/g;

  /** Decodes `chunk` (bytes or a string) and calls `onLine(line)` for each line it
   * finishes, stopping early when `onLine` returns true. Returns true if it stopped. */
  push(chunk, onLine) {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    return this.#scan(text, onLine);
  }

  /** At the end of the body: the last line if it had no line end, else undefined. */
  finish(onLine) {
    const rest = this.#decoder.decode();
    if (rest !== '' && this.#scan(rest, onLine)) return undefined;
    if (this.#pieces.length === 0) return undefined;
    const line = this.#pieces.join('');
    this.#pieces = [];
    return line;
  }

  #scan(text, onLine) {
    let start = 0;
    // A CR that ended the previous chunk already ended its line; a LF right after it is
    // the rest of a CRLF pair.
    if (this.#afterCr && text.length > 0) {
      this.#afterCr = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const lineEnd = this.#lineEnd;
    lineEnd.lastIndex = start;
    for (let m = lineEnd.exec(text); m !== null; m = lineEnd.exec(text)) {
      const end = m.index;
      let line = text.slice(start, end);
      if (this.#pieces.length > 0) {
        this.#pieces.push(line);
        line = this.#pieces.join('');
        this.#pieces = [];
      }
      start = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (start === text.length) this.#afterCr = true;
        else if (text.charCodeAt(start) === 10) start += 1;
      }
      lineEnd.lastIndex = start;
      if (onLine(line) === true) return true;
    }
    if (start < text.length) this.#pieces.push(text.slice(start));
    return false;
  }
}
