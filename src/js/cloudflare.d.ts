// Agent sessions on Cloudflare Durable Objects. Not in pi.

/**
 * Agent sessions on Cloudflare Durable Objects, and the server side of `streamProxy`, for
 * Workers. Not in pi.
 *
 * Each session is an `Agent` in its own Durable Object: the key stays in the Worker's
 * secrets, the conversation outlives any request, clients follow it as Server-Sent Events,
 * and a run cut off by an eviction or a deploy resumes from its last checkpoint.
 *
 * @module pi-agent-wasm/cloudflare
 */
import type { AgentOptions, AgentEvent, Model, ClientToolResult, ToolExecutionWaitingEvent } from "./index.js";

/** The parts of a Durable Object's state (`ctx`) a session uses: its storage. */
export interface SessionObjectState {
  /** The Durable Object's transactional storage, as far as a session uses it. */
  storage: {
    /** The value stored under `key`. */
    get<T = unknown>(key: string): Promise<T | undefined>;
    /** Stores the entries, in one batch. */
    put(entries: Record<string, unknown>): Promise<void>;
    /** Deletes the keys; resolves with how many existed. */
    delete(keys: string[]): Promise<number>;
    /** Deletes everything. */
    deleteAll(): Promise<void>;
    /** The entries in key order, optionally under a prefix and from a start key. */
    list<T = unknown>(options?: { prefix?: string; start?: string }): Promise<Map<string, T>>;
    /** Sets the object's alarm. */
    setAlarm(time: number | Date): Promise<void>;
    /** Cancels the object's alarm. */
    deleteAlarm(): Promise<void>;
  };
}

/** A Durable Object namespace, as the Worker's binding gives it. */
export interface SessionNamespace {
  /** The id of the object named `name`. */
  idFromName(name: string): unknown;
  /** The stub of the object with that id, to send it requests. */
  get(id: any): {
    /** Sends the object a request. */
    fetch(request: Request): Promise<Response>;
  };
}

/**
 * The Durable Object of one agent session. Subclass it, implement `agentOptions(env)`, and
 * export the subclass from the Worker (bound in wrangler.toml as a Durable Object class).
 *
 * HTTP API (through {@link routeSessions}): `POST /sessions/:id/prompt` `{ "text" }` (202;
 * 409 while a run is in progress), `POST .../steer`, `POST .../follow-up`, `POST .../abort`,
 * `GET .../events` (Server-Sent Events with ids, resumable with Last-Event-ID or `?after=`),
 * `GET /sessions/:id` (messages, running, queued messages, `pending` tool calls),
 * `DELETE /sessions/:id`; waiting tool calls' answers `POST .../tool-calls/:callId/approve`,
 * `/reject`, `/result`; the handoff between page and Worker `GET .../snapshot`,
 * `POST .../export` (the page takes the run) and `POST .../import` (the Worker takes it);
 * with `record: true` in the options, `GET .../cassette` (the session's cassette, NDJSON) and
 * `POST .../fork` `{ "at", "change"? }` (201 `{ "id" }`: a new session continues from event
 * `at`; see docs/record-replay.md). Errors are JSON `{ error, detail? }` with a 4xx status.
 */
export declare class AgentSession<Env = unknown> {
  /** Called by the Workers runtime with the object's state and the Worker's environment. */
  constructor(ctx: SessionObjectState, env: Env);
  /** The Worker's environment (bindings and secrets). */
  readonly env: Env;
  /**
   * The session's `Agent` options: tools, model, hooks, `getApiKey` (from the Worker's
   * secrets). Implement it in the subclass: code, so it is supplied each time the session
   * is loaded. An `onCheckpoint` here is called after the session saved. `record: true`
   * records every run into the session's cassette, stored with its steps.
   */
  agentOptions(env: Env): Omit<AgentOptions, "record"> & { record?: boolean | AgentOptions["record"] };
  /**
   * The model as a page sees it in a snapshot (`GET .../snapshot`, `POST .../export`): by
   * default without `headers`, which may hold a gateway's token. Override to drop more (a
   * private `baseUrl`) or to give pages a model of their own.
   */
  pageModel(model: Model<any>): Model<any>;
  /** Answers a session request (`/sessions/:id[/action]`), as forwarded by {@link routeSessions}. */
  fetch(request: Request): Promise<Response>;
  /** The watchdog alarm: resumes a run this instance does not hold (after an eviction or restart). */
  alarm(): Promise<void>;
}

