// Agent sessions on Cloudflare Durable Objects (`pi-agent-wasm/cloudflare`; the entry shims
// cloudflare.js and cloudflare-node.js load the .wasm for their runtime): one Durable
// Object per session holds an `Agent`, saves its snapshot and every event to its storage at
// each step, streams events to any number of clients as Server-Sent Events (resumable with
// Last-Event-ID), and finishes a run that an eviction or a restart cut off (an alarm resumes
// it from the last snapshot). Keys stay in the Worker's secrets: the page never sees them.
//
// Storage of one session (Durable Object storage, key -> value):
//   meta                the snapshot without its messages, the message count and the last event id
//   m:<index>:<part>    each transcript message as JSON text, split in parts under the value limit
//   e:<id>:<part>       each event but streamed updates, as JSON text, split likewise
//   c:<line>:<part>     with `record: true`, each line of the session's cassette, split likewise
//   cassette            the number of cassette lines stored
// Event ids count the stored events: 1, 2, 3, ... Streamed updates (`message_update`,
// `tool_execution_update`) are not stored: the k-th update after event n has the id "n.k", so
// they go to live clients and to clients that reconnect while this instance lives, and no id
// is ever given twice, not even after a restart.
import { Agent, streamSimple } from './api.js';
import { Recorder } from './tape.js';
import { forkSnapshot } from './cassette.js';

/** Characters per stored part: far below the 128 KiB value limit in any encoding. */
const PART = 30000;
/** The largest request body a session accepts. */
const MAX_BODY = 256 * 1024;
/** The furthest a session sets its alarm ahead: an alarm takes no date past 2189. */
const TEN_YEARS = 10 * 365 * 24 * 3600 * 1000;
/** How often a running session re-arms its alarm: an evicted run resumes within this. */
const WATCHDOG_MS = 10000;
const UPDATES = new Set(['message_update', 'tool_execution_update']);
/** Updates kept in memory for reconnecting clients. */
const RECENT = 5000;
const pad = (n, width = 10) => String(n).padStart(width, '0');

function json(status, body, headers = {}) {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

const problem = (status, error, detail, headers) => json(status, detail === undefined ? { error } : { error, detail }, headers);

/** Writes `text` under `prefix` in parts; returns the number of parts. */
function parts(prefix, text) {
  const out = {};
  for (let i = 0, k = 0; i < text.length || k === 0; i += PART, k++) out[`${prefix}:${pad(k, 4)}`] = text.slice(i, i + PART);
  return out;
}

/** Reads back what `parts` wrote under each `prefix`, in key order: [prefix, text][]. */
async function readParts(storage, prefix) {
  const map = await storage.list({ prefix });
  const texts = new Map();
  for (const [key, value] of map) {
    const head = key.slice(0, key.lastIndexOf(':'));
    texts.set(head, (texts.get(head) ?? '') + value);
  }
  return [...texts];
}

/** A user message from an HTTP body `{ text }` (or a whole message object). */
/** A user message from an HTTP body: `{ text }`, or `{ message }` with role "user" and text
 * or image content. Other roles are refused: a client may not write the model's turns or tool
 * results into the transcript. */
function userMessage(body) {
  if (body && typeof body.text === 'string') return { role: 'user', content: [{ type: 'text', text: body.text }], timestamp: Date.now() };
  const m = body?.message;
  if (!m || typeof m !== 'object' || m.role !== 'user') return undefined;
  const part = (p) => (p?.type === 'text' && typeof p.text === 'string')
    || (p?.type === 'image' && typeof p.data === 'string' && typeof p.mimeType === 'string');
  if (typeof m.content !== 'string' && !(Array.isArray(m.content) && m.content.every(part))) return undefined;
  return { role: 'user', content: m.content, timestamp: Date.now() };
}

/** A body up to four times over `limit` is read to its end before the 413 (a client still
 * sending would otherwise see its upload cut instead of the answer); a larger one is cut. */
async function readBody(request, limit = MAX_BODY) {
  const tooLarge = () => ({ error: problem(413, 'body too large', `at most ${limit} bytes`) });
  const reader = request.body?.getReader();
  const chunks = [];
  let size = 0;
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > 4 * limit) {
        await reader.cancel();
        return tooLarge();
      }
      if (size <= limit) chunks.push(value);
    }
  }
  if (size > limit) return tooLarge();
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  const text = new TextDecoder().decode(bytes);
  try {
    return { body: text === '' ? {} : JSON.parse(text) };
  } catch (error) {
    return { error: problem(400, 'malformed body', `not JSON: ${error.message}`) };
  }
}

/** An update as it goes to clients: without the partial message, which each one would
 * repeat whole (the `message_end` that follows carries the message). */
function compact(event) {
  if (event.type !== 'message_update') return event;
  const { partial, ...rest } = event.assistantMessageEvent ?? {};
  return { type: event.type, assistantMessageEvent: rest };
}

/** Update ids of one instance start at `epoch * UPDATE_EPOCH` after each stored event, so a
 * restarted session never gives an update id it gave before. */
