// Tool calls that wait (issue 33): for a person's approval (a tool's `needsApproval`, or the
// config's), or for a client that runs the tool elsewhere (a tool declared `client: true`,
// by its schema alone). A waiting call holds no request, and no timer unless it expires
// (`expiresAfterMs`): its run awaits a Promise that `approve`, `reject` or `resolveToolCall`
// settles, possibly after a snapshot was restored in another process. Opt-in: a run whose
// tools say neither runs each tool as pi does.

/** An `invalid_input` error, as the core's own. */
function invalidInput(message, cause) {
  return Object.assign(new Error(message), { code: 'invalid_input' }, cause === undefined ? {} : { cause });
}

const KINDS = ['approval', 'client'];

/** A waiting call as listed and saved: `{ toolCallId, toolName, args, kind, reason?, expiresAt? }`. */
function entry(call) {
  const { toolCallId, toolName, args, kind, reason, expiresAt } = call;
  const e = { toolCallId, toolName, args, kind };
  if (reason !== undefined) e.reason = reason;
  if (expiresAt !== undefined) e.expiresAt = expiresAt;
  return e;
}

/** The error result's text for a call whose wait expired: it timed out, and when. */
function expiry(call) {
  const at = new Date(call.expiresAt).toISOString();
  return call.kind === 'client'
    ? `Tool call ${call.toolName} timed out waiting for its client's result (it expired at ${at}). It has no result.`
    : `Tool call ${call.toolName} timed out waiting for approval (it expired at ${at}). It did not run.`;
}

/** The longest delay setTimeout keeps (a longer one fires at once). */
const LONGEST_TIMER = 2 ** 31 - 1;

/** Calls `f` once the clock reaches `at` (ms since the epoch), however far off; returns the
 * function that cancels it. */
function onTime(time, f) {
  let timer;
  const arm = () => {
    const left = time - Date.now();
    if (left <= 0) f();
    else timer = setTimeout(arm, Math.min(left, LONGEST_TIMER));
  };
  arm();
  return () => clearTimeout(timer);
}

/** A wait's length: `undefined` (no expiry) or a positive number of milliseconds. */
function waitLength(ms, name) {
  if (ms === undefined || ms === null) return undefined;
  if (typeof ms !== 'number' || !(ms > 0) || !Number.isFinite(ms)) {
    throw new Error(`Tool ${name}: expiresAfterMs must be a positive number of milliseconds, got ${typeof ms === 'number' ? ms : typeof ms}`);
  }
  return ms;
}

/** The error result's text for a call answered with a rejection: words the model can act on. */
function rejection(call, reason) {
  const why = typeof reason === 'string' && reason !== '' ? `: ${reason}` : '.';
  return call.kind === 'client'
    ? `The client did not run tool call ${call.toolName}${why} It has no result.`
    : `The user rejected tool call ${call.toolName}${why} It did not run.`;
}

/** The ids of the tool calls in `messages` (a snapshot's transcript): what its `waiting`
 * may name. */
export function callIds(messages) {
  const ids = new Set();
  for (const m of messages ?? []) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content) if (b?.type === 'toolCall' && typeof b.id === 'string') ids.add(b.id);
  }
  return ids;
}

/** Whether a tool's calls may wait (it says so itself). */
export function waits(tool) {
  return tool?.client === true || (tool?.needsApproval !== undefined && tool?.needsApproval !== false);
}

/**
 * The answers of waiting tool calls. An `Agent` has one (`agent.approve(id)` and the rest
 * call it); the loop functions take one as `config.toolCallGate`.
 */
export class ToolCallGate {
  /** id -> { call, settle } of each call its run is waiting on. */
  #waiting = new Map();
  /** id -> call that a restored snapshot says was waiting, until its resumed run parks it
   * again; `call.answer` once answered meanwhile. */
  #restored = new Map();
  /** Ids of calls of a waiting tool whose own `execute` has started (so a cut after it is an
   * interrupted call, not one to ask again). */
  #started = new Set();

