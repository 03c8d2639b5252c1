// Node entry: reads the .wasm next to this file and instantiates it synchronously on first
// use. Bundled into one file (esbuild, Rollup, webpack for a server or a serverless
// function), the .wasm is usually not beside the bundle; the gzipped copy inside
// wasm-inline.js then stands in, so the bundle works without copying any file.
import { readFileSync } from 'node:fs';
import { useSource } from './wasm.js';

useSource({
  sync() {
    try {
      return readFileSync(new URL('./pi_agent_wasm_bg.wasm', import.meta.url));
    } catch {
      return undefined;
    }
  },
  async load() {
    // node:zlib only here: an installed package never loads it (a few ms of a cold start).
    const [{ default: base64 }, { gunzipSync }] = await Promise.all([import('./wasm-inline.js'), import('node:zlib')]);
    return gunzipSync(Buffer.from(base64, 'base64'));
  },
  hint: 'Reinstall the package (its .wasm or wasm-inline.js is missing or damaged); Node 20.19 or later is needed.',
});

export * from './api.js';
