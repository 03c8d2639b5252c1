// How a secret (an API key, a proxy's auth token) is kept out of error text: one policy for
// the built-in stream (called from wasm through the glue) and streamProxy.

/** What follows the backslash of JSON's short escape for a character. */
const SHORT_ESCAPES = { '"': '"', '/': '/', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't' };
/** HTML's named references for the characters servers escape. */
const NAMED = { '"': 'quot', '&': 'amp', '<': 'lt', '>': 'gt', "'": 'apos' };
/** A JSON escape's backslash, doubled once per level of JSON quoted inside JSON. */
const BACKSLASHES = '\\\\{1,16}';

/** `n` in hex digits, each letter matching either case. */
function hex(n, width = 0) {
  return n.toString(16).padStart(width, '0').replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
}

/**
 * A pattern for one character of the secret in each spelling a server may echo it in: as
 * is; JSON-escaped (`\"`, `\\`, `\/`, `\n`, `\u00e9`, a surrogate pair), also inside JSON
 * quoted in JSON (a gateway wrapping an upstream error body); percent-encoded as URLs and
 * form bodies encode it (once or twice; `+` for a space); or as an HTML character reference.
 * Letters and digits too: a body that is no JSON may still carry `\\u0073` or `%58`.
 */
function spellings(ch) {
  const cp = ch.codePointAt(0);
  // As is; a backslash as is or escaped, at any level, is a run of them. Letters and digits
  // have their escaped and encoded spellings too (a text body may echo `\u0073k-…` or `%58`).
  const alnum = /^[A-Za-z0-9]$/.test(ch);
  const alts = [alnum ? ch : ch === '\\' ? '\\\\{1,32}' : `\\u{${cp.toString(16)}}`];
  const units = cp > 0xffff ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [cp];
  alts.push(units.map((u) => `${BACKSLASHES}u${hex(u, 4)}`).join(''));
  if (ch in SHORT_ESCAPES) alts.push(`${BACKSLASHES}${SHORT_ESCAPES[ch]}`);
  if (ch === ' ') alts.push('\\+');
  // Lone surrogates have no UTF-8 form.
  if (cp < 0xd800 || cp > 0xdfff) {
    alts.push([...new TextEncoder().encode(ch)].map((b) => `%(?:25)?${hex(b, 2)}`).join(''));
  }
  alts.push(`&#0*${cp};`, `&#[xX]0*${hex(cp)};`);
  if (ch in NAMED) alts.push(`&${NAMED[ch]};`);
  return `(?:${alts.join('|')})`;
}

/** Not inside a word: no letter or digit before (a JSON escape or a percent-encoded byte
 * just before counts as a boundary), none after. */
const BEFORE = '(?:(?<![\\p{L}\\p{N}])|(?<=\\\\[bfnrt]|%[0-9A-Fa-f]{2}))';
const AFTER = '(?![\\p{L}\\p{N}])';

/**
 * `text` with every occurrence of `secret` replaced by [redacted], in every spelling a
 * server may echo it in (see `spellings`), each character spelt any of its ways: as sent,
 * and trimmed (fetch trims header values, so a key read from a file with its newline comes
 * back without it). A secret shorter than 8 characters is replaced only where it stands
 * alone (no letter or digit either side): replacing a 1-character token everywhere would
 * turn "fetch failed" into "fe[redacted]ch failed", while a server echoing it is still caught.
 */
export function redact(text, secret) {
  if (typeof text !== 'string' || typeof secret !== 'string' || secret.trim() === '') return text;
  // Longest first, so the secret with its whitespace goes before the trimmed one inside it.
  for (const form of new Set([secret, secret.trim()])) {
    text = form.length > MAX_PATTERN_SECRET ? redactLiteral(text, form) : redactSpellings(text, form);
  }
  return text;
}

/** Longer than any real key: a pattern per character would be past what RegExp compiles
 * (a 3 MB "key" throws "Invalid regular expression"), so such a secret is matched literally. */
const MAX_PATTERN_SECRET = 4096;

function redactSpellings(text, form) {
  const pattern = [...form].map(spellings).join('');
  const bounded = form.trim().length < 8 ? `${BEFORE}${pattern}${AFTER}` : pattern;
  let re;
  try {
    re = new RegExp(bounded, 'gu');
  } catch {
    return redactLiteral(text, form);
  }
  return text.replace(re, '[redacted]');
}

/** The secret as is, JSON-escaped and percent-encoded, by plain search. */
function redactLiteral(text, form) {
  const forms = [form, JSON.stringify(form).slice(1, -1)];
  try {
    forms.push(encodeURIComponent(form));
  } catch {
    // A lone surrogate has no percent-encoding.
  }
  for (const f of forms) text = text.split(f).join('[redacted]');
  return text;
}
