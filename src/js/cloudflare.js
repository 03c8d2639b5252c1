// `pi-agent-wasm/cloudflare` in workerd: the .wasm as wrangler bundles it, then the sessions.
import './workerd.js';

export { AgentSession, routeSessions, handleStreamProxy } from './sessions.js';
export { connectSession } from './connect.js';
