// Node entry: Node 20's fetch cannot read file: URLs, so read the bytes and instantiate synchronously.
import { readFileSync } from 'node:fs';
import { initSync } from './pi_agent_wasm.js';

initSync({ module: readFileSync(new URL('./pi_agent_wasm_bg.wasm', import.meta.url)) });

export * from './api.js';
