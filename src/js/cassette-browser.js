// `pi-agent-wasm/cassette` in a page: the .wasm from the lazily loaded chunk, then record, replay and fork.
import './browser.js';

export { Recorder, ReplayDivergence, CASSETTE_VERSION, readCassette, replay, fork, checkpointAt, forkSnapshot, summarize } from './cassette.js';
