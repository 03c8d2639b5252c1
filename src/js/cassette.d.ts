// Record, replay and fork of whole runs. Not in pi.

/**
 * Record, replay and fork of whole runs. Not in pi.
 *
 * A `Recorder` given to an `Agent` (`record`) or to the loop functions (`config.record`)
 * writes a cassette: JSON lines, versioned and append-only, holding every input the runs did
 * not decide themselves (responses, tool results and updates, queue polls, the clock, an
 * abort) and the loop's position at each event. `replay` runs it again offline with the same
 * events; `fork` continues it from any event with one change. See docs/record-replay.md.
 *
 * @module pi-agent-wasm/cassette
 */
import type { Agent, AgentEvent, AgentMessage, AgentOptions, AgentLoopConfig, AgentContext, AgentSnapshot, CheckpointPosition, LoopCheckpoint, Model, RunRecorder, StreamFn, ToolResultMessage } from "./index.js";

/** The version of the cassette format this package writes and reads. */
export const CASSETTE_VERSION: 1;

/** What a cassette may be given as: its text, its lines, or the recorder that wrote it. */
export type Cassette = string | readonly string[] | Recorder;

/** Records runs into a cassette. API keys the runs used are written as `[redacted]`. */
export class Recorder implements RunRecorder {
  /**
   * `onLine(line)` is called with each line as it is written (to append it to storage).
   * `append` (the cassette's kind) goes on with a cassette another process began: no header
   * is written (see "Surviving a restart" in docs/record-replay.md).
   */
  constructor(options?: { onLine?: (line: string) => void; append?: "agent" | "loop" });
  /** The cassette's lines so far. */
  readonly lines: string[];
  /** The cassette as text: one JSON value a line, each ending in a newline. */
  toString(): string;
  /** Keeps `value` (a secret of 12 characters or more) out of every line written from now on. */
  secret(value: string): void;
  /** What `onLine` threw or rejected with, each as its message (the recording went on). */
  readonly failures: string[];
  /** Called by the loop at the start of each run. */
  begin(run: unknown): unknown;
}

/** The error a replay stops with where the run asked for something the cassette does not hold. */
export class ReplayDivergence extends Error {
  /** Made by `replay`; not meant to be constructed by users. */
  constructor(index: number, what: string, recorded: unknown, asked: unknown);
  /** `"ReplayDivergence"`. */
  readonly name: "ReplayDivergence";
  /** `"replay_divergence"` (docs/errors.md). */
  readonly code: "replay_divergence";
  /** The index of the event the run had reached (events counted from 0, updates included). */
  readonly index: number;
  /** What was asked for: `request 3`, `tool call call_1 (read)`, `a steering poll`, … */
  readonly what: string;
  /** What the cassette held there. */
  readonly recorded: unknown;
  /** What the run asked for. */
  readonly asked: unknown;
  /** The events the replay delivered before it stopped. */
  readonly events?: AgentEvent[];
}

/** Options of {@link replay}: the `Agent`'s options for a cassette an `Agent` recorded, or
 * `context` and `config` for one the loop functions recorded. */
export interface ReplayOptions extends Omit<AgentOptions, "record" | "restore"> {
  /** What a miss does: `"error"` (the default) stops with a {@link ReplayDivergence}; `"live"`
   * goes on with the real stream function and tools from there, and keeps recording. */
  onMiss?: "error" | "live";
  /** Called with each event as it is delivered. */
  onEvent?: (event: AgentEvent) => void | Promise<void>;
  /** Called with each line of the replay's own cassette. */
  onLine?: (line: string) => void;
  /** For a loop cassette: the context's tools (and other keys but `messages`). */
  context?: Omit<AgentContext, "messages">;
  /** For a loop cassette: the loop configuration (hooks), without `model` when the cassette's is meant. */
  config?: Partial<AgentLoopConfig>;
}

