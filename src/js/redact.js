// How a secret (an API key, a proxy's auth token) is kept out of error text: one policy for
// the built-in stream (called from wasm through the glue) and streamProxy.

/**
 * `text` with every occurrence of `secret` replaced by [redacted], in every form a server
 * may echo it: as sent, trimmed (fetch trims header values, so a key read from a file with
 * its newline comes back without it), JSON-escaped (a key with `"` or `\` echoed in a JSON
 * body) and URI-encoded. A form shorter than 8 characters is replaced only where it stands
 * alone (no letter or digit either side): replacing a 1-character token everywhere would
 * turn "fetch failed" into "fe[redacted]ch failed", while a server echoing it is still caught.
 */
export function redact(text, secret) {
  if (typeof text !== 'string' || typeof secret !== 'string' || secret.trim() === '') return text;
  const forms = new Set();
  for (const s of [secret, secret.trim()]) {
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
    try {
      forms.add(encodeURIComponent(s));
    } catch {
      // A lone surrogate cannot be URI-encoded; the other forms still apply.
    }
  }
  // Longest first, so a form is not cut up by a shorter one inside it.
  for (const form of [...forms].filter((f) => f.trim() !== '').sort((a, b) => b.length - a.length)) {
    if (form.length >= 8) {
      text = text.split(form).join('[redacted]');
    } else {
      const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      text = text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'gu'), '[redacted]');
    }
  }
  return text;
}
