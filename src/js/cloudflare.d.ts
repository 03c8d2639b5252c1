// Agent sessions on Cloudflare Durable Objects. Not in pi.
import type { AgentOptions, Model } from "./index.js";

/** The parts of a Durable Object's state a session uses. */
export interface SessionObjectState {
  storage: {
    get<T = unknown>(key: string): Promise<T | undefined>;
    put(entries: Record<string, unknown>): Promise<void>;
    delete(keys: string[]): Promise<number>;
    deleteAll(): Promise<void>;
    list<T = unknown>(options?: { prefix?: string; start?: string }): Promise<Map<string, T>>;
    setAlarm(time: number | Date): Promise<void>;
    deleteAlarm(): Promise<void>;
  };
}

/** A Durable Object namespace, as the Worker's binding gives it. */
export interface SessionNamespace {
  idFromName(name: string): unknown;
  get(id: any): { fetch(request: Request): Promise<Response> };
}

/**
 * The Durable Object of one agent session. Subclass it, implement `agentOptions(env)`, and
 * export the subclass from the Worker (bound in wrangler.toml as a Durable Object class).
 *
 * HTTP API (through {@link routeSessions}): `POST /sessions/:id/prompt` `{ "text" }` (202;
 * 409 while a run is in progress), `POST .../steer`, `POST .../follow-up`, `POST .../abort`,
 * `GET .../events` (Server-Sent Events with ids, resumable with Last-Event-ID or `?after=`),
 * `GET /sessions/:id` (messages, running, queued messages), `DELETE /sessions/:id`. Errors are
 * JSON `{ error, detail? }` with a 4xx status.
 */
export declare class AgentSession<Env = unknown> {
  constructor(ctx: SessionObjectState, env: Env);
  readonly env: Env;
  /** The session's `Agent` options: tools, model, hooks, `getApiKey` (from the Worker's secrets). */
  agentOptions(env: Env): AgentOptions;
  fetch(request: Request): Promise<Response>;
  alarm(): Promise<void>;
}

/**
 * Sends `/sessions/:id[/action]` requests to the session's Durable Object (one per id); other
 * paths resolve to `undefined`. With `token`, a request must carry `Authorization: Bearer
 * <token>` (or `?token=`), else it gets 401. With `cors` (an origin, or "*"), pages of that
 * origin may call the API from a browser.
 */
export declare function routeSessions(
  request: Request,
  namespace: SessionNamespace,
  options?: { token?: string; prefix?: string; cors?: string },
): Promise<Response | undefined>;

/**
 * The server side of pi's `streamProxy` (`POST /api/stream` by default): a browser agent
 * streams through the Worker and the key never reaches the page. The client's `authToken`
 * must equal `token`; the client names a model by `provider` and `id`, and the server's own
 * object from `models` is used (never the client's `baseUrl` or headers). Other paths resolve
 * to `undefined`. Errors: 401 bad token, 403 model not allowed, 400 malformed, 413 too large.
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
