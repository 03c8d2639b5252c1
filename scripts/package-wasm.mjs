// Build step after wasm-opt: prepares pkg/ (or the directory given as the argument: the
// test-trap build, tests/js/shared/trap-build.mjs) for bundlers.
// 0. Short import names (see step 0 below).
// 1. pkg/wasm-inline.js: the .wasm gzipped and base64 encoded, the browser entry's source
//    (see src/js/browser.js for why the browser build carries the bytes in JS). The gzip is
//    zopfli's (@gfx/zopfli, a devDependency): the same format DecompressionStream reads,
//    5% smaller than zlib's level 9 (202.3 against 213.2 KB for the .wasm), for 2 s of build.
// 2. The wasm-bindgen glue's fallback `new URL('<name>_bg.wasm', import.meta.url)` is cut:
//    the entries always pass the module, and bundlers (Vite, webpack) that see that pattern
//    would emit the whole .wasm as an asset nobody loads.
// 3. The glue becomes one factory, `createGlue(guard)`: each call holds its own instance and
//    glue state (memory views, closures, finalizers), and `guard` wraps the instance's
//    exports (src/js/wasm.js). After a trap the next call gets a fresh instance, while
//    objects and callbacks of the dead one still reach only the dead one, whose guard
//    refuses them: never the new instance with a stale pointer.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipAsync } from '@gfx/zopfli';

const pkg = process.argv[2] ? pathToFileURL(`${resolve(process.argv[2])}/`) : new URL('../pkg/', import.meta.url);
const name = 'pi_agent_wasm';

/** Stops the build: the glue changed shape, and this script must learn the new one. */
function fail(what) {
  console.error(`package-wasm: ${what}; update scripts/package-wasm.mjs for this wasm-bindgen`);
  process.exit(1);
}

const gluePath = new URL(`${name}.js`, pkg);
let glue = readFileSync(gluePath, 'utf8');

/** Replaces the one occurrence of `from` in the glue. */
function patch(from, to) {
  if (glue.split(from).length !== 2) fail(`the glue has no single ${JSON.stringify(from)}`);
  glue = glue.replace(from, () => to);
}

// 0. Short import names. wasm-bindgen names each import `__wbg_<name>_<16 hex digits>`, in the
//    .wasm and again in the glue: 3.7 KB of names that gzip cannot shrink much (the digits are
//    random). Each becomes a name of one or two letters, in both.
const wasmPath = new URL(`${name}_bg.wasm`, pkg);
const MODULE = `./${name}_bg.js`;
const renamed = shortImports(readFileSync(wasmPath));
writeFileSync(wasmPath, renamed.bytes);
const keys = [...glue.matchAll(/^        (__wbg\w+|__wbindgen\w+): function/gm)].map((m) => m[1]);
if (keys.length !== renamed.names.size) fail(`the glue has ${keys.length} imports and the .wasm ${renamed.names.size}`);
for (const key of keys) {
  const short = renamed.names.get(key);
  if (short === undefined) fail(`the .wasm does not import ${key}`);
  patch(`        ${key}: function`, `        ${short}: function`);
}
patch(`        "${MODULE}": import0,`, '        w: import0,');

/** The .wasm `bytes` with each import of MODULE renamed (and the module itself, to `w`), and
 * the map of old names to new. Reads the import section (section 2) as the spec lays it out. */
function shortImports(bytes) {
  const enc = new TextEncoder(), dec = new TextDecoder();
  let at = 8;
  const u32 = () => {
    let n = 0, shift = 0, b;
    do { b = bytes[at++]; n |= (b & 0x7f) << shift; shift += 7; } while (b & 0x80);
    return n >>> 0;
  };
  const leb = (n) => {
    const out = [];
    do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n);
    return out;
  };
  const str = () => { const n = u32(); const s = dec.decode(bytes.subarray(at, at + n)); at += n; return s; };
  const name = (i) => {
    const A = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
    return i < A.length ? A[i] : A[Math.floor(i / A.length) - 1] + A[i % A.length];
  };
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = u32();
    const start = at;
    if (id !== 2) { at = start + size; continue; }
    const out = [];
    const names = new Map();
    const count = u32();
    out.push(...leb(count));
    for (let i = 0; i < count; i++) {
      let module = str();
      let field = str();
      if (module === MODULE) {
        if (!names.has(field)) names.set(field, name(names.size));
        field = names.get(field);
        module = 'w';
      }
      for (const s of [module, field]) { const b = enc.encode(s); out.push(...leb(b.length), ...b); }
      const descStart = at;
      const kind = bytes[at++];
      const limits = () => { const flag = bytes[at++]; u32(); if (flag & 1) u32(); };
      if (kind === 0) u32();
      else if (kind === 1) { at++; limits(); }
      else if (kind === 2) limits();
      else if (kind === 3) at += 2;
      else if (kind === 4) { at++; u32(); }
      else fail(`an import of kind ${kind}`);
      out.push(...bytes.subarray(descStart, at));
    }
    if (at !== start + size) fail('the import section did not read to its end');
    const section = Uint8Array.from([2, ...leb(out.length), ...out]);
    const rest = bytes.subarray(at);
    const head = bytes.subarray(0, start - 1 - leb(size).length);
    const result = new Uint8Array(head.length + section.length + rest.length);
    result.set(head);
    result.set(section, head.length);
    result.set(rest, head.length + section.length);
    return { bytes: result, names };
  }
  fail('the .wasm has no import section');
}