/**
 * Sends `/sessions/:id[/action]` requests to the session's Durable Object (one per id); other
 * paths resolve to `undefined`.
 *
 * With `token`, a request must carry `Authorization: Bearer <token>` (or `?token=`), else it
 * gets 401. With `cors` (an origin, or "*"), pages of that origin may call the API from a
 * browser.
 *
 * @param request - The Worker's request.
 * @param namespace - The Durable Object binding of the {@link AgentSession} subclass.
 * @param options - How requests are accepted.
 * @param options.token - The bearer token requests must carry, compared in constant time.
 * @param options.authorize - Decides who may do what to which session: `true` allows, anything
 *   else (or a throw) answers 403. With neither `token` nor `authorize`, only requests to
 *   localhost are answered (401 otherwise).
 * @param options.env - What `authorize` gets as `env` (the Worker's bindings).
 * @param options.prefix - The path prefix of the routes (default `/sessions`).
 * @param options.cors - The origin whose pages may call the API from a browser, or `"*"`.
 */
export declare function routeSessions(
  request: Request,
  namespace: SessionNamespace,
  options?: {
    token?: string;
    authorize?: (request: Request, env: any, session: { sessionId: string; action: SessionAction }) => boolean | Promise<boolean>;
    env?: any;
    prefix?: string;
    cors?: string;
  },
): Promise<Response | undefined>;

/** What a request does to a session, as `authorize` is told (`create` is `POST` of the
 * prefix, which answers a new, unguessable session id). */
export type SessionAction = "create" | "read" | "snapshot" | "prompt" | "steer" | "follow-up" | "abort" | "delete" | "import" | "export" | "approve" | "reject" | "result";

/**
 * The server side of pi's `streamProxy` (`POST /api/stream` by default): a browser agent
 * streams through the Worker, and the key never reaches the page.
 *
 * The client's `authToken` must equal `token`; the client names a model by `provider` and `id`,
 * and the server's own object from `models` is used (never the client's `baseUrl` or headers).
 * Other paths resolve to `undefined`. Errors: 401 bad token, 403 model not allowed, 400
 * malformed, 405 not a POST, 413 too large.
 *
 * @param request - The Worker's request.
 * @param options - The token, the models and their keys.
 * @param options.token - What the client's `authToken` must equal (required).
 * @param options.models - The server's models that clients may name, by `provider` and `id`.
 * @param options.getApiKey - The API key for a request of the model.
 * @param options.path - The path it answers (default `/api/stream`).
 */
export declare function handleStreamProxy(
  request: Request,
  options: {
    token: string;
    models: Model<any>[];
    getApiKey?: (model: Model<any>) => string | undefined | Promise<string | undefined>;
    path?: string;
  },
): Promise<Response | undefined>;

/** A tool a page runs for a session: the Worker declares it `client: true`, by its schema. */
export interface SessionClientTool {
  /** The tool's name, as the Worker's tool. */
  name: string;
  /** Runs the call in the page; a throw becomes the call's error result. */
  execute(toolCallId: string, params: any, signal?: AbortSignal): Promise<ClientToolResult> | ClientToolResult;
}

/** What {@link connectSession} takes. */
export interface ConnectSessionOptions {
  /** The client tools this page runs (tools with more members, such as pi's `AgentTool`, fit). */
  tools: SessionClientTool[];
  /** Sent as `Authorization: Bearer <token>` (in place of an `Authorization` in `headers`). */
  token?: string;
  /** More request headers (for an `authorize` that reads its own). */
  headers?: Record<string, string>;
  /** The fetch to use (default: the global one). */
  fetch?: (input: string, init?: RequestInit) => Promise<Response>;
  /** Each event of the session, as its events stream gives it. */
  onEvent?: (event: AgentEvent | ToolExecutionWaitingEvent) => void;
  /** A failure while following the session (it goes on, except after a 401 or 403). */
  onError?: (error: unknown) => void;
  /** How long to wait before reconnecting, in ms: 10 or more (default 1000). */
  retryMs?: number;
}

/** A page attached to a session. */
export interface SessionConnection {
  /** Resolves once the page follows the session's events (or is closed); rejects when the
   * session refuses the page (401, 403). */
  readonly ready: Promise<void>;
  /** Detaches the page: no more calls are taken, and a call running here is aborted. */
  close(): void;
  /** The id of the last event seen. */
  readonly lastEventId: string | undefined;
}

/**
 * Attaches a page to the session at `url` (`https://…/sessions/:id`): runs each waiting call
 * of a tool in `options.tools` (the Worker's `client: true` tools) once, and answers it with
 * its result. Calls that waited before the page attached are taken too; the session waits
 * while no page is attached. Reconnects after a lost connection. Importable in a page: this
 * entry point loads no engine there.
 *
 * @param url - The session's URL.
 * @param options - The tools, and how to reach the session.
 */
export declare function connectSession(url: string | URL, options: ConnectSessionOptions): SessionConnection;
