// `pi-agent-wasm/cloudflare` in Node (tests with a stand-in storage, local tools): the .wasm
// from the package's files, then the sessions.
import './node.js';

export { AgentSession, routeSessions, handleStreamProxy } from './sessions.js';
export { connectSession } from './connect.js';
