// `pi-agent-wasm/cassette` in Node: the .wasm from the package's files, then record, replay and fork.
import './node.js';

export { Recorder, ReplayDivergence, CASSETTE_VERSION, readCassette, replay, fork, checkpointAt, forkSnapshot, summarize } from './cassette.js';
