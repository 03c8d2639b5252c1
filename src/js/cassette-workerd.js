// `pi-agent-wasm/cassette` in workerd: the .wasm as wrangler bundles it, then record, replay and fork.
import './workerd.js';

export { Recorder, ReplayDivergence, CASSETTE_VERSION, readCassette, replay, fork, checkpointAt, forkSnapshot, summarize } from './cassette.js';