const wasm = readFileSync(wasmPath);
const base64 = Buffer.from(await gzipAsync(wasm, { numiterations: 15 })).toString('base64');
writeFileSync(
  new URL('wasm-inline.js', pkg),
  `// ${name}_bg.wasm (${wasm.length} bytes), gzipped and base64 encoded. Generated by the build.\nexport default '${base64}';\n`,
);

patch(`module_or_path = new URL('${name}_bg.wasm', import.meta.url);`, "throw new Error('pi-agent-wasm: the module source is missing');");
if (glue.includes('import.meta')) fail('the glue still mentions import.meta');

// The Rust executor (js-sys futures) schedules a woken task with `queueMicrotask` where the
// global has one, else with `then` on a resolved Promise: the same microtask queue, in the
// same order. workerd wraps each `queueMicrotask` callback for its async context, which cost
// about a tenth of a Worker's CPU per agent request (one wake per network chunk), so the glue
// answers that there is none.
patch('            const ret = arg0.queueMicrotask;\n', '            const ret = undefined;\n');

// The entries pass a compiled module or bytes, never a URL, a Request or a Response: the
// glue's checks for those go, because reading the global `Request` or `Response` in Node
// loads its whole fetch implementation (undici: about 10 ms of a cold start).
patch(
  "    if (typeof module_or_path === 'string' || (typeof Request === 'function' && module_or_path instanceof Request) || (typeof URL === 'function' && module_or_path instanceof URL)) {\n        module_or_path = fetch(module_or_path);\n    }\n",
  '',
);
patch("    if (typeof Response === 'function' && module instanceof Response) {", '    if (false) {');
if (/\b(Request|Response|fetch)\b/.test(glue.replace(/\/\/.*$/gm, '').replace(/'[^'\n]*'|`[^`]*`|"[^"\n]*"/g, ''))) {
  fail('the glue reads Request, Response or fetch');
}

// Each import that may throw is `function() { return handleError(function (a, b) {…},
// arguments); }`: a closure, an `arguments` object and an `apply` on every call, for the
// crossings made most (every await, event and hook): 2-3% of a long session's time. Each
// becomes the same body in a plain try/catch, which stores the thrown value as handleError does.
const guarded = /^(        \w+): function\(\) \{ return handleError\(function \(([^)]*)\) \{\n([\s\S]*?)\n        \}, arguments\); \},$/gm;
let unwrapped = 0;
glue = glue.replace(guarded, (_, key, args, body) => {
  unwrapped += 1;
  return `${key}: function(${args}) { try {\n${body}\n        } catch (e) { storeThrown(e); } },`;
});
if (unwrapped === 0 || glue.includes('return handleError(')) fail('an import calls handleError in a new shape');
patch('function handleError(f, args) {\n    try {\n        return f.apply(this, args);\n    } catch (e) {\n        const idx = addToExternrefTable0(e);\n        wasm.__wbindgen_exn_store(idx);\n    }\n}\n',
  'function storeThrown(e) {\n    const idx = addToExternrefTable0(e);\n    wasm.__wbindgen_exn_store(idx);\n}\n');

// The guard sees every call into the instance.
patch('    wasm = instance.exports;\n', '    wasm = guard(instance.exports);\n');
if (glue.split('.exports').length !== 2) fail('the glue reads the exports in a second place');

// A dead instance's guard swallows a call into a Rust closure made from a JS callback (a
// Promise reaction, a microtask: a throw there would be uncaught) and returns [0, 0, 0].
// That is safe for the shapes of closure shim below; another shape must be looked at.
const shims = [...glue.matchAll(/^function (wasm_bindgen__convert__closures_____invoke__\w+)\(([^)]*)\) \{\n([\s\S]*?)\n\}$/gm)];
for (const [, shim, args, body] of shims) {
  const call = `wasm.${shim}(${args})`;
  const known = [`    ${call};`, `    const ret = ${call};\n    if (ret[1]) {\n        throw takeFromExternrefTable0(ret[0]);\n    }`];
  if (!known.includes(body)) fail(`closure shim ${shim} has a new shape`);
}
if (glue.split('wasm.wasm_bindgen__convert__closures_').length - 1 !== shims.length) fail('a closure is called outside its shim');

// The module-level declarations become the factory's locals.
const exported = [];
glue = glue.replace(/^export (class|function) (\w+)/gm, (_, kind, id) => {
  exported.push(id);
  return `${kind} ${id}`;
});
patch('export { initSync, __wbg_init as default };\n', '');
if (/^\s*(export|import)\b/m.test(glue)) fail('the glue has another import or export');
for (const declared of ['let wasmModule, wasmInstance, wasm;', 'let cachedDataViewMemory0 = null;', 'let cachedUint8ArrayMemory0 = null;']) {
  if (!glue.includes(declared)) fail(`the glue has no ${declared}`);
}
glue = `// The wasm-bindgen glue as one factory (scripts/package-wasm.mjs, step 3). Generated by the build.
export function createGlue(guard) {
${glue}
return {
    ${exported.join(', ')},
    initSync,
    init: __wbg_init,
    /** The compiled module, once instantiated: a new instance needs no new compile. */
    get module() { return wasmModule; },
    /** Lets go of the instance and its memory (after a crash): the guard refuses calls. */
    release() {
        wasmInstance = undefined;
        wasmModule = undefined;
        cachedDataViewMemory0 = null;
        cachedUint8ArrayMemory0 = null;
    },
};
}
`;
writeFileSync(gluePath, glue);