/** What a replay or a fork gives back. */
export interface ReplayResult {
  /** Every event delivered, in order. */
  events: AgentEvent[];
  /** The messages at the end: the agent's transcript, or the loop functions' new messages. */
  messages: AgentMessage[];
  /** The cassette this replay wrote: the same runs again (and what went live). */
  cassette: Recorder;
  /** The agent that ran (for an `Agent`'s cassette). */
  agent?: Agent;
  /** The cassette ends inside its last run (its process died there, or it was cut): the
   * replay delivered what that run delivered, up to there. */
  cut?: true;
}

/** Replays a cassette offline: the same events, timestamps included. Hooks and listeners run
 * again as code; no request is made and no tool runs (unless `onMiss: "live"`). */
export function replay(cassette: Cassette, options?: ReplayOptions): Promise<ReplayResult>;

/** A change a fork continues with. */
export type ForkChange =
  | { model: Model<any> }
  | { message: { index: number; with: AgentMessage } }
  | { toolResult: { toolCallId: string } & Partial<Pick<ToolResultMessage, "content" | "details" | "isError">> }
  | { steer: AgentMessage };

/** Continues a cassette from event `at` with `change`: a new `Agent` restored to the position the
 * cassette holds there, resumed live, recording into a new cassette. Nothing before `at` runs
 * again; a tool that was running at `at` runs (unless `onInterruptedToolCall` decides). */
export function fork(
  cassette: Cassette,
  at: { at: number; change?: ForkChange },
  options?: Omit<AgentOptions, "record" | "restore"> & { onEvent?: (event: AgentEvent) => void | Promise<void>; onLine?: (line: string) => void },
): Promise<ReplayResult & { agent: Agent }>;

/** The `Agent` snapshot `fork` starts from: the checkpoint at event `at` with `change` applied,
 * for `new Agent({ ...options, restore })` and `resume()` (or `continue()` for a steering
 * message added after the run ended). `options` gives the model with its headers and the
 * queue modes. */
export function forkSnapshot(
  cassette: Cassette,
  at: number,
  change?: ForkChange,
  options?: Pick<AgentOptions, "initialState" | "steeringMode" | "followUpMode">,
): AgentSnapshot;

/** The checkpoint a cassette holds at event `at` (its last event boundary at or before it), for
 * `runAgentLoopResume` (when `position` is there) or an `Agent`'s `restore`. */
export function checkpointAt(cassette: Cassette, at: number): Omit<LoopCheckpoint, "position"> & {
  /** Where the run stood; `undefined` once it had ended. */
  position?: CheckpointPosition;
  /** The run it belongs to (0 for the first). */
  run: number;
  /** The event the checkpoint was written after (counted across the cassette's runs). */
  event?: number;
};

/** What a cassette holds, to assert on in a test without replaying it. */
export interface CassetteSummary {
  /** Who recorded it: an `Agent` or the loop functions. */
  kind: "agent" | "loop";
  /** How each run started. */
  runs: Array<"prompt" | "continue" | "resume">;
  /** Each request: its model, and the names of the tools in its `context.tools` (an `Agent`
   * declares its tools in the system message instead). */
  requests: Array<{ model?: { provider: string; id: string; api: string }; tools?: string[] }>;
  /** Each tool call, with its result or the message of what it threw. */
  toolCalls: Array<{ id: string; name: string; args?: unknown; result?: unknown; error?: string }>;
  /** Each queue poll that returned messages. */
  polls: Array<{ queue: "steering" | "followUp"; messages: AgentMessage[] }>;
  /** Whether a run was aborted. */
  aborted: boolean;
  /** The transcript at the end of the last run. */
  messages: AgentMessage[];
}

/** What a cassette holds: its runs, requests, tool calls, polls and final transcript. */
export function summarize(cassette: Cassette): CassetteSummary;

/** A cassette read into its runs (what replay works from). */
export function readCassette(cassette: Cassette): { kind: "agent" | "loop"; runs: unknown[] };

export type { StreamFn };
