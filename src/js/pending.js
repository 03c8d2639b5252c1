// Tool calls that wait (issue 33): for a person's approval (a tool's `needsApproval`, or the
// config's), or for a client that runs the tool elsewhere (a tool declared `client: true`,
// by its schema alone). A waiting call holds no timer and no request: its run awaits a
// Promise that `approve`, `reject` or `resolveToolCall` settles, possibly after a snapshot
// was restored in another process. Opt-in: a run whose tools say neither runs each tool as
// pi does.

/** An `invalid_input` error, as the core's own. */
function invalidInput(message) {
  return Object.assign(new Error(message), { code: 'invalid_input' });
}

const KINDS = ['approval', 'client'];

/** A waiting call as listed and saved: `{ toolCallId, toolName, args, kind, reason? }`. */
function entry(call) {
  const { toolCallId, toolName, args, kind, reason } = call;
  return reason === undefined ? { toolCallId, toolName, args, kind } : { toolCallId, toolName, args, kind, reason };
}

/** The error result's text for a call answered with a rejection: words the model can act on. */
function rejection(call, reason) {
  const why = typeof reason === 'string' && reason !== '' ? `: ${reason}` : '.';
  return call.kind === 'client'
    ? `The client did not run tool call ${call.toolName}${why} It has no result.`
    : `The user rejected tool call ${call.toolName}${why} It did not run.`;
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

  /** The calls waiting for an answer, in the order they began to wait. */
  get waiting() {
    const restored = [...this.#restored.values()].filter((c) => c.answer === undefined && !this.#waiting.has(c.toolCallId));
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
    this.#answer(toolCallId, 'resolveToolCall', { result: clientResult(result) });
  }

  #answer(toolCallId, verb, answer) {
    if (typeof toolCallId !== 'string') throw invalidInput(`${verb}: the tool call id must be a string, got ${typeof toolCallId}`);
    const live = this.#waiting.get(toolCallId);
    const restored = this.#restored.get(toolCallId);
    const call = live?.call ?? (restored?.answer === undefined ? restored : undefined);
    if (call === undefined) throw invalidInput(`${verb}: no tool call ${JSON.stringify(toolCallId)} is waiting (it may have been answered, aborted or never asked)`);
    if (verb === 'approve' && call.kind !== 'approval') throw invalidInput(`approve: tool call ${JSON.stringify(toolCallId)} waits for its client's result: use resolveToolCall() or reject()`);
    if (verb === 'resolveToolCall' && call.kind !== 'client') throw invalidInput(`resolveToolCall: tool call ${JSON.stringify(toolCallId)} waits for approval: use approve() or reject()`);
    if (live) {
      this.#waiting.delete(toolCallId);
      this.#restored.delete(toolCallId);
      live.settle(answer);
    } else {
      restored.answer = answer;
    }
  }

  /** Parks `call` of a run (or takes the answer it got while its run was not running):
   * resolves with the answer; rejects with pi's abort text when `signal` aborts. */
  park(call, signal) {
    const restored = this.#restored.get(call.toolCallId);
    if (restored?.answer !== undefined) {
      this.#restored.delete(call.toolCallId);
      return { answer: Promise.resolve(restored.answer), early: true };
    }
    const answer = new Promise((resolve, reject) => {
      const aborted = () => {
        this.#waiting.delete(call.toolCallId);
        reject(new Error('Operation aborted'));
      };
      if (signal?.aborted) return aborted();
      signal?.addEventListener?.('abort', aborted, { once: true });
      this.#waiting.set(call.toolCallId, {
        call,
        settle: (a) => {
          signal?.removeEventListener?.('abort', aborted);
          resolve(a);
        },
      });
    });
    return { answer, early: false };
  }

  /** Whether a restored snapshot said `toolCallId` was waiting (its resumed run asks again). */
  wasWaiting(toolCallId) {
    return this.#restored.has(toolCallId);
  }

  /** For snapshots and checkpoints: the waiting calls, and the answers their runs have not
   * taken yet (`answer`); `undefined` when there are none. */
  save() {
    const restored = [...this.#restored.values()].filter((c) => !this.#waiting.has(c.toolCallId));
    const calls = [...restored.map((c) => (c.answer === undefined ? entry(c) : { ...entry(c), answer: c.answer })), ...[...this.#waiting.values()].map((w) => entry(w.call))];
    return calls.length === 0 ? undefined : calls;
  }

  /** Takes the waiting calls of a snapshot or checkpoint (`save()`'s list, checked). */
  load(list, what) {
    if (list === undefined) return;
    if (!Array.isArray(list)) throw invalidInput(`${what}: waiting must be an array`);
    const read = list.map((c, i) => {
      const at = `${what}: waiting[${i}]`;
      if (c === null || typeof c !== 'object') throw invalidInput(`${at} is not an object`);
      if (typeof c.toolCallId !== 'string' || typeof c.toolName !== 'string') throw invalidInput(`${at}: toolCallId and toolName must be strings`);
      if (!KINDS.includes(c.kind)) throw invalidInput(`${at}: kind must be "approval" or "client"`);
      if (c.reason !== undefined && typeof c.reason !== 'string') throw invalidInput(`${at}: reason must be a string`);
      const call = entry(c);
      if (c.answer !== undefined) call.answer = readAnswer(c.answer, at);
      return call;
    });
    for (const call of read) this.#restored.set(call.toolCallId, call);
  }
}

function readAnswer(a, at) {
  if (a === null || typeof a !== 'object') throw invalidInput(`${at}: answer is not an object`);
  if (a.result !== undefined) return { result: clientResult(a.result) };
  if (typeof a.approved !== 'boolean') throw invalidInput(`${at}: answer.approved must be a boolean`);
  if (a.reason !== undefined && typeof a.reason !== 'string') throw invalidInput(`${at}: answer.reason must be a string`);
  return a.reason === undefined ? { approved: a.approved } : { approved: a.approved, reason: a.reason };
}

/** A client's result, checked: `{ content: [...], details?, isError? }`. */
function clientResult(result) {
  if (result === null || typeof result !== 'object' || Array.isArray(result)) throw invalidInput('resolveToolCall: the result must be an object { content, details?, isError? }');
  if (!Array.isArray(result.content)) throw invalidInput('resolveToolCall: the result\'s content must be an array of content blocks');
  if (result.isError !== undefined && typeof result.isError !== 'boolean') throw invalidInput('resolveToolCall: the result\'s isError must be a boolean');
  return result;
}

/**
 * The run's glue (src/js/loop.js `GLUE`) with waiting tool calls: `executeTool` parks a call
 * that needs an answer, and `onInterruptedToolCall` reruns a call a restored snapshot says
 * was waiting (it waits again, or takes the answer it got meanwhile). `run`: `{ gate,
 * needsApproval, emit, checkpoint }`.
 */
export function runGlue(glue, run) {
  const own = Object.create(glue);
  own.liveContext = (...a) => (run.live = glue.liveContext(...a));
  own.executeTool = (tool, id, args, signal, onUpdate) => {
    if (tool.client !== true && (tool.needsApproval === undefined || tool.needsApproval === false) && run.needsApproval === undefined) {
      return tool.execute(id, args, signal, onUpdate);
    }
    return waitThenExecute(run, tool, id, args, signal, onUpdate);
  };
  own.hook = (config, name) => {
    const f = glue.hook(config, name);
    if (name !== 'onInterruptedToolCall' || run.gate === undefined) return f;
    return function onInterruptedToolCall(context, signal) {
      if (run.gate.wasWaiting(context?.toolCall?.id)) return 'rerun';
      return f === undefined ? undefined : f.call(this, context, signal);
    };
  };
  return own;
}

async function waitThenExecute(run, tool, id, args, signal, onUpdate) {
  const name = tool.name;
  let kind = tool.client === true ? 'client' : undefined;
  let reason;
  if (kind === undefined) {
    const context = run.live?.context;
    const own = tool.needsApproval;
    let verdict = typeof own === 'function' ? await own.call(tool, args, context) : own;
    if (!verdict && run.needsApproval !== undefined) verdict = await run.needsApproval({ toolCallId: id, toolName: name, args, context });
    if (verdict) kind = 'approval';
    if (typeof verdict === 'string' && verdict !== '') reason = verdict;
  }
  if (kind === undefined) return tool.execute(id, args, signal, onUpdate);
  if (run.gate === undefined) {
    const what = kind === 'client' ? 'is a client tool' : 'needs approval';
    throw new Error(`Tool ${name} ${what}, and this run has no toolCallGate to answer it (config.toolCallGate)`);
  }
  const call = { toolCallId: id, toolName: name, args, kind, reason };
  // Parked before its event: a listener may answer at once.
  const { answer, early } = run.gate.park(call, signal);
  if (!early) await run.emit({ type: 'tool_execution_waiting', ...entry(call) });
  const a = await answer;
  if (a.result !== undefined) return a.result;
  if (!a.approved) throw new Error(rejection(call, a.reason));
  // Approved: saved as run (maybe) before the tool starts, so a restore does not ask again.
  await run.checkpoint?.();
  return tool.execute(id, args, signal, onUpdate);
}
