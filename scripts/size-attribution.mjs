// Sums twiggy's per-item sizes (its `top --format csv`) into the parts of the package, so a
// cut can be aimed and its effect rerun: `node scripts/size-attribution.mjs top.csv [--top N]`.
// Called by scripts/size-attribution.sh, which makes the CSV from a build with names kept.
//
// An item counts for the first part whose pattern its name matches: a generic instance named
// after one of our types counts where that type's module is, unless an earlier part claims
// it. Raw bytes, before gzip (the shipped total in gzip is printed by size-report.mjs;
// `--wasm FILE` prints the gzip of the same build stripped of its names).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const file = process.argv[2];
const topArg = process.argv.indexOf('--top');
const topN = topArg > 0 ? Number(process.argv[topArg + 1]) : 25;
const wasmArg = process.argv.indexOf('--wasm');
if (!file) {
  console.error('usage: node scripts/size-attribution.mjs top.csv [--top N] [--wasm shipped.wasm]');
  process.exit(2);
}

/** [name, shallow bytes] per CSV row (the name may be quoted, with "" for a quote). */
function rows(text) {
  const out = [];
  for (const line of text.split('\n').slice(1)) {
    const m = line.match(/^("(?:[^"]|"")*"|[^,]*),(\d+),/);
    if (m) out.push([m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1], Number(m[2])]);
  }
  return out;
}

const own = (path) => new RegExp(`^<?pi_agent_wasm::${path}`);
const PARTS = [
  ['function names (not shipped)', [/"function names" subsection|^name section/]],
  ['data (strings, tables)', [/^data segment/]],
  ['providers: requests', [own('provider::[a-z_]+_request'), own('provider::transform')]],
  ['providers: decoders', [own('provider::(openai_completions|openai_responses|anthropic|google|arguments|usage)')]],
  ['providers: driver, fetch', [own('provider'), own('wasm::(builtin|fetch|sse)')]],
  ['SSE, streaming JSON', [own('stream::')]],
  ['argument validation', [own('agent::validate')]],
  ['loop, checkpoints', [own('agent::')]],
  ['messages, events, JSON', [own('(message|event|json|jsnum|error|io)')]],
  ['JS binding (ours)', [own('wasm::')]],
  ['float print/parse', [/flt2dec|dec2flt|f64 as core.*(Display|FromStr|Debug)|grisu|dragon/]],
  ['wasm-bindgen, js-sys', [/wasm_bindgen|js_sys|externref shim|__wbindgen|__wbg|web_sys/]],
  ['futures', [/futures/]],
  ['allocator (talc)', [/talc|__rust_(alloc|dealloc|realloc)|__rdl_/]],
  ['collections (alloc)', [/alloc::(vec|string|raw_vec|collections|fmt|str|slice)|RawVec/]],
  ['core (fmt, str, char tables)', [/core::|^<?core|^<?alloc/]],
];

const sums = new Map(PARTS.map(([name]) => [name, 0]));
let other = 0;
let total = 0;
const items = rows(readFileSync(file, 'utf8'));
for (const [name, size] of items) {
  total += size;
  const part = PARTS.find(([, pats]) => pats.some((p) => p.test(name)));
  if (part) sums.set(part[0], sums.get(part[0]) + size);
  else other += size;
}
sums.set('other (unnamed generics, glue)', other);

const kb = (n) => (n / 1024).toFixed(1).padStart(7);
console.log('size by part (twiggy, raw KB of the -Oz build with names kept)');
for (const [name, size] of [...sums].sort((a, b) => b[1] - a[1])) {
  console.log(`  ${kb(size)}  ${((100 * size) / total).toFixed(1).padStart(5)}%  ${name}`);
}
console.log(`  ${kb(total)}  100.0%  total`);
if (wasmArg > 0) {
  // The same build stripped of its names; build.sh's .wasm is a few hundred bytes smaller
  // (it also trims the source paths in its panic locations).
  const ship = readFileSync(process.argv[wasmArg + 1]);
  console.log(`\nthis build stripped: raw ${(ship.length / 1024).toFixed(1)} KB, gzip -9 ${(gzipSync(ship, { level: 9 }).length / 1024).toFixed(1)} KB`);
}
console.log(`\nlargest ${topN} items`);
for (const [name, size] of items.slice(0, topN)) console.log(`  ${kb(size)}  ${name.slice(0, 150)}`);