const UPDATE_EPOCH = 1e6;
/** The largest snapshot `POST /sessions/:id/import` takes. */
const MAX_IMPORT = 8 * 1024 * 1024;
/** `POST /sessions/:id/tool-calls/:callId/<answer>`: the answers of a waiting tool call. */
const ANSWERS = new Set(['approve', 'reject', 'result']);
/** The actions ({@link actionOf}) whose request carries a body. */
const BODIES = new Set(['prompt', 'steer', 'follow-up', 'import', ...ANSWERS]);

/** A waiting tool call as `GET /sessions/:id` lists it. */
const pendingCall = (c) => ({
  id: c.toolCallId, tool: c.toolName, arguments: c.args, kind: c.kind,
  ...(c.reason === undefined ? {} : { reason: c.reason }),
  ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }),
});

/** An event id ("n" or "n.k") as [n, k]; [0, 0] for none or garbage. */
function parseId(text) {
  const m = /^(\d{1,15})(?:\.(\d{1,15}))?$/.exec(text?.trim() ?? '');
  return m ? [Number(m[1]), Number(m[2] ?? 0)] : [0, 0];
}

const after = (a, b) => a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);

/**
 * The Durable Object of one agent session. Subclass it, implement `agentOptions(env)` (the
 * tools, model, hooks and key of the session's `Agent`: code, so supplied at each start), and
 * export the subclass from your Worker. Requests reach it through {@link routeSessions}.
 */
