// `pi-agent-wasm/cloudflare` in a page: the client side of a session only (no engine, no
// .wasm): a page that runs a session's client tools.
export { connectSession } from './connect.js';
