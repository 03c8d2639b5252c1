// Cloudflare Workers entry: wrangler (and Miniflare) turn a .wasm import into a compiled
// WebAssembly.Module, which instantiates synchronously without fetch. Workers forbid
// compiling WebAssembly from bytes at run time, so this is the only way in.
import wasmModule from './pi_agent_wasm_bg.wasm';
import { useSource } from './wasm.js';

function compiled() {
  if (wasmModule instanceof WebAssembly.Module) return wasmModule;
  throw new Error(`the .wasm import gave ${Object.prototype.toString.call(wasmModule)}, not a WebAssembly.Module`);
}

useSource({
  sync: compiled,
  load: async () => compiled(),
  hint:
    "Bundle the Worker with wrangler (it imports .wasm files as compiled modules); with another bundler, add a rule that imports '*.wasm' as a compiled WebAssembly module.",
});

export * from './api.js';