export class AgentSession {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.storage = ctx.storage;
    /** The session's agent once loaded; `undefined` before the first request. */
    this.agent = undefined;
    this.loading = undefined;
    this.lastEventId = 0;
    this.epoch = 0;
    this.updates = 0;
    /** Recent updates of this instance: [[n, k], type, JSON text]. */
    this.recent = [];
    this.clients = new Set();
    /** Transcript messages as stored: index -> the object written there. */
    this.stored = [];
    this.exists = false;
    this.runDone = undefined;
    /** A deletion in progress: requests wait for it to end. */
    this.deleting = undefined;
    this.chain = Promise.resolve();
    /** Milliseconds: a run cut off by an eviction or restart resumes within this. */
    this.watchdogMs = WATCHDOG_MS;
  }

  /** The `Agent` options of this session (override): tools, model, hooks, `getApiKey`. */
  // eslint-disable-next-line class-methods-use-this, no-unused-vars
  agentOptions(env) {
    throw new Error('AgentSession: implement agentOptions(env) in your subclass');
  }

  /** Loads the session from storage once (restoring a run that was cut off). */
  load() {
    this.loading ??= (async () => {
      const meta = await this.storage.get('meta');
      const own = this.agentOptions(this.env) ?? {};
      // Event ids go on from where they were, across restarts and deletions; each start of an
      // instance is a new epoch for update ids.
      const ids = (await this.storage.get('ids')) ?? { lastEventId: meta?.lastEventId ?? 0, epoch: 0 };
      this.lastEventId = ids.lastEventId;
      // (A session that does not exist yet writes nothing: probing ids stores no data.)
      this.epoch = meta === undefined ? ids.epoch : ids.epoch + 1;
      this.updates = this.epoch * UPDATE_EPOCH;
      if (meta !== undefined) {
        await this.storage.put('ids', { lastEventId: this.lastEventId, epoch: this.epoch });
        // A write too large for one batch that a restart cut short leaves parts beyond what
        // `meta` counts: they are not part of the session.
        await this.#drop('e:', `e:${pad(this.lastEventId + 1)}`);
        await this.#drop('m:', `m:${pad(meta.messageCount)}`);
      }
      this.options = own;
      // `record: true`: every run of the session goes into its cassette, line by line, in the
      // same order as its other writes; a restart records on after the last stored line.
      if (own.record === true) {
        const lines = (await this.storage.get('cassette')) ?? 0;
        await this.#drop('c:', `c:${pad(lines)}`);
        this.cassetteLines = lines;
        this.pendingLines = [];
        this.recorder = new Recorder({ append: lines > 0 ? 'agent' : undefined, onLine: (line) => this.#cassetteLine(line) });
      }
      if (meta === undefined) {
        this.agent = this.#agent(undefined);
      } else {
        const messages = (await readParts(this.storage, 'm:')).map(([, text]) => JSON.parse(text));
        this.exists = true;
        this.snapshot = { ...meta.snapshot, messages };
        this.agent = this.#agent(this.snapshot);
        this.stored = this.agent.state.messages.slice();
      }
      if (meta?.snapshot?.position !== undefined) this.#start(() => this.#resume());
    })();
    return this.loading;
  }

  /** A new `Agent` of this session (restored from `restore`, unless undefined). Each step is
   * saved before the run goes on: after every event, and before each tool runs (so a call cut
   * off there is known to have maybe run). Only the session's current agent is heard: one
   * that the session let go of (an export) saves and sends nothing more. */
  #agent(restore) {
    // `record` is the session's: true records into its storage, false or absent does not.
    const { record, ...own } = this.options;
    const agent = new Agent({
      ...own,
      ...(record === true ? { record: this.recorder } : record === false || record === undefined ? {} : { record }),
      ...(restore === undefined ? {} : { restore }),
      onCheckpoint: async (snapshot, event) => {
        if (this.agent !== agent) return;
        await this.#checkpoint(snapshot, event);
        await own.onCheckpoint?.(snapshot, event);
      },
    });
    agent.subscribe((event) => {
      if (this.agent === agent) this.#live(event);
    });
    return agent;
  }

  /** A model as a page may see it (`GET …/snapshot`, `POST …/export`): by default without
   * `headers`, which may hold a gateway's token. Override to drop more (a private `baseUrl`)
   * or to give the page a model of its own. */
  // eslint-disable-next-line class-methods-use-this
  pageModel(model) {
    if (model === null || typeof model !== 'object') return model;
    const { headers, ...rest } = model;
    return rest;
  }

  /** The session's snapshot with its model (and its run's) as a page may see it. */
  #pageSnapshot(snapshot) {
    const out = { ...snapshot };
    if (snapshot.model !== undefined) out.model = this.pageModel(snapshot.model);
    if (snapshot.position != null && typeof snapshot.position === 'object') out.position = { ...snapshot.position, model: this.pageModel(snapshot.position.model) };
    return out;
  }

  /** `POST /sessions/:id/export`: the session hands its run to the caller (a page that
   * continues it): the snapshot, and the session's own run stops where it is, as if cut off
   * there, recording nothing more. The session keeps the transcript up to there, with no run. */
  async #export() {
    const agent = this.agent;
    const snapshot = agent.snapshot();
    this.#withoutRun(snapshot);
    agent.abort();
    await this.runDone;
    await this.#save();
    return json(200, this.#pageSnapshot(snapshot));
  }

  /** Finishes the run the stored snapshot was taken in. Should its position not fit (a
   * store written by another version), the run is dropped and the session goes on from its
   * transcript, rather than refusing every prompt from then on. */
  async #resume() {
    try {
      await this.agent.resume();
    } catch (error) {
      if (error?.code !== 'invalid_input') throw error;
      console.error('pi-agent-wasm session: the saved run cannot be resumed, so it is dropped:', error.message);
      this.#withoutRun(this.snapshot);
    }
  }

  /** The session goes on from `snapshot`'s transcript, without its run (or waiting calls). */
  #withoutRun(snapshot) {
    const { position, waiting, ...rest } = snapshot;
    this.snapshot = rest;
    this.agent = this.#agent(rest);
  }

  /** A streamed update: to live clients (and kept a while for reconnects), not stored. */
  #live(event) {
    if (!UPDATES.has(event.type)) return;
    const text = JSON.stringify(compact(event));
    const id = [this.lastEventId, ++this.updates];
    this.recent.push([id, event.type, text]);
    if (this.recent.length > RECENT) this.recent.splice(0, this.recent.length - RECENT);
    for (const client of this.clients) client(id, event.type, text);
  }

  /** A step of the run: the snapshot, with the event (and its id) when there is one, saved in
   * one batch before the run goes on; only then do clients see the event, so an id a client
   * saw is never given again. */
  #checkpoint(snapshot, event) {
    if (event === undefined) return this.#serial(() => this.#write(snapshot));
    const text = JSON.stringify(event);
    return this.#serial(async () => {
      const id = [this.lastEventId + 1, 0];
      await this.#write(snapshot, parts(`e:${pad(id[0])}`, text), id[0]);
      // A run whose every running tool call waits for an answer holds no watchdog: it goes
      // on when the answer arrives (a request, which loads the session if it was evicted),
      // or when the first of those waits expires (the alarm wakes the session then).
      if (event.type === 'tool_execution_waiting' && this.#allWaiting()) await this.#alarmAtExpiry();
      this.lastEventId = id[0];
      this.updates = this.epoch * UPDATE_EPOCH;
      for (const client of this.clients) client(id, event.type, text);
    });
  }

  /** A cassette line: kept until the next write of the session, which stores it in the same
   * batch as the step it belongs to (a restart resumes from that step, and the cassette from
   * that line). */
  #cassetteLine(line) {
    this.pendingLines.push([this.cassetteLines++, line]);
  }

  /** The entries of the cassette lines not stored yet; `count` is the line count with them. */
  #takeLines() {
    const entries = {};
    if (this.recorder === undefined) return { entries, count: undefined };
    for (const [n, line] of this.pendingLines) Object.assign(entries, parts(`c:${pad(n)}`, line));
    this.pendingLines = [];
    return { entries, count: this.cassetteLines };
  }

  /** Stores the cassette lines not stored yet (before they are read), the count last. */
  async #storeLines() {
    const { entries, count } = this.#takeLines();
    await this.#putAll(entries);
    if (count !== undefined) await this.storage.put('cassette', count);
  }

  /** Puts `entries`, in their order, 128 at a time (put() takes at most 128). */
  async #putAll(entries) {
    const all = Object.entries(entries);
    for (let i = 0; i < all.length; i += 128) await this.storage.put(Object.fromEntries(all.slice(i, i + 128)));
  }

  /** `GET /sessions/:id/cassette`: the cassette's lines, read from storage a batch at a time
   * (404 when the session does not record). */
  #cassette() {
    if (this.recorder === undefined) return problem(404, 'no cassette', 'this session does not record: return record: true from agentOptions()');
    const storage = this.storage;
    let start = 'c:';
    let line = '';
    let head;
    let done = false;
    const stream = new ReadableStream({
      async pull(controller) {
        if (done) return controller.close();
        const batch = await storage.list({ prefix: 'c:', start, limit: 128 });
        let out = '';
        for (const [key, value] of batch) {
          const at = key.slice(0, key.lastIndexOf(':'));
          if (head !== undefined && at !== head) {
            out += `${line}\n`;
            line = '';
          }
          head = at;
          line += value;
          start = `${key}\u0000`;
        }
        if (batch.size < 128) {
          done = true;
          if (head !== undefined) out += `${line}\n`;
        }
        controller.enqueue(new TextEncoder().encode(out));
      },
    });
    return new Response(stream, { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
  }

  /** Deletes the keys under `prefix` from `start` on (delete() takes at most 128 at a time). */
  async #drop(prefix, start) {
    const keys = [...(await this.storage.list({ prefix, start })).keys()];
    for (let i = 0; i < keys.length; i += 128) await this.storage.delete(keys.slice(i, i + 128));
  }

  /** Runs storage writes one at a time (parallel tools end, and checkpoint, concurrently). */
  #serial(work) {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => {});
    return next;
  }

  /** The current snapshot, written after the writes already queued. */
  #save() {
    return this.#serial(() => this.#write(this.agent.snapshot()));
  }

  /** Writes `snapshot` (messages that changed since the last write, then the rest), with
   * `extra` entries, in one batch. */
  async #write(snapshot, extra = {}, lastEventId = this.lastEventId) {
    const { messages, ...rest } = snapshot;
    let same = 0;
    while (same < messages.length && same < this.stored.length && messages[same] === this.stored[same]) same++;
    const lines = this.#takeLines();
    const entries = { ...extra, ...lines.entries };
    if (same < this.stored.length) await this.#drop('m:', `m:${pad(same)}`);
    for (let i = same; i < messages.length; i++) Object.assign(entries, parts(`m:${pad(i)}`, JSON.stringify(messages[i])));
    entries.meta = { snapshot: rest, messageCount: messages.length, lastEventId };
    entries.ids = { lastEventId, epoch: this.epoch };
    // Last, with `meta`: lines a write cut short left beyond this count are dropped at load.
    if (lines.count !== undefined) entries.cassette = lines.count;
    await this.#putAll(entries);
    this.stored = messages;
    this.exists = true;
  }

  /** Runs `work` (a prompt or a resumption) in the background; the alarm watches it. */
  #start(work) {
    const run = (async () => {
      try {
        await this.storage.setAlarm(Date.now() + this.watchdogMs);
        await work();
      } finally {
        await this.#save();
        await this.storage.deleteAlarm();
      }
    })();
    const done = run.then(
      () => {},
      (error) => console.error('pi-agent-wasm session run failed:', error),
    );
    this.runDone = done.finally(() => {
      if (this.runDone === tracked) this.runDone = undefined;
    });
    const tracked = this.runDone;
  }

  /** The watchdog: a run that this instance does not hold (it was evicted or restarted)
   * resumes here; one still running re-arms it, unless all it does is wait for answers. */
  async alarm() {
    await this.load();
    if (!this.agent.state.isStreaming) return;
    if (this.#allWaiting()) await this.#alarmAtExpiry();
    else await this.storage.setAlarm(Date.now() + this.watchdogMs);
  }

  /** While every running call waits: the alarm at the first expiry of a wait (not before a
   * second from now, so a wait that has just expired is seen ended), or none. */
  async #alarmAtExpiry() {
    const times = this.agent.waitingToolCalls.map((c) => c.expiresAt).filter((t) => t !== undefined);
    if (times.length === 0) await this.storage.deleteAlarm();
    // (A wait longer than ten years is looked at again then.)
    else await this.storage.setAlarm(Math.min(Math.max(Math.min(...times), Date.now() + 1000), Date.now() + TEN_YEARS));
  }

  /** Whether every tool call the run has running waits for an answer (and one does). */
  #allWaiting() {
    const waiting = new Set(this.agent.waitingToolCalls.map((c) => c.toolCallId));
    return waiting.size > 0 && [...this.agent.state.pendingToolCalls].every((id) => waiting.has(id));
  }

  /** `POST /sessions/:id/import`: a page `Agent`'s snapshot becomes this session, and its run
   * goes on here. The session's own model is kept (a snapshot's model, `baseUrl` included,
   * never reaches the key), and the answers of waiting calls are dropped (they are asked
   * again here); the transcript is taken as it is, so let only its owner import. */
  async #import(body) {
    if (this.agent.state.isStreaming || this.runDone) return problem(409, 'session busy', 'a run is in progress: abort it first');
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return problem(400, 'malformed snapshot', 'expected an Agent snapshot');
    const own = this.options.initialState?.model;
    if (own === undefined) return problem(409, 'no model', 'this session has no model of its own (agentOptions().initialState.model) to import a run with');
    const { model, ...rest } = body;
    const waiting = Array.isArray(rest.waiting) ? rest.waiting.map((c) => (c !== null && typeof c === 'object' ? (({ answer, ...call }) => call)(c) : c)) : rest.waiting;
    const snapshot = waiting === undefined ? rest : { ...rest, waiting };
    // The run's model too (a resumed run requests with the position's): always the session's.
    if (snapshot.position !== null && typeof snapshot.position === 'object') snapshot.position = { ...snapshot.position, model: own };
    let agent;
    try {
      agent = this.#agent(snapshot);
    } catch (e) {
      if (e?.code !== 'invalid_input') throw e;
      return problem(400, 'malformed snapshot', e.message);
    }
    const previous = { agent: this.agent, snapshot: this.snapshot };
    // The last event before the imported run's: a client follows from here.
    const from = this.lastEventId;
    this.agent = agent;
    this.snapshot = snapshot;
    if (agent.snapshot().position !== undefined) {
      // A position the engine cannot resume is refused at the run's first step, before any
      // event or request: the import is then a 400, and the session stays as it was.
      let refused;
      let replied = false;
      const run = agent.resume().catch((error) => {
        if (error?.code !== 'invalid_input' || this.agent !== agent) throw error;
        refused = error;
        if (!replied) return;
        // Refused after the reply (not seen here): the run is dropped, as a stored one is.
        console.error('pi-agent-wasm session: the imported run cannot be resumed, so it is dropped:', error.message);
        this.#withoutRun(snapshot);
      });
      this.#start(() => run);
      await Promise.race([run, new Promise((resolve) => setTimeout(resolve, 0))]);
      replied = true;
      if (refused !== undefined) {
        this.agent = previous.agent;
        this.snapshot = previous.snapshot;
        await this.runDone;
        return problem(400, 'malformed snapshot', refused.message);
      }
    }
    await this.#save();
    return json(202, { imported: true, lastEventId: String(from) });
  }

  /** `POST /sessions/:id/tool-calls/:callId/approve | reject | result`: the first answer
   * wins. The agent's checks decide: an answer of the wrong shape is a 400; a call that is
   * not waiting (answered already, aborted, unknown) or waits for the other kind of answer
   * is a 409. */
  async #answer(body, callId, verb) {
    const agent = this.agent;
    const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : undefined;
    if (fields === undefined && verb !== 'approve') return problem(400, 'malformed body', 'expected a JSON object');
    try {
      if (verb === 'approve') agent.approve(callId);
      else if (verb === 'reject') agent.reject(callId, fields.reason);
      else {
        // Only these fields: a client does not get to set others the loop reads (`terminate`).
        const { content, details = {}, isError } = fields;
        agent.resolveToolCall(callId, isError === undefined ? { content, details } : { content, details, isError });
      }
    } catch (e) {
      if (e?.code !== 'invalid_input') throw e;
      return e.notWaiting ? problem(409, 'not waiting', e.message) : problem(400, 'malformed body', e.message);
    }
    // The run goes on: the watchdog watches it again; the answer is saved before the reply.
    await this.storage.setAlarm(Date.now() + this.watchdogMs);
    await this.#save();
    return json(200, { answered: true, lastEventId: String(this.lastEventId) });
  }

  /** `/sessions/:id[/action]`, forwarded by {@link routeSessions}: the same routes
   * ({@link actionOf}), each request then checked against the session as it is. */
  async fetch(request) {
    const url = new URL(request.url);
    const [, ...segments] = url.pathname.split('/').filter(Boolean);
    const action = actionOf(request.method, segments);
    if (action === 405) return problem(405, 'method not allowed');
    if (typeof action !== 'string' || action === 'create') return problem(404, 'no such route');
    // A body is read whole before the session is looked at: a slow upload never acts on a
    // session that changed meanwhile (deleted, replaced, or a run begun).
    let body;
    if (BODIES.has(action)) {
      const read = await readBody(request, action === 'import' ? MAX_IMPORT : MAX_BODY);
      if (read.error) return read.error;
      body = read.body;
    }
    // A deletion in progress ends first: nothing acts on the session it erases.
    while (this.deleting) await this.deleting;
    await this.load();
    const agent = this.agent;
    // Only these start a session that does not exist yet.
    if (!this.exists && action !== 'prompt' && action !== 'import') return problem(404, 'unknown session');
    switch (action) {
      case 'cassette':
        if (this.recorder !== undefined) await this.#serial(() => this.#storeLines());
        return this.#cassette();
      case 'read':
        return segments[1] === 'events' ? this.#events(request, url) : json(200, this.#state());
      case 'snapshot':
        return json(200, this.#pageSnapshot(agent.snapshot()));
      case 'delete': {
        let deleted;
        this.deleting = new Promise((resolve) => {
          deleted = resolve;
        });
        try {
          await this.#delete(agent);
        } finally {
          this.deleting = undefined;
          deleted();
        }
        return json(200, { deleted: true });
      }
      case 'abort':
        agent.abort();
        // Saved at once: a restart before the run ends resumes into the abort.
        await this.#save();
        await this.runDone;
        return json(200, this.#state());
      case 'import':
        return this.#import(body);
      case 'export':
        return this.#export();
      case 'approve':
      case 'reject':
      case 'result': {
        let id;
        try {
          id = decodeURIComponent(segments[2]);
        } catch {
          return problem(404, 'no such route', 'the tool call id is not a valid URL component');
        }
        return this.#answer(body, id, action);
      }
      default:
        break;
    }
    // prompt, steer, follow-up: a user message.
    const message = userMessage(body);
    if (!message) return problem(400, 'malformed body', 'expected { "text": string } or { "message": a user message with text or image content }');
    if (action === 'prompt') {
      if (agent.state.isStreaming || this.runDone) return problem(409, 'session busy', 'a run is in progress: steer, follow-up or abort');
      this.#start(() => agent.prompt(message));
      return json(202, { accepted: true, lastEventId: String(this.lastEventId) });
    }
    if (action === 'steer') agent.steer(message);
    else agent.followUp(message);
    await this.#save();
    return json(202, { queued: true });
  }

  /** Aborts the run, ends the clients' streams and erases the session (ids go on). */
  async #delete(agent) {
    agent.abort();
    await this.runDone;
    for (const client of this.clients) client(undefined);
    await this.storage.deleteAll();
    await this.storage.deleteAlarm();
    // Ids go on: a client of the old session must not take the new one's events for seen.
    await this.storage.put('ids', { lastEventId: this.lastEventId, epoch: this.epoch });
    this.loading = undefined;
    this.agent = undefined;
    this.recorder = undefined;
    this.recent = [];
    this.stored = [];
    this.exists = false;
  }

  #state() {
    const s = this.agent.snapshot();
    return {
      messages: s.messages,
      running: this.agent.state.isStreaming || this.runDone !== undefined,
      steering: s.steering,
      followUps: s.followUps,
      pending: this.agent.waitingToolCalls.map(pendingCall),
      lastEventId: String(this.lastEventId),
    };
  }

  /** SSE: the stored events after Last-Event-ID (with the updates this instance still has),
   * then live ones, each once. */
  async #events(request, url) {
    const from = parseId(request.headers.get('last-event-id') ?? url.searchParams.get('after'));
    const encoder = new TextEncoder();
    const frame = ([n, k], type, text) => encoder.encode(`id: ${k === 0 ? n : `${n}.${k}`}\nevent: ${type}\ndata: ${text}\n\n`);
    let sent = from;
    let client;
    const stream = new ReadableStream({
      start: async (controller) => {
        const live = [];
        let replaying = true;
        const send = (id, type, text) => {
          if (!after(id, sent)) return;
          sent = id;
          controller.enqueue(frame(id, type, text));
        };
        client = (id, type, text) => {
          if (id === undefined) {
            this.clients.delete(client);
            try {
              controller.close();
            } catch {
              // already closed
            }
          } else if (replaying) live.push([id, type, text]);
          else send(id, type, text);
        };
        this.clients.add(client);
        const found = [];
        for (const [key, text] of await readParts(this.storage, 'e:')) {
          const id = [Number(key.slice(2)), 0];
          if (after(id, from)) found.push([id, JSON.parse(text).type, text]);
        }
        for (const item of [...this.recent, ...live]) if (after(item[0], from)) found.push(item);
        found.sort((a, b) => (after(a[0], b[0]) ? 1 : after(b[0], a[0]) ? -1 : 0));
        for (const [id, type, text] of found) send(id, type, text);
        replaying = false;
        controller.enqueue(encoder.encode(': live\n\n'));
      },
      cancel: () => this.clients.delete(client),
    });
    return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
  }
}

