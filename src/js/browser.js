// Browser entry: fetch and instantiate the .wasm next to this file, then export the API.
import init from './pi_agent_wasm.js';

await init({ module_or_path: new URL('./pi_agent_wasm_bg.wasm', import.meta.url) });

export * from './api.js';
