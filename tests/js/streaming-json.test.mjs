// The partial tool-call arguments that JS stream glue shows while a call's JSON text streams
// (src/js/streaming-json.js, the one parser of partial arguments: the core keeps `{}` until
// the call ends) against pi-ai 1.6.0's `ToolCallArgumentsStream`, piece by piece, on the
// recorded documents of tests/fixtures/reference/streaming-json.json (well-formed,
// malformed and truncated, split at random) and on documents cut at every offset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ToolArguments } from '../../pkg/streaming-json.js';
import { ToolCallArgumentsStream } from '@earendil-works/pi-ai/utils/streaming-json';

const cases = JSON.parse(readFileSync(new URL('../fixtures/reference/streaming-json.json', import.meta.url), 'utf8'));

/** Feeds `pieces` to both parsers and compares the arguments after each piece. */
function compare(pieces, label) {
  const ours = new ToolArguments();
  const pi = new ToolCallArgumentsStream();
  let changes = 0;
  let last;
  pieces.forEach((piece, i) => {
    const a = ours.append(piece);
    const b = pi.append(piece);
    assert.deepEqual(a, b, `${label}, after piece ${i} (${JSON.stringify(piece)})`);
    if (a !== last) changes += 1;
    last = a;
  });
  return changes;
}

test('partial arguments match pi-ai at every piece of the recorded documents', () => {
  assert.ok(cases.length > 400, `${cases.length} recorded cases`);
  let changed = 0;
  for (const [i, c] of cases.entries()) changed += compare(c.pieces, `case ${i}: ${c.doc.slice(0, 60)}`);
  assert.ok(changed > cases.length, 'the arguments change as the documents stream');
});

test('partial arguments match pi-ai for documents cut at every offset, one character a piece', () => {
  const docs = [
    '{"path": "src/main.rs", "lines": [1, 2, -3.5e+2], "ok": true, "none": null}',
    '{"q": "esc \\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00", "n": {"deep": [[{"x": [false]}]]}}',
    '{"bad": tru, "x": 1 2, "y": }',
  ];
  for (const doc of docs) {
    for (let cut = 0; cut <= doc.length; cut++) compare([...doc.slice(0, cut)], `${doc.slice(0, 30)} cut at ${cut}`);
  }
});