/**
 * Routes `/sessions/:id[/prompt|steer|follow-up|abort|events]` to the session's Durable Object
 * in `namespace` (one object per id). With `token`, requests must carry
 * `Authorization: Bearer <token>` (or `?token=` for EventSource, which sends no headers).
 * With `cors` (an origin or "*"), browsers on that origin may call it. Other paths get
 * `undefined`, for the Worker to answer.
 */
export async function routeSessions(request, namespace, options = {}) {
  const url = new URL(request.url);
  const prefix = options.prefix ?? '/sessions';
  if (url.pathname !== prefix && !url.pathname.startsWith(`${prefix}/`)) return undefined;
  const cors = options.cors ? corsHeaders(options.cors, request) : undefined;
  if (cors && request.method === 'OPTIONS') return new Response(null, { status: 204, headers: cors });
  const answer = await route(request, url, namespace, options, prefix);
  if (!cors) return answer;
  const headers = new Headers(answer.headers);
  for (const [k, v] of Object.entries(cors)) headers.set(k, v);
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}

/** With `cors` (an origin, or "*"), pages of that origin may call the API from a browser. */
function corsHeaders(origin, request) {
  return {
    'access-control-allow-origin': origin === '*' ? '*' : origin,
    'access-control-allow-methods': 'GET, POST, DELETE, OPTIONS',
    'access-control-allow-headers': request.headers.get('access-control-request-headers') ?? 'authorization, content-type, last-event-id',
    'access-control-max-age': '600',
    vary: 'Origin',
  };
}

