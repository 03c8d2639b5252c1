// One scenario run unchanged in Node, headless Chromium and workerd, so each runtime is
// checked against the same expectations. It takes the package's module namespace.

export const BODY =
  '\uFEFFevent: message_start\r\ndata: {"type":"message_start"}\r\n\r\n' +
  ': keep-alive\n\n' +
  'id: 7\nevent: delta\ndata: {"text":"h\u00e9llo \u{1F600} \u4f60\u597d"}\ndata: second line\n\n' +
  'retry: 1500\rdata: [DONE]\r\r' +
  'data: cut off';

export const EXPECTED = {
  events: [
    { type: 'message_start', data: '{"type":"message_start"}', lastEventId: '' },
    { type: 'delta', data: '{"text":"h\u00e9llo \u{1F600} \u4f60\u597d"}\nsecond line', lastEventId: '7' },
    { type: 'message', data: '[DONE]', lastEventId: '7' },
  ],
  truncated: true,
  retry: 1500,
};

function decode(mod, chunks) {
  const d = new mod.SseDecoder();
  const events = [];
  for (const c of chunks) events.push(...d.feed(c));
  events.push(...d.finish());
  const out = { events, truncated: d.truncated, retry: d.retry };
  d.free();
  return out;
}

/** Decodes BODY in one chunk and split at every byte offset; reports the one-chunk result
 * and the first split whose result differs (or -1). */
export function runSseScenario(mod) {
  const bytes = new TextEncoder().encode(BODY);
  const whole = decode(mod, [bytes]);
  const wholeJson = JSON.stringify(whole);
  let firstMismatch = -1;
  for (let cut = 0; cut <= bytes.length && firstMismatch < 0; cut++) {
    const got = decode(mod, [bytes.subarray(0, cut), bytes.subarray(cut)]);
    if (JSON.stringify(got) !== wholeJson) firstMismatch = cut;
  }
  return { ...whole, splits: bytes.length + 1, firstMismatch };
}
