// Partial tool-call arguments from JSON text that arrives in deltas, for stream functions
// written in JS (streamProxy). Depends on nothing.
//
// What a partial looks like is pi-ai 1.6.0's (`ToolCallArgumentsStream` over its
// `StreamingJsonParser`), so a consumer sees the same `arguments` at every delta as with pi:
// - an unterminated string shows what was read; an unfinished escape is held back; an invalid
//   escape (`\q`, `\u12` followed by a non-hex character) stays literal text;
// - an unterminated container shows its members so far; a member whose value has not started
//   is omitted; an unterminated number or literal shows once it reads as one (`tr` → true,
//   `12e` → 12), unless it is longer than 64 characters;
// - missing commas and colons are tolerated, values in invalid positions and unknown words are
//   dropped, text after the root value is ignored, and nothing ever throws;
// - a snapshot never changes once returned: the containers still open are copied into each new
//   one, finished values are shared. Copies are paid for with credit earned per delta (a
//   constant plus a multiple of its length), so a huge open array streamed in tiny deltas
//   shows a preview that lags a little instead of costing quadratic time.
// Each delta is read once: the cost of a stream is linear in its length.

const CREDIT_PER_DELTA = 256;
const CREDIT_PER_CHAR = 8;
const MAX_PENDING_TOKEN = 64;

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
// A number whose exponent has no digits yet ("1e", "2.5E+") shows as its mantissa.
const NUMBER_AWAITING_EXPONENT = /^(-?(?:0|[1-9]\d*)(?:\.\d+)?)[eE][+-]?$/;
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const ROOT = Object.freeze({ root: true });

const isHex = (c) => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
// Characters that end a number or literal token (and are then read as structure).
const ENDS_TOKEN = new Set([' ', '\t', '\n', '\r', ',', ':', '{', '}', '[', ']', '"']);

/** The value of a finished token, or undefined for an unknown word (dropped). */
function tokenValue(token) {
  if (token === 'true') return true;
  if (token === 'false') return false;
  if (token === 'null') return null;
  return JSON_NUMBER.test(token) ? Number(token) : undefined;
}

/** The value an unfinished token shows, or undefined. */
function partialTokenValue(token) {
  if ('true'.startsWith(token)) return true;
  if ('false'.startsWith(token)) return false;
  if ('null'.startsWith(token)) return null;
  if (JSON_NUMBER.test(token)) return Number(token);
  const m = NUMBER_AWAITING_EXPONENT.exec(token);
  return m ? Number(m[1]) : undefined;
}