/** Whether `a` and `b` are the same text, in time that does not depend on where they
 * differ (each is hashed first, so neither length nor content shows in the timing). */
async function sameSecret(a, b) {
  const digest = async (text) => new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  const [x, y] = await Promise.all([digest(a), digest(b)]);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i] ^ y[i];
  return diff === 0;
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const POSTED = new Set(['prompt', 'steer', 'follow-up', 'abort', 'import', 'export']);

/** What a request does to a session (`segments`: the path after the prefix), as `authorize`
 * is told and the session's object acts on: `create` (`POST` the prefix), `read` (the state
 * and the events), `snapshot` (the whole run, for a page to restore), `prompt`, `steer`,
 * `follow-up`, `abort`, `delete`, `import` (a page's snapshot replaces the session), `export`
 * (the session hands its run to a page), `approve`, `reject`, `result` (a waiting tool call's
 * answers), `cassette` (its recorded runs) and `fork` (a new session from one of its events).
 * 404 for a route that does not exist, 405 for a method a route does not take. */
function actionOf(method, segments) {
  const [id, what, callId, verb, ...more] = segments;
  const get = method === 'GET' || method === 'HEAD';
  if (id === undefined) return method === 'POST' ? 'create' : 405;
  if (what === undefined) return get ? 'read' : method === 'DELETE' ? 'delete' : 405;
  if (callId === undefined && (what === 'events' || what === 'snapshot' || what === 'cassette')) return get ? (what === 'events' ? 'read' : what) : 405;
  if (callId === undefined && what === 'fork') return method === 'POST' ? 'fork' : 405;
  if (callId === undefined && POSTED.has(what)) return method === 'POST' ? what : 405;
  if (what === 'tool-calls' && callId !== undefined && ANSWERS.has(verb) && more.length === 0) return method === 'POST' ? verb : 405;
  return 404;
}

