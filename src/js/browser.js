// Browser (and default) entry. The .wasm travels inside a JS chunk, gzipped and base64
// encoded (wasm-inline.js, written by the build), imported on first use: every bundler
// (Vite dev and build, webpack, esbuild, Rollup) and a plain import map load it as
// ordinary JavaScript, with no asset rule, no URL to resolve and no plugin. The bytes are
// gzipped by zopfli, so the chunk gzips 5% below the .wasm's own gzip at zlib's level 9,
// and it is fetched only when the agent
// first runs (or on `ready()`), so page load does not wait for it.
import { useSource } from './wasm.js';

useSource({
  async load() {
    const { default: base64 } = await import('./wasm-inline.js');
    if (typeof DecompressionStream !== 'function') {
      throw new Error('this runtime has no DecompressionStream');
    }
    const gzipped = new Blob([fromBase64(base64)]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(gzipped).arrayBuffer();
  },
  hint:
    globalThis.navigator?.userAgent === 'Cloudflare-Workers'
      ? // Bundled for Workers without the "workerd" export condition: this entry compiles from
        // bytes, which Workers forbid.
        "In Cloudflare Workers, bundle with wrangler: it picks this package's workerd entry, which imports the .wasm as a compiled module (Workers cannot compile WebAssembly from bytes)."
      : "If the page sets a Content-Security-Policy, allow 'wasm-unsafe-eval' in script-src. " +
        'If the error names wasm-inline.js, deploy every chunk your bundler emitted next to the app. ' +
        'Browsers need WebAssembly and DecompressionStream (Chrome 80, Firefox 113, Safari 16.4).',
});

/** Decodes base64 text to bytes (`Uint8Array.fromBase64` where the runtime has it). */
function fromBase64(text) {
  if (typeof Uint8Array.fromBase64 === 'function') return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export * from './api.js';