/** Sets an own member, `__proto__` included, as JSON.parse does. */
function setMember(object, key, value) {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

function putAt(container, slot, value) {
  if (slot.index !== undefined) container[slot.index] = value;
  else setMember(container, slot.key, value);
}

/** Tolerant incremental JSON reader; see the module comment. */
export class PartialJson {
  #root = undefined;
  #finished = false;
  /** Open containers, outermost first: { value, slot, size, key, phase }. */
  #open = [];
  /** The open string: { isKey, slot, text, escape }. */
  #string = null;
  #token = '';
  #tokenSlot = undefined;
  /** What copying the open path costs: the sum of (size + 1) over open containers. */
  #openCost = 0;
  #credit = 0;
  #changed = false;
  #last = undefined;

  /** Reads the next piece of text. O(text.length). */
  append(text) {
    this.#credit += CREDIT_PER_DELTA + CREDIT_PER_CHAR * text.length;
    let i = 0;
    while (i < text.length && !this.#finished) {
      if (this.#string !== null) i = this.#readString(text, i);
      else if (this.#token !== '') i = this.#readToken(text, i);
      else this.#readStructure(text[i++]);
    }
  }

  /** The value read so far (undefined before one starts); the previous snapshot while
   * nothing changed or a fresh copy is not yet paid for. */
  snapshot() {
    if (!this.#changed) return this.#last;
    const pending = this.#pendingToken();
    const cost = this.#openCost + (pending === undefined ? 0 : 1);
    if (cost > this.#credit) return this.#last;
    this.#credit -= cost;
    this.#changed = false;
    this.#last = this.#copy(pending);
    return this.#last;
  }

  #top() {
    return this.#open[this.#open.length - 1];
  }

  /** Where a value starting now belongs; undefined where no value may stand. */
  #slotHere() {
    const top = this.#top();
    if (top === undefined) return this.#root === undefined ? ROOT : undefined;
    if (Array.isArray(top.value)) return { index: top.value.length };
    // `{"a" 1}` (no colon) still reads as {"a": 1}.
    if ((top.phase === 'value' || top.phase === 'colon') && top.key !== undefined) return { key: top.key };
    return undefined;
  }

  #place(slot, value) {
    if (slot === undefined) return;
    this.#changed = true;
    if (slot === ROOT) {
      this.#root = value;
      return;
    }
    const top = this.#top();
    const isNew = slot.index !== undefined ? slot.index === top.value.length : !Object.hasOwn(top.value, slot.key);
    if (isNew) {
      top.size += 1;
      this.#openCost += 1;
    }
    putAt(top.value, slot, value);
  }

  /** A value inside the top container (or the root value) ended. */
  #valueEnded() {
    const top = this.#top();
    if (top !== undefined) top.phase = 'comma';
    else if (this.#root !== undefined) this.#finished = true;
  }

  #readStructure(c) {
    const top = this.#top();
    switch (c) {
      case ' ': case '\t': case '\n': case '\r':
        return;
      case '"': {
        // A string where a key may stand is a key (also after a value: a missing comma).
        if (top !== undefined && !Array.isArray(top.value) && (top.phase === 'key' || top.phase === 'comma')) {
          this.#string = { isKey: true, slot: undefined, text: '', escape: '' };
          return;
        }
        const slot = this.#slotHere();
        this.#string = { isKey: false, slot, text: '', escape: '' };
        this.#place(slot, '');
        return;
      }
      case '{': case '[': {
        const value = c === '{' ? {} : [];
        const slot = this.#slotHere();
        this.#place(slot, value);
        this.#open.push({ value, slot, size: 0, key: undefined, phase: c === '{' ? 'key' : 'value' });
        this.#openCost += 1;
        this.#changed = true;
        return;
      }
      case '}': case ']': {
        // Either closer closes the innermost container; a stray one is ignored.
        const closed = this.#open.pop();
        if (closed === undefined) return;
        this.#openCost -= closed.size + 1;
        this.#changed = true;
        this.#valueEnded();
        return;
      }
      case ':':
        if (top !== undefined && !Array.isArray(top.value) && top.phase === 'colon') top.phase = 'value';
        return;
      case ',':
        if (top !== undefined) top.phase = Array.isArray(top.value) ? 'value' : 'key';
        return;
      default:
        this.#token = c;
        this.#tokenSlot = this.#slotHere();
        if (this.#tokenSlot !== undefined) this.#changed = true;
    }
  }

  #readToken(text, from) {
    let end = from;
    while (end < text.length && !ENDS_TOKEN.has(text[end])) end += 1;
    if (end > from) {
      this.#token += text.slice(from, end);
      if (this.#tokenSlot !== undefined) this.#changed = true;
    }
    if (end < text.length) {
      const value = tokenValue(this.#token);
      const slot = this.#tokenSlot;
      this.#token = '';
      this.#tokenSlot = undefined;
      if (value !== undefined) this.#place(slot, value);
      this.#valueEnded();
    }
    return end;
  }

  #addText(string, piece) {
    string.text += piece;
    if (!string.isKey) this.#place(string.slot, string.text);
  }

  #readString(text, from) {
    const string = this.#string;
    let run = from;
    for (let i = from; i < text.length; i++) {
      const c = text[i];
      if (string.escape !== '') {
        if (string.escape === '\\') {
          if (Object.hasOwn(ESCAPES, c)) {
            string.escape = '';
            this.#addText(string, ESCAPES[c]);
            run = i + 1;
            continue;
          }
          if (c === 'u') {
            string.escape = '\\u';
            run = i + 1;
            continue;
          }
          // Not an escape: the backslash is text, and `c` is read as usual.
          string.escape = '';
          this.#addText(string, '\\');
        } else if (isHex(c)) {
          string.escape += c;
          run = i + 1;
          if (string.escape.length === 6) {
            this.#addText(string, String.fromCharCode(parseInt(string.escape.slice(2), 16)));
            string.escape = '';
          }
          continue;
        } else {
          // `\u` with fewer than four hex digits is text, and `c` is read as usual.
          const literal = string.escape;
          string.escape = '';
          this.#addText(string, literal);
        }
        run = i;
      }
      if (c === '"') {
        if (i > run) this.#addText(string, text.slice(run, i));
        this.#endString(string);
        return i + 1;
      }
      if (c === '\\') {
        if (i > run) this.#addText(string, text.slice(run, i));
        string.escape = '\\';
        run = i + 1;
      }
    }
    if (text.length > run) this.#addText(string, text.slice(run));
    return text.length;
  }

  #endString(string) {
    this.#string = null;
    if (string.isKey) {
      const top = this.#top();
      top.key = string.text;
      top.phase = 'colon';
    } else {
      this.#valueEnded();
    }
  }

  #pendingToken() {
    const slot = this.#tokenSlot;
    if (slot === undefined || this.#token === '' || this.#token.length > MAX_PENDING_TOKEN) return undefined;
    const value = partialTokenValue(this.#token);
    return value === undefined ? undefined : { slot, value };
  }

  /** A fresh snapshot: copies of the open containers, each holding its open child's copy. */
  #copy(pending) {
    const open = this.#open;
    if (open.length === 0) return pending !== undefined && pending.slot === ROOT ? pending.value : this.#root;
    let child;
    let childSlot;
    for (let depth = open.length - 1; depth >= 0; depth--) {
      const frame = open[depth];
      const copy = Array.isArray(frame.value) ? frame.value.slice() : { ...frame.value };
      if (pending !== undefined && depth === open.length - 1) putAt(copy, pending.slot, pending.value);
      // A child opened where no value may stand was never placed, so it is not copied in.
      if (childSlot !== undefined) putAt(copy, childSlot, child);
      child = copy;
      childSlot = frame.slot;
    }
    return childSlot === ROOT ? child : this.#root;
  }
}

/** The partial arguments of one streaming tool call: always an object, a new one whenever
 * they changed. The raw text is not kept: the server's `toolcall_end` carries the final call. */
export class ToolArguments {
  #json = new PartialJson();
  #snapshot = undefined;
  #arguments = {};

  append(delta) {
    this.#json.append(delta);
    const snapshot = this.#json.snapshot();
    if (snapshot !== this.#snapshot) {
      this.#snapshot = snapshot;
      this.#arguments = snapshot !== null && typeof snapshot === 'object' && !Array.isArray(snapshot) ? snapshot : {};
    }
    return this.#arguments;
  }
}