  /** The calls waiting for an answer, in the order they began to wait. */
  get waiting() {
    const now = Date.now();
    // (A restored call past its time waits no more: its resumed run ends it as timed out.)
    const restored = [...this.#restored.values()].filter((c) => c.answer === undefined && !(c.expiresAt <= now));
    return [...restored, ...[...this.#waiting.values()].map((w) => w.call)].map(entry);
  }

  /** Lets an approval call run its tool. */
  approve(toolCallId) {
    this.#answer(toolCallId, 'approve', { approved: true });
  }

  /** Ends a waiting call with an error result that says it was rejected, and why. */
  reject(toolCallId, reason) {
    if (reason !== undefined && typeof reason !== 'string') throw invalidInput(`reject: the reason must be a string, got ${typeof reason}`);
    this.#answer(toolCallId, 'reject', reason === undefined ? { approved: false } : { approved: false, reason });
  }

  /** Ends a client call with the result its client computed: `{ content, details?, isError? }`. */
  resolveToolCall(toolCallId, result) {
    this.#answer(toolCallId, 'resolveToolCall', { result: clientResult(result, 'resolveToolCall') });
  }

  #answer(toolCallId, verb, answer) {
    if (typeof toolCallId !== 'string') throw invalidInput(`${verb}: the tool call id must be a string, got ${typeof toolCallId}`);
    const live = this.#waiting.get(toolCallId);
    const restored = this.#restored.get(toolCallId);
    const call = live?.call ?? (restored?.answer === undefined ? restored : undefined);
    // (`notWaiting`: the call's state, not the answer's shape, refused it: a session's 409.)
    const refuse = (message) => Object.assign(invalidInput(message), { notWaiting: true });
    if (call === undefined) throw refuse(`${verb}: no tool call ${JSON.stringify(toolCallId)} is waiting (it may have been answered, aborted, not asked yet, or never asked)`);
    if (verb === 'approve' && call.kind !== 'approval') throw refuse(`approve: tool call ${JSON.stringify(toolCallId)} waits for its client's result: use resolveToolCall() or reject()`);
    if (verb === 'resolveToolCall' && call.kind !== 'client') throw refuse(`resolveToolCall: tool call ${JSON.stringify(toolCallId)} waits for approval: use approve() or reject()`);
    if (call.expiresAt !== undefined && Date.now() >= call.expiresAt) {
      // Its timer is late (a busy event loop): the wait is over all the same.
      if (live) this.#settle(toolCallId, { expired: true });
      throw refuse(`${verb}: tool call ${JSON.stringify(toolCallId)} expired at ${new Date(call.expiresAt).toISOString()}`);
    }
    if (live) {
      this.#settle(toolCallId, answer);
    } else {
      restored.answer = answer;
    }
  }

  /** Ends the live wait of `id` with `answer` (its expiry timer cancelled). */
  #settle(id, answer) {
    const live = this.#waiting.get(id);
    if (live === undefined) return;
    this.#waiting.delete(id);
    live.cancel?.();
    live.settle(answer);
  }

  /** Parks `call` of a run (or takes the answer it got while its run was not running):
   * `{ answer }`, a Promise of the answer that rejects with pi's abort text when `signal`
   * aborts, with `early` when it was answered already; `{ error }` when the id waits already.
   * A call that waited before a restore keeps its first `expiresAt`; at `expiresAt` the
   * answer is `{ expired: true }`. */
  park(call, signal) {
    const id = call.toolCallId;
    if (this.#waiting.has(id)) return { error: `Tool call id ${JSON.stringify(id)} is already waiting for an answer: tool call ids must be unique` };
    const restored = this.#restored.get(id);
    this.#restored.delete(id);
    if (restored?.answer !== undefined) return { answer: Promise.resolve(restored.answer), early: true };
    if (restored?.expiresAt !== undefined) call.expiresAt = restored.expiresAt;
    // Restored after its time: it ends as timed out, without waiting (or saying so) again.
    if (restored !== undefined && call.expiresAt <= Date.now()) return { answer: Promise.resolve({ expired: true }), early: true };
    const record = { call, settle: undefined, cancel: undefined };
    const waited = new Promise((resolve) => {
      record.settle = resolve;
    });
    this.#waiting.set(id, record);
    if (call.expiresAt !== undefined) record.cancel = onTime(call.expiresAt, () => this.#settle(id, { expired: true }));
    // An abort ends the wait (and forgets the call) with pi's abort error.
    const answer = unlessAborted(waited, signal);
    answer.catch(() => this.drop(id));
    return { answer, early: false };
  }

  /** Forgets a parked call whose run failed before it could be answered. */
  drop(toolCallId) {
    const live = this.#waiting.get(toolCallId);
    this.#waiting.delete(toolCallId);
    live?.cancel?.();
  }

  /** Marks that a waiting tool's own `execute` starts for `toolCallId`. */
  start(toolCallId) {
    this.#started.add(toolCallId);
  }

  /** Whether a resumed run should run `toolCallId` again, cut off with its tool not started:
   * it was waiting, or its waiting tool had not started. */
  rerun(toolCallId, tool) {
    if (this.#restored.has(toolCallId)) return true;
    return waits(tool) && !this.#started.has(toolCallId);
  }

  /** A run ended: what it did not take from a restored snapshot is of no run any more. */
  runEnded() {
    this.#restored.clear();
    this.#started.clear();
  }

  /** For snapshots and checkpoints: the waiting calls (with the answers their runs have not
   * taken yet, `answer`), and the calls whose waiting tool started (`started: true`);
   * `undefined` when there are none. */
  save() {
    const restored = [...this.#restored.values()].map((c) => (c.answer === undefined ? entry(c) : { ...entry(c), answer: c.answer }));
    const started = [...this.#started].map((toolCallId) => ({ toolCallId, started: true }));
    const calls = [...restored, ...[...this.#waiting.values()].map((w) => entry(w.call)), ...started];
    return calls.length === 0 ? undefined : calls;
  }

  /** Takes the waiting calls of a snapshot or checkpoint (`save()`'s list), each checked:
   * `ids` are the tool call ids the snapshot's run may have. */
  load(list, what, ids) {
    if (list === undefined) return;
    if (!Array.isArray(list)) throw invalidInput(`${what}: waiting must be an array`);
    const seen = new Set();
    const read = list.map((c, i) => {
      const at = `${what}: waiting[${i}]`;
      if (c === null || typeof c !== 'object') throw invalidInput(`${at} is not an object`);
      if (typeof c.toolCallId !== 'string') throw invalidInput(`${at}: toolCallId must be a string`);
      if (seen.has(c.toolCallId)) throw invalidInput(`${at}: tool call ${JSON.stringify(c.toolCallId)} is listed twice`);
      seen.add(c.toolCallId);
      if (ids !== undefined && !ids.has(c.toolCallId)) throw invalidInput(`${at}: tool call ${JSON.stringify(c.toolCallId)} is not a call of the snapshot's run`);
      if (c.started === true) return { started: c.toolCallId };
      if (typeof c.toolName !== 'string') throw invalidInput(`${at}: toolName must be a string`);
      if (!KINDS.includes(c.kind)) throw invalidInput(`${at}: kind must be "approval" or "client"`);
      if (c.reason !== undefined && typeof c.reason !== 'string') throw invalidInput(`${at}: reason must be a string`);
      if (c.expiresAt !== undefined && !Number.isFinite(c.expiresAt)) throw invalidInput(`${at}: expiresAt must be a number (ms since the epoch)`);
      const call = entry(c);
      if (c.answer !== undefined) call.answer = readAnswer(c.answer, c.kind, at);
      return call;
    });
    for (const call of read) {
      if (call.started !== undefined) this.#started.add(call.started);
      else this.#restored.set(call.toolCallId, call);
    }
  }
}

/** A saved answer, as the live API would take it for a call of `kind`. */
function readAnswer(a, kind, at) {
  if (a === null || typeof a !== 'object') throw invalidInput(`${at}: answer is not an object`);
  if (a.result !== undefined) {
    if (kind !== 'client') throw invalidInput(`${at}: an approval call's answer has no result`);
    return { result: clientResult(a.result, `${at}: answer`) };
  }
  if (typeof a.approved !== 'boolean') throw invalidInput(`${at}: answer.approved must be a boolean`);
  if (a.approved && kind !== 'approval') throw invalidInput(`${at}: a client call is not approved`);
  if (a.reason !== undefined && typeof a.reason !== 'string') throw invalidInput(`${at}: answer.reason must be a string`);
  return a.reason === undefined ? { approved: a.approved } : { approved: a.approved, reason: a.reason };
}

/** A content block a client may answer with: text, or an image. */
function isBlock(b) {
  return b !== null && typeof b === 'object'
    && ((b.type === 'text' && typeof b.text === 'string') || (b.type === 'image' && typeof b.data === 'string' && typeof b.mimeType === 'string'));
}

/** A client's result, checked: `{ content: [text or image blocks], details?, isError? }`. A
 * getter or trap that throws is an `invalid_input` error with what it threw as `cause`. */
function clientResult(result, what) {
  try {
    if (result === null || typeof result !== 'object' || Array.isArray(result)) throw invalidInput(`${what}: the result must be an object { content, details?, isError? }`);
    const { content, isError } = result;
    if (!Array.isArray(content) || !content.every(isBlock)) throw invalidInput(`${what}: the result's content must be an array of text or image blocks`);
    if (isError !== undefined && typeof isError !== 'boolean') throw invalidInput(`${what}: the result's isError must be a boolean`);
    return result;
  } catch (error) {
    if (error?.code === 'invalid_input') throw error;
    throw invalidInput(`${what}: the result cannot be read`, error);
  }
}

/**
 * The run's glue (src/js/loop.js `GLUE`) with waiting tool calls: `executeTool` parks a call
 * that needs an answer, and `onInterruptedToolCall` reruns a call cut off before its tool
 * started (it waits again, or takes the answer it got meanwhile). `run`: `{ gate,
 * needsApproval, emit, checkpoint, messages }`, `messages()` the run's transcript so far.
 */
export function runGlue(glue, run) {
  const own = Object.create(glue);
  // The run's own (loop.js callBlocks), never one read through the shared glue.
  own.blocks = undefined;
  own.ends = undefined;
  own.liveContext = (...a) => (run.live = glue.liveContext(...a));
  own.executeTool = (tool, id, args, signal, onUpdate) => {
    if (!waits(tool) && run.needsApproval === undefined) return tool.execute(id, args, signal, onUpdate);
    return waitThenExecute(run, tool, id, args, signal, onUpdate);
  };
  own.hook = (config, name) => {
    const f = glue.hook(config, name);
    if (name !== 'onInterruptedToolCall' || run.gate === undefined) return f;
    return function onInterruptedToolCall(context, signal) {
      const call = context?.toolCall;
      const tool = context?.context?.tools?.find?.((t) => t?.name === call?.name);
      if (run.gate.rerun(call?.id, tool)) return 'rerun';
      return f === undefined ? undefined : f.call(this, context, signal);
    };
  };
  return own;
}

/** Per abort signal, one Promise that rejects with pi's abort error when it aborts (one
 * listener per signal, however many calls race it). */
const abortedBy = new WeakMap();

/** `value`, or pi's abort error as soon as `signal` aborts while it is pending (or has). */
function unlessAborted(value, signal) {
  if (typeof value?.then !== 'function' || !signal || typeof signal.addEventListener !== 'function') return value;
  let aborted = abortedBy.get(signal);
  if (aborted === undefined) {
    aborted = new Promise((_, reject) => {
      if (signal.aborted) reject(new Error('Operation aborted'));
      else signal.addEventListener('abort', () => reject(new Error('Operation aborted')), { once: true });
    });
    aborted.catch(() => {});
    abortedBy.set(signal, aborted);
  }
  return Promise.race([value, aborted]);
}

async function waitThenExecute(run, tool, id, args, signal, onUpdate) {
  const name = tool.name;
  let kind = tool.client === true ? 'client' : undefined;
  let reason;
  if (kind === undefined) {
    // The context as the run has it now: its messages so far, and its tools.
    const context = { ...run.live?.context, messages: run.messages() };
    const own = tool.needsApproval;
    let verdict = typeof own === 'function' ? await unlessAborted(own.call(tool, args, context, signal), signal) : own;
    if (!verdict && run.needsApproval !== undefined) verdict = await unlessAborted(run.needsApproval({ toolCallId: id, toolName: name, args, context }, signal), signal);
    if (verdict) kind = 'approval';
    if (typeof verdict === 'string' && verdict !== '') reason = verdict;
  }
  if (signal?.aborted) throw new Error('Operation aborted');
  if (kind !== undefined) {
    if (run.gate === undefined) {
      const what = kind === 'client' ? 'is a client tool' : 'needs approval';
      throw new Error(`Tool ${name} ${what}, and this run has no toolCallGate to answer it (config.toolCallGate)`);
    }
    const ms = waitLength(tool.expiresAfterMs ?? run.expiresAfterMs, name);
    // (Capped at the last time a Date holds: any length works.)
    const call = { toolCallId: id, toolName: name, args, kind, reason, expiresAt: ms === undefined ? undefined : Math.min(Date.now() + ms, 8.64e15) };
    // Parked before its event: a listener may answer at once.
    const parked = run.gate.park(call, signal);
    if (parked.error !== undefined) throw new Error(parked.error);
    if (!parked.early) {
      try {
        await run.emit({ type: 'tool_execution_waiting', ...entry(call) });
      } catch (error) {
        run.gate.drop(id);
        throw error;
      }
    }
    const a = await parked.answer;
    if (a.expired) throw new Error(expiry(call));
    if (a.result !== undefined) return a.result;
    if (!a.approved) throw new Error(rejection(call, a.reason));
  }
  // The tool starts now: saved first, so a restore after this never asks again, and one
  // before it asks again instead of calling the call interrupted.
  run.gate?.start(id);
  await run.checkpoint?.();
  return tool.execute(id, args, signal, onUpdate);
}
