// The `Agent` class (spec §11): a stateful wrapper over this package's loop. It owns the
// transcript and tools, queues steering and follow-up messages for the loop's poll points,
// reduces every event into `state` and then awaits its listeners in order (a barrier for the
// loop), and turns a failed run into pi's synthetic error message.
//
// Written in JS on purpose: its state is JS objects the caller reads and assigns
// (`state.messages` is a live array, `pendingToolCalls` a Set), so keeping it here costs no
// crossing per event and makes re-entrant calls from listeners, tools and hooks (steer,
// followUp, abort, reading state, prompt while busy) plain JS calls, never a second borrow
// inside wasm. The loop itself runs in wasm.
//
// Better than pi-agent-core 1.6.0, tested on their own:
// - Steering or follow-up messages drained by a run that then fails before they were sent
//   go back to the front of their queue (pi loses them, L-137/L-160).
// - The failure message gets its own usage object (pi shares one module-level object
//   between all failure messages, so mutating one changes the others).
// - A failure whose thrown value or model cannot be read (a revoked Proxy, a throwing
//   getter) still ends the run with its failure message and `agent_end` (pi's own failure
//   handling throws on it, so prompt() rejects and listeners never see the run end).

import { codedError, getDefaultStreamFn, startRun, CHECKPOINT_VERSION, UNTRACKED, graceOf, boundAfterRun, OPTIONS_MAKERS, mergeIdentity } from './loop.js';
import { ToolCallGate, callIds } from './pending.js';
import { emptyUsage } from './messages.js';

/** L-130: the default `convertToLlm` keeps the four LLM roles and drops custom messages. As
 * pi's, `role` is read once per comparison (a getter sees the reads pi makes), and string
 * comparisons cost less than a Set lookup on a transcript filtered every turn. */
function defaultConvertToLlm(messages) {
  return messages.filter((m) => m.role === 'system' || m.role === 'user' || m.role === 'assistant' || m.role === 'toolResult');
}

function defaultModel() {
  return {
    id: 'unknown', name: 'unknown', api: 'unknown', provider: 'unknown', baseUrl: '', reasoning: false,
    input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0,
  };
}


// --- The transcript's system-message model (spec §3), for state read in JS. ---

function contentText(content, separator = '\n') {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((b) => b?.type === 'text').map((b) => b.text).join(separator);
}

/** A system message as a whole prompt: its content, then its non-null sections. */
function systemMessageText(message) {
  const parts = [contentText(message.content)];
  for (const text of Object.values(message.sections ?? {})) if (text !== null) parts.push(text);
  return parts.filter((p) => p.length > 0).join('\n\n');
}

/** What the model sees of a tool: its name, description, schema (a JSON copy) and sampling. */
function toolDeclaration(tool) {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters === undefined ? undefined : JSON.parse(JSON.stringify(tool.parameters)),
    ...(tool.constrainedSampling === undefined ? {} : { constrainedSampling: tool.constrainedSampling }),
  };
}

/** L-23: the leading system message for a prompt and tools, or undefined for neither. */
function initialSystemMessage(systemPrompt, tools) {
  const hasPrompt = systemPrompt !== undefined && systemPrompt.length > 0;
  const hasTools = tools !== undefined && tools.length > 0;
  if (!hasPrompt && !hasTools) return undefined;
  return { role: 'system', content: systemPrompt ?? '', ...(hasTools ? { toolsAdded: tools } : {}), timestamp: 0 };
}

/** L-28: every system message replayed into one (content appended, sections patched, tools
 * added and removed in order); undefined when there is none and no tools. */