async function route(request, url, namespace, options, prefix) {
  const segments = url.pathname.slice(prefix.length).split('/').filter(Boolean);
  const id = segments[0];
  const action = actionOf(request.method, segments);
  const open = (options.token === undefined || options.token === '') && options.authorize === undefined;
  // Secure by default: a session API with neither a token nor an authorizer answers only
  // requests addressed to this machine (a Worker in `wrangler dev`), never a public host.
  if (open && !LOCAL_HOSTS.has(url.hostname)) {
    return problem(401, 'unauthorized', 'this session API has no token and no authorize function, so it answers only requests to localhost: pass routeSessions(request, namespace, { token }) or { authorize }', { 'www-authenticate': 'Bearer' });
  }
  if (options.token !== undefined && options.token !== '') {
    const given = request.headers.get('authorization')?.replace(/^Bearer\s+/i, '') ?? url.searchParams.get('token');
    if (given === null || !(await sameSecret(given, String(options.token)))) return problem(401, 'unauthorized', 'a bearer token is required', { 'www-authenticate': 'Bearer' });
  }
  if (action === 404 || (id !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(id))) return problem(404, 'no such route');
  if (action === 405) return problem(405, 'method not allowed');
  // A new session's id, minted here: unguessable, so knowing an id is no way into another's.
  const sessionId = segments.length === 0 ? crypto.randomUUID() : id;
  if (options.authorize !== undefined) {
    let allowed;
    try {
      allowed = await options.authorize(request, options.env, { sessionId, action });
    } catch (error) {
      console.error('pi-agent-wasm sessions: authorize threw, so the request is refused:', error);
      allowed = false;
    }
    if (allowed !== true) return problem(403, 'forbidden', `not allowed to ${action} this session`);
  }
  if (segments.length === 0) return json(201, { id: sessionId });
  if (action === 'fork') return forkSession(request, url, namespace, id);
  const forwarded = new URL(request.url);
  forwarded.pathname = `/sessions/${segments.join('/')}`;
  return namespace.get(namespace.idFromName(id)).fetch(new Request(forwarded, request));
}

