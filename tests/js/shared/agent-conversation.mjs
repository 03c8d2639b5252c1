// Seeded conversations with an `Agent` (ours or pi-agent-core 1.6.0's): several prompts and
// continues in a row, steering and follow-ups queued at scripted moments (before a step or
// from a listener), listeners that are slow or throw, aborts, busy calls from listeners,
// resets. `runConversation(impl, conversation)` records what a caller can observe: every
// event each step's first listener saw, state reads inside listeners, the state after each
// step, the order prompt()/continue() and waitForIdle() settled in, and every stream request.
import { rng, generate, normalize, scheduler, makeStreamFn, makeTools, makeHooks, aborting, inPlaceHooks } from './scenario.mjs';

const text = (t) => ({ type: 'text', text: t });
const EVENT_TYPES = ['agent_start', 'turn_start', 'message_start', 'message_update', 'message_end', 'tool_execution_start',
  'tool_execution_end', 'turn_end', 'agent_end'];

/** A random conversation for `seed`. */
export function generateConversation(seed) {
  const r = rng(seed);
  const base = generate(seed);
  // Enough scripted responses for every run of the conversation.
  const responses = [...base.responses, ...generate(seed + 50_000).responses, ...generate(seed + 90_000).responses];
  const stepCount = 1 + r.int(3);
  const steps = [];
  for (let i = 0; i < stepCount; i++) {
    const op = i > 0 && r.chance(0.2) ? 'continue'
      : r.chance(0.06) ? 'reset-then-prompt'
        : r.pick(['string', 'string', 'string', 'message', 'array', 'images', 'continue-after-append']);
    steps.push({
      op,
      steerBefore: r.chance(0.15),
      followUpBefore: r.chance(0.15),
      setLevel: r.chance(0.1) ? r.pick(['off', 'low', 'high']) : undefined,
    });
  }
  const actions = [];
  for (let i = 0, n = r.int(4); i < n; i++) {
    actions.push({
      at: r.pick(EVENT_TYPES),
      nth: r.int(2),
      do: r.pick(['steer', 'steer', 'followUp', 'followUp', 'abort', 'promptBusy', 'continueBusy', 'resetBusy', 'read', 'clearQueues', 'peek']),
    });
  }
  const listeners = [{ slow: r.chance(0.3) }];
  if (r.chance(0.4)) listeners.push({ slow: r.chance(0.5), throwAt: r.chance(0.25) ? r.pick(EVENT_TYPES) : undefined });
  // The hooks an Agent takes that a conversation may abort in (then return, throw or reject).
  const abortable = ['before', 'after', 'finish', 'nextTurn', 'prepareRequest', 'getApiKey', 'transformContext', 'convertToLlm'];
  return {
    seed,
    tools: base.tools,
    responses,
    hooks: base.hooks,
    inPlace: base.inPlace,
    abort: { abortIn: abortable.includes(base.abortIn) ? base.abortIn : undefined, abortThen: base.abortThen },
    options: {
      systemPrompt: r.chance(0.5) ? 'You are terse.' : undefined,
      history: r.chance(0.2) ? r.pick(['system', 'exchange']) : undefined,
      thinkingLevel: r.pick([undefined, 'low', 'high']),
      steeringMode: r.pick([undefined, 'all', 'one-at-a-time']),
      followUpMode: r.pick([undefined, 'all', 'one-at-a-time']),
      toolExecution: base.toolExecution,
      defaultConvert: r.chance(0.6),
      withContext: r.chance(0.5),
    },
    steps,
    actions,
    listeners,
  };
}

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** Runs `conv` through `impl` ({ Agent, createAssistantMessageEventStream }). */
export async function runConversation(impl, conv) {
  const requests = [];
  const toolLog = [];
  const clock = scheduler();
  const responses = [...conv.responses];
  const streamFn = makeStreamFn(impl, responses, requests);
  let agent;
  // A tool that steers mid-execution steers this Agent; a hook that aborts aborts it.
  const tools = makeTools(conv.tools, toolLog, clock, (m) => agent.steer(m));
  const abort = () => agent.abort();
  const hooks = makeHooks(conv.hooks, conv.abort, abort);
  const hook = (name, fn) => aborting(conv.abort, name, fn, abort);
  const o = conv.options;
  const history = o.history === 'system'
    ? [{ role: 'system', content: 'history system', timestamp: 0 }]
    : o.history === 'exchange'
      ? [{ role: 'user', content: 'earlier', timestamp: 1 },
        { role: 'assistant', content: [text('earlier answer')], api: 'test-api', provider: 'test-provider', model: 'test-model', usage, stopReason: 'stop', timestamp: 2 }]
      : undefined;
  if (conv.hooks.nextTurn && o.withContext) {
    // Exercised through prepareNextTurnWithContext instead (L-153).
    const legacy = hooks.prepareNextTurn;
    delete hooks.prepareNextTurn;
    hooks.prepareNextTurnWithContext = async (turn, signal) => {
      record.reads.push(`withContext ${turn?.newMessages?.length ?? turn?.messages?.length ?? '?'} ${signal?.aborted}`);
      return legacy();
    };
  }
  // Which context, array and message objects each hook and event carries; and a hook that
  // changes the live context in place.
  const identity = inPlaceHooks(hooks, conv.inPlace);
  agent = new impl.Agent({
    initialState: {
      systemPrompt: o.systemPrompt,
      model: { id: 'test-model', api: 'test-api', provider: 'test-provider' },
      thinkingLevel: o.thinkingLevel,
      tools,
      messages: history,
    },
    streamFn,
    ...(o.defaultConvert ? {} : {
      convertToLlm: hook('convertToLlm', (messages) => {
        if (conv.hooks.convertThrows) throw new TypeError('convertToLlm exploded');
        return messages.filter((m) => ['system', 'user', 'assistant', 'toolResult'].includes(m.role));
      }),
    }),
    ...(conv.abort.abortIn === 'transformContext' ? { transformContext: hook('transformContext', async (messages) => messages) } : {}),
    ...(o.steeringMode ? { steeringMode: o.steeringMode } : {}),
    ...(o.followUpMode ? { followUpMode: o.followUpMode } : {}),
    ...(o.toolExecution ? { toolExecution: o.toolExecution } : {}),
    ...hooks,
    ...(conv.hooks.getApiKey !== undefined || conv.abort.abortIn === 'getApiKey' ? { getApiKey: hook('getApiKey', async () => conv.hooks.getApiKey) } : {}),
  });

  const record = { events: [], reads: [], busy: [], order: [], states: [], requests, toolLog, identities: identity.seen };
  let step = -1;
  const seen = new Map();
  const thrown = new Set();
  let queued = 0;
  const act = (event) => {
    const n = (seen.get(event.type) ?? 0) + 1;
    seen.set(event.type, n);
    for (const a of conv.actions) {
      if (a.at !== event.type || a.nth + 1 !== n) continue;
      const message = { role: 'user', content: [text(`${a.do} ${queued++}`)], timestamp: 7 };
      switch (a.do) {
        case 'steer': agent.steer(message); break;
        case 'followUp': agent.followUp(message); break;
        case 'abort': agent.abort(); break;
        case 'promptBusy': agent.prompt('busy').catch((e) => record.busy.push(`prompt: ${e.message}`)); break;
        case 'continueBusy': agent.continue().catch((e) => record.busy.push(`continue: ${e.message}`)); break;
        case 'resetBusy':
          try { agent.reset(); record.busy.push('reset: allowed'); } catch (e) { record.busy.push(`reset: ${e.message}`); }
          break;
        case 'clearQueues': agent.clearAllQueues(); break;
        case 'peek': record.reads.push(`peek ${JSON.stringify(normalize(agent.peekQueuedMessages()))} ${agent.hasQueuedMessages()}`); break;
        default: {
          const s = agent.state;
          record.reads.push(`${event.type}: streaming=${s.isStreaming} current=${s.streamingMessage?.role} messages=${s.messages.length} pending=${s.pendingToolCalls.size} error=${s.errorMessage} signal=${agent.signal?.aborted}`);
        }
      }
    }
  };
  conv.listeners.forEach((spec, li) => {
    agent.subscribe(async (event, signal) => {
      if (li === 0) {
        record.events.push({ step, event: normalize(event), aborted: signal.aborted });
        identity.event(event);
        act(event);
      }
      // Slow by a chain of microtasks: deterministic against the tool scheduler's macrotask
      // ticks (a timer-based delay would race them differently in each run).
      if (spec.slow) for (let k = 0; k < 5; k++) await Promise.resolve();
      if (spec.throwAt === event.type && !thrown.has(step)) {
        thrown.add(step);
        throw new Error(`listener failed at ${event.type}`);
      }
    });
  });

  for (const [i, s] of conv.steps.entries()) {
    step = i;
    seen.clear();
    if (s.setLevel) agent.state.thinkingLevel = s.setLevel;
    if (s.steerBefore) agent.steer({ role: 'user', content: [text(`pre-steer ${i}`)], timestamp: 8 });
    if (s.followUpBefore) agent.followUp({ role: 'user', content: [text(`pre-follow ${i}`)], timestamp: 9 });
    let run;
    try {
      switch (s.op) {
        case 'string': run = agent.prompt(`prompt ${i}`); break;
        case 'message': run = agent.prompt({ role: 'user', content: `message ${i}`, timestamp: 3 }); break;
        case 'array': run = agent.prompt([{ role: 'note', text: 'custom', timestamp: 4 }, { role: 'user', content: [text(`array ${i}`)], timestamp: 4 }]); break;
        case 'images': run = agent.prompt(`look ${i}`, [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }]); break;
        case 'reset-then-prompt': agent.reset(); run = agent.prompt(`after reset ${i}`); break;
        case 'continue-after-append':
          agent.state.messages = [...agent.state.messages, { role: 'user', content: `appended ${i}`, timestamp: 5 }];
          run = agent.continue();
          break;
        default: run = agent.continue();
      }
    } catch (e) {
      run = Promise.reject(e);
    }
    const idle = agent.waitForIdle();
    const order = record.order;
    const settled = Promise.allSettled([
      run.then(() => order.push(`${i} run resolved`), (e) => order.push(`${i} run rejected: ${e?.message ?? e}`)),
      idle.then(() => order.push(`${i} idle`)),
    ]);
    await settled;
    const st = agent.state;
    record.states.push(normalize({
      messages: st.messages,
      systemPrompt: st.systemPrompt,
      isStreaming: st.isStreaming,
      streamingMessage: st.streamingMessage ?? null,
      pending: st.pendingToolCalls.size,
      errorMessage: st.errorMessage ?? null,
      thinkingLevel: st.thinkingLevel,
      queued: agent.hasQueuedMessages(),
      peek: agent.peekQueuedMessages(),
      signal: agent.signal === undefined,
    }));
  }
  await clock.stop();
  record.busy.sort();
  return record;
}