function currentSystemMessage(messages) {
  const content = [];
  const sections = new Map();
  const tools = new Map();
  let timestamp;
  for (const m of messages) {
    if (m?.role !== 'system') continue;
    timestamp ??= m.timestamp;
    const text = contentText(m.content);
    if (text.length > 0) content.push(text);
    for (const [name, value] of Object.entries(m.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  if (timestamp === undefined && tools.size === 0) return undefined;
  return {
    role: 'system',
    content: content.join('\n\n'),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.size > 0 ? { toolsAdded: [...tools.values()] } : {}),
    timestamp: timestamp ?? 0,
  };
}

// --- Queues (L-135). ---

class MessageQueue {
  constructor(mode) {
    this.mode = mode;
    this.items = [];
  }

  peek() {
    if (this.mode === 'all') return this.items.slice();
    return this.items.length > 0 ? [this.items[0]] : [];
  }

  drain() {
    const taken = this.peek();
    this.items = this.items.slice(taken.length);
    return taken;
  }

  /** Puts messages back at the front, in their order. */
  restore(messages) {
    this.items = [...messages, ...this.items];
  }
}

/** L-133: the state object; the same object for the Agent's lifetime. */
function createState(initial) {
  let tools = initial?.tools?.slice() ?? [];
  let messages = initial?.messages?.slice() ?? [];
  const head = initialSystemMessage(initial?.systemPrompt, tools.map(toolDeclaration));
  if (head && messages[0]?.role !== 'system') messages.unshift(head);
  return {
    get systemPrompt() {
      const m = currentSystemMessage(messages);
      return m ? systemMessageText(m) : '';
    },
    model: initial?.model ?? defaultModel(),
    thinkingLevel: initial?.thinkingLevel ?? 'off',
    get tools() {
      return tools;
    },
    set tools(next) {
      tools = next.slice();
    },
    get messages() {
      return messages;
    },
    set messages(next) {
      messages = next.slice();
    },
    isStreaming: false,
    streamingMessage: undefined,
    pendingToolCalls: new Set(),
    errorMessage: undefined,
  };
}

const OWN = ['onInterruptedToolCall', 'needsApproval', 'expiresAfterMs', 'abortGraceMs'];

export class Agent {
  #state;
  #listeners = new Set();
  #steering;
  #followUps;
  /** The active run: { promise, resolve, controller, drained } or undefined. */
  #run;

  /** A restored snapshot's run, until `resume()` takes it: its position. */
  #restored;
  /** Usage of responses cut off by an interruption and requested again (from snapshots). */
  #discardedUsage = [];
  /** The answers of tool calls that wait for a person or a client (pending.js). */
  #gate = new ToolCallGate();

  constructor(options) {
    const o = options ?? {};
    // `restore: null` (a session not saved yet, as `JSON.parse(localStorage.getItem(…))` gives it) starts afresh.
    const snapshot = o.restore === undefined || o.restore === null ? undefined : readSnapshot(o.restore);
    this.#state = createState(snapshot ? restoredState(o.initialState, snapshot) : o.initialState);
    this.convertToLlm = o.convertToLlm ?? defaultConvertToLlm;
    this.transformContext = o.transformContext;
    // L-131: resolved now; throws the L-36 error when there is none.
    this.streamFunction = o.streamFn ?? getDefaultStreamFn();
    this.getApiKey = o.getApiKey;
    this.onPayload = o.onPayload;
    this.onResponse = o.onResponse;
    this.onProviderStreamEvent = o.onProviderStreamEvent;
    this.beforeToolCall = o.beforeToolCall;
    this.afterToolCall = o.afterToolCall;
    this.finishTurn = o.finishTurn;
    this.prepareRequest = o.prepareRequest;
    this.prepareNextTurn = o.prepareNextTurn;
    this.prepareNextTurnWithContext = o.prepareNextTurnWithContext;
    this.#steering = new MessageQueue(o.steeringMode ?? snapshot?.steeringMode ?? 'one-at-a-time');
    this.#followUps = new MessageQueue(o.followUpMode ?? snapshot?.followUpMode ?? 'one-at-a-time');
    if (snapshot) {
      this.#steering.items = snapshot.steering.slice();
      this.#followUps.items = snapshot.followUps.slice();
      this.#restored = snapshot.position;
      this.#discardedUsage = snapshot.discardedUsage.slice();
      if (snapshot.position !== undefined) this.#gate.load(snapshot.waiting, 'restore', callIds(snapshot.messages));
      else if (snapshot.waiting?.some((c) => c?.started !== true)) throw badSnapshot('waiting lists tool calls, but there is no run (position) to wait in');
    }
    this.sessionId = o.sessionId;
    this.thinkingBudgets = o.thinkingBudgets;
    this.transport = o.transport ?? 'auto';
    this.maxRetryDelayMs = o.maxRetryDelayMs;
    this.toolExecution = o.toolExecution ?? 'parallel';
    this.identity = o.identity;
    this.onCheckpoint = o.onCheckpoint;
    this.onInterruptedToolCall = o.onInterruptedToolCall;
    this.needsApproval = o.needsApproval;
    this.expiresAfterMs = o.expiresAfterMs;
    // Not pi's option: a bad value is refused here, not at each run.
    graceOf(o.abortGraceMs);
    this.abortGraceMs = o.abortGraceMs;
    // Not pi's option: a Recorder (pi-agent-wasm/cassette) that records every run.
    if (o.record !== undefined && typeof o.record?.begin !== 'function') throw new TypeError('record must be a Recorder');
    this.record = o.record;
  }

  /** The tool calls waiting for an answer: `{ toolCallId, toolName, args, kind, reason?, expiresAt? }`
   * each, `kind` `"approval"` (a person) or `"client"` (a client tool's result). */
  get waitingToolCalls() {
    return this.#gate.waiting;
  }

  /** Lets a call that waits for approval run its tool. */
  approve(toolCallId) {
    this.#gate.approve(toolCallId);
  }

  /** Ends a waiting call with an error result saying it was rejected (and `reason`). */
  reject(toolCallId, reason) {
    this.#gate.reject(toolCallId, reason);
  }

  /** Ends a client tool's call with the result its client computed. */
  resolveToolCall(toolCallId, result) {
    this.#gate.resolveToolCall(toolCallId, result);
  }

  /** L-139: adds a listener `(event, signal)`; returns its unsubscribe function. */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  get state() {
    return this.#state;
  }

  get steeringMode() {
    return this.#steering.mode;
  }

  set steeringMode(mode) {
    this.#steering.mode = mode;
  }

  get followUpMode() {
    return this.#followUps.mode;
  }

  set followUpMode(mode) {
    this.#followUps.mode = mode;
  }

  /** Queues a message for the next steering poll (after the current assistant turn). */
  steer(message) {
    this.#steering.items.push(message);
    this.record?.queued?.('steering', message);
  }

  /** Queues a message for when the agent would otherwise stop. */
  followUp(message) {
    this.#followUps.items.push(message);
    this.record?.queued?.('followUp', message);
  }

  clearSteeringQueue() {
    this.#steering.items = [];
  }

  clearFollowUpQueue() {
    this.#followUps.items = [];
  }

  clearAllQueues() {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }

  hasQueuedMessages() {
    return this.#steering.items.length > 0 || this.#followUps.items.length > 0;
  }

  /** L-136: what the next poll would take, steering first; consumes nothing. */
  peekQueuedMessages() {
    const steering = this.#steering.peek();
    return steering.length > 0 ? steering : this.#followUps.peek();
  }

  get signal() {
    return this.#run?.controller.signal;
  }

  abort() {
    this.#run?.controller.abort();
  }

  /** L-150: settles after the active run and its `agent_end` listeners. */
  waitForIdle() {
    return this.#run?.promise ?? Promise.resolve();
  }

  /** L-151: back to the replayed system message; model, level, tools and hooks stay. A run
   * restored from a snapshot and not resumed is dropped. */
  reset() {
    if (this.#run) throw codedError('agent_busy', 'Agent is already processing. Wait for completion before resetting.');
    this.#restored = undefined;
    const head = currentSystemMessage(this.#state.messages);
    this.#state.messages = head ? [head] : [];
    this.#state.isStreaming = false;
    this.#state.streamingMessage = undefined;
    this.#state.pendingToolCalls = new Set();
    this.#state.errorMessage = undefined;
    this.#gate = new ToolCallGate();
    this.clearAllQueues();
  }

  /**
   * The agent as plain data (JSON), at any moment, running or not: the transcript, model,
   * thinking level, queue modes and queued messages, and for a run in progress its
   * position. `new Agent({ ...options, restore: snapshot })` and then `resume()` finish that
   * run, with the tools, hooks and stream function supplied again. Messages a run took from
   * a queue and has not sent are back in their queue, or in the position when the run was
   * about to send them. A response being streamed is not kept: it is requested again, and
   * its usage so far is added to `discardedUsage`.
   */
  snapshot() {
    const state = this.#state;
    const run = this.#run;
    let position = run ? run.probe.position?.() : this.#restored;
    if (position?.at === 'done') position = undefined;
    // An abort that the run has not finished yet is finished by the resumed run.
    if (position !== undefined && run?.controller.signal.aborted) position = { ...position, aborted: true };
    const steering = this.#steering.items.slice();
    const followUps = this.#followUps.items.slice();
    const discardedUsage = this.#discardedUsage.slice();
    if (run) {
      // Taken from a queue and not sent: in the position when the run is about to send it,
      // else back at the front of its queue.
      const about = position?.at === 'request' ? position.inject.map((m) => JSON.stringify(m)) : [];
      const back = new Map([[this.#steering, []], [this.#followUps, []]]);
      for (const [queue, message] of run.drained) {
        if (run.sent?.has(message)) continue;
        const i = about.indexOf(JSON.stringify(message));
        if (i >= 0) about.splice(i, 1);
        else back.get(queue).push(message);
      }
      steering.unshift(...back.get(this.#steering));
      followUps.unshift(...back.get(this.#followUps));
      const partial = state.streamingMessage;
      if (position?.at === 'request' && partial?.role === 'assistant' && partial.usage !== undefined) discardedUsage.push(partial.usage);
    }
    const snapshot = {
      version: CHECKPOINT_VERSION,
      messages: state.messages.slice(),
      model: state.model,
      thinkingLevel: state.thinkingLevel,
      steeringMode: this.#steering.mode,
      followUpMode: this.#followUps.mode,
      steering,
      followUps,
      ...(position === undefined ? {} : { position }),
      discardedUsage,
    };
    const waiting = position === undefined ? undefined : this.#gate.save();
    if (waiting !== undefined) snapshot.waiting = waiting;
    return snapshot;
  }

  /** The usage of responses that were cut off by an interruption and requested again. */
  get discardedUsage() {
    return this.#discardedUsage.slice();
  }

  /** Finishes the run of the snapshot this agent was restored from; resolves at once when
   * that snapshot had none (or it was resumed already). */
  async resume() {
    if (this.#run) throw codedError('agent_busy', 'Agent is already processing. Wait for completion before resuming.');
    const position = this.#restored;
    if (position === undefined) return;
    this.#restored = undefined;
    const messages = this.#state.messages.slice();
    try {
      await this.#lifecycle(
        (signal, config, probe) => {
          const context = { messages, tools: this.#state.tools.slice() };
          return startRun('resume', undefined, context, config, (e) => this.#process(e), signal, this.streamFunction, this.#runOptions(probe, position));
        },
        false,
        undefined,
        { strict: true, aborted: position.aborted === true },
      );
    } catch (error) {
      // Refused before anything ran (a position that does not fit): still restorable.
      this.#restored = position;
      throw error;
    }
  }

  /** What a run of this agent needs besides the loop's arguments. */
  #runOptions(probe, position) {
    return { probe, position, checkpoint: this.onCheckpoint ? () => this.#checkpoint() : undefined, gate: this.#gate, tape: this.record ?? undefined };
  }

  /** `onCheckpoint(snapshot, event?)`: after an event's listeners, and before a tool runs. */
  #checkpoint(event) {
    return this.onCheckpoint?.(this.snapshot(), event);
  }

  /** A run restored from a snapshot waits for `resume()`: no other run may start first. */
  #refusePending(what) {
    if (this.#restored !== undefined) {
      throw codedError('resume_pending', `This agent was restored in the middle of a run: call resume() before ${what}() (or reset() to drop that run).`);
    }
  }

  /** L-145. */
  async prompt(input, images) {
    if (this.#run) {
      throw codedError('agent_busy', 'Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.');
    }
    this.#refusePending('prompt');
    await this.#runPrompts(promptMessages(input, images));
  }

  /** L-147: continue from the transcript (its last message must not be an assistant's,
   * unless messages are queued). */
  async continue() {
    if (this.#run) throw codedError('agent_busy', 'Agent is already processing. Wait for completion before continuing.');
    this.#refusePending('continue');
    const messages = this.#state.messages;
    const last = messages[messages.length - 1];
    if (!last || messages.every((m) => m.role === 'system')) throw codedError('no_messages', 'No messages to continue from');
    if (last.role !== 'assistant') {
      await this.#lifecycle((signal, config, probe) =>
        startRun('continue', undefined, this.#snapshot(), config, (e) => this.#process(e), signal, this.streamFunction, this.#runOptions(probe)));
      return;
    }
    const steering = this.#steering.drain();
    if (steering.length > 0) {
      await this.#runPrompts(steering, true, [this.#steering, steering]);
      return;
    }
    const followUps = this.#followUps.drain();
    if (followUps.length > 0) {
      await this.#runPrompts(followUps, false, [this.#followUps, followUps]);
      return;
    }
    throw codedError('continue_from_assistant', 'Cannot continue from message role: assistant');
  }

  async #runPrompts(prompts, skipInitialSteeringPoll = false, fromQueue = undefined) {
    await this.#lifecycle(
      (signal, config, probe) =>
        startRun('prompt', prompts, this.#snapshot(), config, (e) => this.#process(e), signal, this.streamFunction, this.#runOptions(probe)),
      skipInitialSteeringPoll,
      fromQueue,
    );
  }

  /** L-146: the run sees a copy of the transcript and tools as they are now. */
  #snapshot() {
    return { messages: this.#state.messages.slice(), tools: this.#state.tools.slice() };
  }

  /** L-152/L-153/L-137: the loop configuration, from the Agent's fields at run start: pi's
   * `createLoopConfig`, key for key and in its order, then this package's own keys when set.
   * One literal makes it and, with the request's model, level and identity, the stream
   * function's options (loop.js `OPTIONS_MAKERS`): a copy of an object of this many keys is a
   * V8 dictionary, 3 µs a request (11 µs when the config itself was built key by key). */
  #config(run, skipInitialSteeringPoll) {
    let skip = skipInitialSteeringPoll;
    const drain = (queue) => {
      const taken = queue.drain();
      for (const m of taken) run.drained.push([queue, m]);
      return taken;
    };
    const { sessionId, onPayload, onResponse, onProviderStreamEvent, transport, thinkingBudgets, maxRetryDelayMs, identity,
      toolExecution, beforeToolCall, afterToolCall, finishTurn, prepareRequest, convertToLlm, transformContext, getApiKey } = this;
    const prepareNextTurn = this.prepareNextTurnWithContext || this.prepareNextTurn
      ? async (turn) => {
        if (this.prepareNextTurnWithContext) return await this.prepareNextTurnWithContext(turn, this.signal);
        return await this.prepareNextTurn?.(this.signal);
      }
      : undefined;
    const getSteeringMessages = async () => {
      if (skip) {
        skip = false;
        return [];
      }
      return drain(this.#steering);
    };
    const getFollowUpMessages = async () => drain(this.#followUps);
    const make = (model, reasoning, identity) => ({
      model, reasoning, sessionId, onPayload, onResponse, onProviderStreamEvent, transport, thinkingBudgets, maxRetryDelayMs,
      identity, toolExecution, beforeToolCall, afterToolCall, finishTurn, prepareRequest, prepareNextTurn, convertToLlm,
      transformContext, getApiKey, getSteeringMessages, getFollowUpMessages,
    });
    const config = make(this.#state.model, this.#state.thinkingLevel === 'off' ? undefined : this.#state.thinkingLevel, identity);
    let own = false;
    for (const key of OWN) {
      if (this[key] === undefined) continue;
      config[key] = this[key];
      own = true;
    }
    // pi's `{ ...config, apiKey, identity, signal }` with the request's model and level. (With
    // this package's own keys set, streamOptions copies the config instead.)
    if (!own) {
      OPTIONS_MAKERS.set(config, (model, reasoning, apiKey, signal) => {
        const options = make(model, reasoning, mergeIdentity(identity));
        options.apiKey = apiKey;
        options.signal = signal;
        return options;
      });
    }
    return config;
  }

  /** L-155/L-156/L-157: one run, from start to idle. */
  async #lifecycle(execute, skipInitialSteeringPoll = false, fromQueue = undefined, { strict = false, aborted = false } = {}) {
    // prompt() and continue() checked that no run is active, with no await since.
    const controller = new AbortController();
    let resolve;
    const promise = new Promise((r) => {
      resolve = r;
    });
    const run = { promise, resolve, controller, drained: [], probe: {}, events: 0 };
    if (aborted) controller.abort();
    let refused;
    if (fromQueue) for (const m of fromQueue[1]) run.drained.push([fromQueue[0], m]);
    this.#run = run;
    this.#state.isStreaming = true;
    this.#state.streamingMessage = undefined;
    this.#state.errorMessage = undefined;
    try {
      await execute(controller.signal, this.#config(run, skipInitialSteeringPoll), run.probe);
    } catch (error) {
      this.#restoreUnsent(run);
      // `strict`: a run refused before its first event rejects instead (nothing happened).
      if (strict && run.events === 0) refused = { error };
      else await this.#fail(error, controller.signal.aborted);
    } finally {
      this.#state.isStreaming = false;
      this.#state.streamingMessage = undefined;
      this.#state.pendingToolCalls = new Set();
      this.#run = undefined;
      resolve();
    }
    if (refused) throw refused.error;
  }

  /** Queued messages the failed run drained but never sent go back to their queues; a value
   * the loop cannot read as a message (the likely cause of the failure) does not, so one bad
   * `steer()` fails one run, not every run after it. */
  #restoreUnsent(run) {
    const unsent = new Map();
    for (const [queue, message] of run.drained) {
      if (run.sent?.has(message) || !isMessage(message)) continue;
      if (!unsent.has(queue)) unsent.set(queue, []);
      unsent.get(queue).push(message);
    }
    for (const [queue, messages] of unsent) queue.restore(messages);
  }

  /** L-157: the synthetic failure message and the events that close the run. */
  async #fail(error, aborted) {
    if (this.#run) this.#run.failing = true;
    const model = this.#state.model;
    const failure = {
      role: 'assistant',
      content: [{ type: 'text', text: '' }],
      api: readable(() => model.api),
      provider: readable(() => model.provider),
      model: readable(() => model.id),
      usage: emptyUsage(),
      stopReason: aborted ? 'aborted' : 'error',
      errorMessage: readable(() => (error instanceof Error ? error.message : String(error)), UNREADABLE),
      timestamp: Date.now(),
    };
    // The run has ended, so its bound on what it awaits (abortGraceMs) is not there: an aborted
    // run's listeners and checkpoints get the same bound here.
    const signal = this.#run?.controller.signal;
    let grace;
    try {
      grace = graceOf(this.abortGraceMs);
    } catch {
      grace = 5000;
    }
    const close = (event) => boundAfterRun(this.#process(event), signal, grace);
    await close({ type: 'message_start', message: failure });
    await close({ type: 'message_end', message: failure });
    await close({ type: 'turn_end', message: failure, toolResults: [] });
    await close({ type: 'agent_end', messages: [failure] });
  }

  /** L-140/L-141: reduce the event into state, then await each listener in order. */
  async #process(event) {
    const state = this.#state;
    if (this.#run) this.#run.events++;
    switch (event.type) {
      case 'message_start':
      case 'message_update':
        state.streamingMessage = event.message;
        break;
      case 'message_end':
        state.streamingMessage = undefined;
        state.messages.push(event.message);
        if (this.#run) (this.#run.sent ??= new Set()).add(event.message);
        break;
      case 'tool_execution_start':
        state.pendingToolCalls = new Set(state.pendingToolCalls).add(event.toolCallId);
        break;
      case 'tool_execution_end': {
        const pending = new Set(state.pendingToolCalls);
        pending.delete(event.toolCallId);
        state.pendingToolCalls = pending;
        break;
      }
      case 'turn_end':
        if (event.message?.role === 'assistant' && event.message.errorMessage) state.errorMessage = event.message.errorMessage;
        break;
      case 'agent_end':
        state.streamingMessage = undefined;
        break;
      default:
        break;
    }
    const signal = this.#run?.controller.signal;
    if (!signal) throw new Error('Agent listener invoked outside active run');
    for (const listener of this.#listeners) await listener(event, signal);
    if (!this.onCheckpoint || UNTRACKED.has(event.type)) return;
    if (!this.#run.failing) {
      await this.#checkpoint(event);
      return;
    }
    // The run failed already (perhaps its checkpoint threw: storage down): its failure
    // message and agent_end are delivered whatever a checkpoint does now.
    try {
      await this.#checkpoint(event);
    } catch {
      // reported by the failure itself
    }
  }
}

const UNREADABLE = 'The run failed with a thrown value that cannot be read';


/** Whether the loop can read `value` as a message: an object with a string `role`, as JSON. */
function isMessage(value) {
  try {
    return value !== null && typeof value === 'object' && typeof value.role === 'string' && JSON.stringify(value) !== undefined;
  } catch {
    return false;
  }
}

/** An `invalid_input` error about a snapshot given to `restore`. */
function badSnapshot(what) {
  return Object.assign(new Error(`snapshot: ${what}`), { code: 'invalid_input' });
}

const LEVELS = new Set(['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
const MODES = new Set(['all', 'one-at-a-time']);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A snapshot (`agent.snapshot()`, possibly through JSON) as the constructor reads it: every
 * field checked, and a getter or Proxy trap that throws is an `invalid_input` error with what
 * it threw as `cause`. */
function readSnapshot(s) {
  try {
    return checkSnapshot(s);
  } catch (error) {
    if (error?.code === 'invalid_input') throw error;
    throw Object.assign(badSnapshot(`it cannot be read (${error instanceof Error ? error.message : String(error)})`), { cause: error });
  }
}

function checkSnapshot(s) {
  if (!isObject(s)) throw badSnapshot('not an object');
  if (s.version !== CHECKPOINT_VERSION) throw badSnapshot(`version is not ${CHECKPOINT_VERSION}`);
  const list = (key, required, item = isObject, what = 'objects') => {
    const v = s[key];
    if (v === undefined && !required) return [];
    if (!Array.isArray(v)) throw badSnapshot(`${key} is not an array`);
    const copy = v.slice();
    if (!copy.every(item)) throw badSnapshot(`${key} holds something other than ${what}`);
    return copy;
  };
  const message = (m) => isObject(m) && typeof m.role === 'string';
  const optional = (key, ok, what) => {
    const v = s[key];
    if (v !== undefined && !ok(v)) throw badSnapshot(`${key} is not ${what}`);
    return v;
  };
  return {
    messages: list('messages', true, message, 'messages'),
    model: optional('model', isObject, 'a model object'),
    thinkingLevel: optional('thinkingLevel', (v) => LEVELS.has(v), 'a thinking level'),
    steeringMode: optional('steeringMode', (v) => MODES.has(v), '"all" or "one-at-a-time"'),
    followUpMode: optional('followUpMode', (v) => MODES.has(v), '"all" or "one-at-a-time"'),
    steering: list('steering', false, message, 'messages'),
    followUps: list('followUps', false, message, 'messages'),
    position: optional('position', isObject, 'an object'),
    discardedUsage: list('discardedUsage', false),
    waiting: optional('waiting', Array.isArray, 'an array'),
  };
}

/** The initial state of a restored agent: the snapshot's transcript, model and level, with
 * the tools of `initialState` (functions are supplied again, not stored). */
function restoredState(initial, snapshot) {
  return {
    tools: initial?.tools,
    messages: snapshot.messages,
    model: snapshot.model ?? initial?.model,
    thinkingLevel: snapshot.thinkingLevel ?? initial?.thinkingLevel,
  };
}

/** `f()`, or `fallback` when a getter or Proxy trap of the caller's value throws. */
function readable(f, fallback = undefined) {
  try {
    return f();
  } catch {
    return fallback;
  }
}

/** L-145: a prompt as the loop's list of messages. */
function promptMessages(input, images) {
  if (Array.isArray(input)) return input;
  if (typeof input !== 'string') return [input];
  const content = [{ type: 'text', text: input }];
  if (images && images.length > 0) content.push(...images);
  return [{ role: 'user', content, timestamp: Date.now() }];
}