/** `POST /sessions/:id/fork` with `{ at, change }`: a new session continues this one's
 * cassette from event `at` with `change` (docs/record-replay.md; the new session keeps its own
 * model, as an import does). Answers `201 { id }`, the new session's. */
async function forkSession(request, url, namespace, id) {
  const read = await readBody(request, MAX_BODY);
  if (read.error) return read.error;
  const body = read.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return problem(400, 'malformed body', 'expected { "at": event index, "change"?: … }');
  const source = new URL(url);
  source.pathname = `/sessions/${id}/cassette`;
  const got = await namespace.get(namespace.idFromName(id)).fetch(new Request(source, { headers: request.headers }));
  if (!got.ok) return got;
  let snapshot;
  try {
    snapshot = forkSnapshot(await got.text(), body.at, body.change);
  } catch (error) {
    if (error?.code !== 'invalid_input') throw error;
    return problem(400, 'malformed fork', error.message);
  }
  const forked = crypto.randomUUID();
  const target = new URL(url);
  target.pathname = `/sessions/${forked}/import`;
  const headers = new Headers(request.headers);
  headers.set('content-type', 'application/json');
  const answer = await namespace.get(namespace.idFromName(forked)).fetch(new Request(target, { method: 'POST', headers, body: JSON.stringify(snapshot) }));
  if (answer.status !== 202) return answer;
  return json(201, { id: forked, from: id, at: body.at });
}

