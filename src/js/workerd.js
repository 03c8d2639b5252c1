// Cloudflare Workers entry: bundlers (wrangler, Miniflare) turn a .wasm import into a
// compiled WebAssembly.Module, which instantiates synchronously without fetch.
import wasmModule from './pi_agent_wasm_bg.wasm';
import { initSync } from './pi_agent_wasm.js';

initSync({ module: wasmModule });

export * from './api.js';