/** The options a proxy client may set (pi's streamProxy sends these); `headers` is not
 * among them: a browser does not get to add headers to a request carrying the server's key. */
const PROXY_OPTIONS = ['temperature', 'samplingParams', 'maxTokens', 'reasoning', 'cacheRetention', 'sessionId',
  'disableContinuation', 'metadata', 'transport', 'thinkingBudgets', 'maxRetryDelayMs'];

/** A pi-ai event as pi's proxy wire carries it: without the partial message. */
function wireEvent(event) {
  const { type, contentIndex } = event;
  const block = event.partial?.content?.[contentIndex];
  switch (type) {
    case 'start':
      return { type };
    case 'text_start':
    case 'thinking_start':
      return { type, contentIndex };
    case 'text_delta':
    case 'thinking_delta':
    case 'toolcall_delta':
      return { type, contentIndex, delta: event.delta };
    case 'text_end':
      return { type, contentIndex, contentSignature: block?.textSignature };
    case 'thinking_end':
      return { type, contentIndex, contentSignature: block?.thinkingSignature };
    case 'toolcall_start':
      return { type, contentIndex, id: block?.id, toolName: block?.name };
    case 'toolcall_end':
      return { type, contentIndex, toolCall: event.toolCall };
    case 'done':
      return { type, reason: event.reason, usage: event.message?.usage };
    case 'error':
      return { type, reason: event.reason, errorMessage: event.error?.errorMessage, usage: event.error?.usage };
    default:
      return undefined;
  }
}

/**
 * The server side of pi's `streamProxy` (`POST <path>`, by default `/api/stream`): a browser
 * agent streams through the Worker, and the key never reaches the page. `token` is required
 * (the client's `authToken`); `models` are the server's own model objects the client may
 * name (by `provider` and `id`: the client's `baseUrl` and headers are never used);
 * `getApiKey(model)` gives the key. Other paths resolve to `undefined`.
 */
export async function handleStreamProxy(request, { token, models, getApiKey, path = '/api/stream' } = {}) {
  const url = new URL(request.url);
  if (url.pathname !== path) return undefined;
  if (typeof token !== 'string' || token === '') return problem(500, 'proxy not configured', 'handleStreamProxy needs a token');
  if (request.method !== 'POST') return problem(405, 'method not allowed');
  const given = request.headers.get('authorization')?.replace(/^Bearer\s+/i, '');
  if (given !== token) return problem(401, 'unauthorized', 'a bearer token is required', { 'www-authenticate': 'Bearer' });
  const { body, error } = await readBody(request, 4 * MAX_BODY);
  if (error) return error;
  const asked = body?.model;
  if (!asked || typeof asked.id !== 'string' || typeof asked.provider !== 'string' || !body.context || !Array.isArray(body.context.messages)) {
    return problem(400, 'malformed body', 'expected { model, context, options }');
  }
  const model = (models ?? []).find((m) => m.id === asked.id && m.provider === asked.provider);
  if (!model) return problem(403, 'model not allowed', `${asked.provider}/${asked.id}`);
  const options = {};
  for (const key of PROXY_OPTIONS) if (body.options?.[key] !== undefined) options[key] = body.options[key];
  const apiKey = await getApiKey?.(model);
  const events = streamSimple(model, body.context, { ...options, apiKey, signal: request.signal });
  const encoder = new TextEncoder();
  const stream = new ReadableStream({
    async start(controller) {
      try {
        for await (const event of events) {
          const wire = wireEvent(event);
          if (wire !== undefined) controller.enqueue(encoder.encode(`data: ${JSON.stringify(wire)}\n\n`));
        }
        controller.close();
      } catch (e) {
        controller.error(e);
      }
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
}
