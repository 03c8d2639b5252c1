// Seeded loop scenarios, run unchanged through an implementation's API (ours or
// pi-agent-core 1.6.0's). A scenario is plain data; `runScenario(impl, scenario)` builds the
// stream function, tools and hooks from it and records what an observer can see: every
// event (as JSON at emit time), what each stream-function call received, and the returned
// messages or the rejection.
//
// The shapes drawn include the ones that once broke the order of events (issue 13):
// executes that throw or return synchronously in a parallel batch, onUpdate called
// synchronously and followed by a queue call, a listener that throws synchronously at an
// update, the signal aborted inside each hook which then returns, throws (an Error or a
// string) or rejects, a stream function that throws or rejects, and contexts without
// tools or with keys the loop does not read. Run more with DIFFERENTIAL_SCENARIOS=10000
// (differential.test.mjs) and AGENT_CONVERSATIONS=2000 (agent-differential.test.mjs).

/** mulberry32: a small deterministic PRNG. */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    chance: (p) => next() < p,
  };
}

const usage = { input: 2, output: 3, cacheRead: 0, cacheWrite: 0, totalTokens: 5, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const text = (t) => ({ type: 'text', text: t });

const TOOL_NAMES = ['calc', 'search', 'write', 'stop', 'flaky'];
const PARAMS = {
  calc: { type: 'object', properties: { n: { type: 'number' }, m: { type: 'integer' } }, required: ['n'] },
  // `pattern` and `patternProperties` go through the engine's RegExp with the `u` flag (one
  // compiled RegExp per pattern per run), as pi's validator does.
  search: { type: 'object', properties: { q: { type: 'string', minLength: 1, pattern: '^\\p{L}+$' } }, required: ['q'], additionalProperties: false },
  write: { type: 'object', properties: { path: { type: 'string', pattern: '^[\\w.]+$' }, lines: { type: 'array', items: { type: 'string' } } } },
  stop: { type: 'object', properties: {} },
  flaky: { type: 'object', properties: { level: { enum: ['low', 'high'] } }, patternProperties: { '^x-': { type: 'string' } } },
};
const ARGS = {
  calc: [{ n: 2 }, { n: '41', m: '3.7' }, { m: 1 }, { n: 'x' }],
  search: [{ q: 'cats' }, { q: '' }, { q: 'a', extra: 1 }, {}, { q: 'Çats' }, { q: 'c4ts' }],
  write: [{ path: 'a.txt', lines: 'one' }, { path: 'b', lines: ['x', 2] }, {}, { path: 'a b' }],
  stop: [{}],
  flaky: [{ level: 'low' }, { level: 'mid' }, {}, { level: 'high', 'x-note': 5 }, { 'x-a': 'ok' }],
};

/** A random scenario for `seed`. */
/** The shapes a result object is drawn in besides a plain one (see `shaped`). */
const SHAPES = ['getters', 'proto', 'proxy'];

/**
 * `value` (a result object: a tool's, `beforeToolCall`'s, `afterToolCall`'s) in `shape`: a
 * class-like object whose fields are getters on its prototype, an object whose fields sit on
 * its prototype, or a Proxy that has them only in its `get` trap. pi reads each field as
 * `value.field`, so each is the same result to it; JSON sees none of the fields.
 */
export function shaped(shape, value) {
  if (!shape || value === null || typeof value !== 'object') return value;
  if (shape === 'proto') return Object.create(value);
  if (shape === 'proxy') return new Proxy({}, { get: (_, key) => value[key] });
  const proto = {};
  for (const key of Object.keys(value)) Object.defineProperty(proto, key, { get: () => value[key] });
  return Object.create(proto);
}

export function generate(seed) {
  const r = rng(seed);
  const toolNames = TOOL_NAMES.filter(() => r.chance(0.6));
  const tools = toolNames.map((name) => ({
    name,
    mode: r.chance(0.15) ? 'sequential' : r.chance(0.1) ? 'parallel' : undefined,
    // Tools settle in the order of this rank (see `scheduler`), not of an implementation's
    // microtask count.
    delay: r.pick([1, 3, 6]),
    behavior: name === 'stop' ? 'terminate' : r.pick(['echo', 'echo', 'throw', 'throwString', 'isError', 'updates', 'noContent', 'rejectUndefined',
      'syncThrow', 'syncValue', 'updateThenQueue', 'catchUpdate']),
    prepare: name === 'write' && r.chance(0.3),
    shape: r.chance(0.25) ? r.pick(SHAPES) : undefined,
  }));
  const responses = [];
  const nResponses = 1 + r.int(4);
  for (let i = 0; i < nResponses; i++) {
    const content = [];
    if (r.chance(0.3)) content.push({ type: 'thinking', thinking: `think ${i}`, thinkingSignature: 'sig' });
    if (r.chance(0.7)) content.push(text(`answer ${i}`));
    const nCalls = r.chance(0.6) ? 1 + r.int(3) : 0;
    for (let c = 0; c < nCalls; c++) {
      const name = r.chance(0.85) && toolNames.length > 0 ? r.pick(toolNames) : r.pick(TOOL_NAMES.concat(['ghost']));
      const args = name === 'ghost' ? {} : r.pick(ARGS[name]);
      const call = { type: 'toolCall', id: `call_${i}_${c}`, name, arguments: structuredClone(args) };
      if (r.chance(0.05)) call.argumentsError = 'Unexpected end of JSON input';
      content.push(call);
    }
    const stopReason = r.chance(0.06) ? 'length' : r.chance(0.06) ? 'error' : nCalls > 0 ? 'toolUse' : 'stop';
    // Like pi-ai's providers, a live partial may be one object mutated into the final message.
    // Now and then a final message pi's tool-call scan throws on (L-49): content that is no
    // array, or a null block.
    const malformed = r.chance(0.03) ? r.pick(['string', 'nullBlock', 'none']) : undefined;
    responses.push({ content, stopReason, start: r.chance(0.9), live: r.chance(0.4), malformed });
  }
  const queue = () => (r.chance(0.3) ? [[], [{ role: 'user', content: [text('queued')], timestamp: 5 }]] : undefined);
  return {
    seed,
    prompts: [
      ...(r.chance(0.15) ? [{ role: 'note', text: 'custom', timestamp: 2 }] : []),
      { role: 'user', content: r.chance(0.5) ? 'hello' : [text('hello')], timestamp: 1 },
    ],
    context: r.chance(0.2) ? [{ role: 'system', content: 'be brief', timestamp: 0 }] : [],
    tools,
    responses,
    toolExecution: r.chance(0.25) ? 'sequential' : undefined,
    reasoning: r.pick([undefined, undefined, 'low', 'high']),
    apiKey: r.chance(0.3) ? 'static-key' : undefined,
    hooks: {
      getApiKey: r.chance(0.2) ? r.pick(['dynamic', '']) : undefined,
      transformContext: r.chance(0.15),
      before: r.chance(0.3) ? r.pick(['blockSearch', 'blockAllTerminate', 'mutateArgs', 'throw']) : undefined,
      after: r.chance(0.3) ? r.pick(['replaceContent', 'flipError', 'throw', 'undefined']) : undefined,
      finish: r.chance(0.25) ? r.pick(['continueOnce', 'endAfterTools', 'junk', 'throw']) : undefined,
      convertThrows: r.chance(0.03),
      nextTurn: r.chance(0.15) ? r.pick(['inject', 'level', 'nothing']) : undefined,
      prepareRequest: r.chance(0.15) ? r.pick(['off', 'nothing']) : undefined,
      steering: queue(),
      followUps: queue(),
      shape: r.chance(0.25) ? r.pick(SHAPES) : undefined,
    },
    abortAt: r.chance(0.12) ? r.pick(['tool_execution_start', 'message_end', 'turn_start']) : undefined,
    throwAt: r.chance(0.05) ? r.pick(['turn_start', 'message_update', 'tool_execution_end', 'turn_end', 'agent_end']) : undefined,
    continueRun: r.chance(0.1),
    // Drawn last, so the draws above are what they were for each seed.
    // The signal aborts inside one hook, which then returns, throws or rejects.
    abortIn: r.chance(0.2) ? r.pick(['before', 'after', 'finish', 'nextTurn', 'prepareRequest', 'transformContext', 'getApiKey',
      'convertToLlm', 'getSteeringMessages', 'getFollowUpMessages']) : undefined,
    abortThen: r.pick(['return', 'throw', 'reject', 'throwString', 'rejectUndefined']),
    // Optional context fields absent, undefined, or joined by keys the loop does not read.
    contextShape: r.chance(0.25) ? r.pick(['noTools', 'toolsUndefined', 'extraKeys']) : undefined,
    // A listener that throws synchronously at a tool update (the throw reaches the tool).
    updateThrows: r.chance(0.05),
    // The stream function fails on its n-th call: a synchronous throw or a rejected Promise.
    streamFails: r.chance(0.05) ? { nth: r.int(3), how: r.pick(['throw', 'reject', 'throwString']) } : undefined,
    // A hook that changes the live context in place (pi's `currentContext`): the change stays
    // for later requests.
    inPlace: r.chance(0.25) ? r.pick(['requestPush', 'nextTurnPush', 'beforePush', 'afterSplice', 'finishSplice', 'finishReplace', 'transformPush']) : undefined,
  };
}

const clone = (v) => JSON.parse(JSON.stringify(v));

/** Loop-made timestamps and durations vary between runs; inputs use small ones. */
export function normalize(v) {
  if (v === undefined) return undefined;
  return JSON.parse(JSON.stringify(v), (k, x) => {
    if (k === 'timestamp' && typeof x === 'number' && x > 1e12) return 'NOW';
    if (k === 'durationMs' && typeof x === 'number') return 'DURATION';
    return x;
  });
}

function assistant(spec, stopReason) {
  return {
    role: 'assistant', content: clone(spec.content), api: 'test-api', provider: 'test-provider', model: 'test-model',
    usage, stopReason, ...(stopReason === 'error' ? { errorMessage: 'provider failed' } : {}),
    ...(stopReason === 'aborted' ? { errorMessage: 'Request was aborted' } : {}), timestamp: Date.now(),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Releases waiting tools one per macrotask, lowest rank first (then first come): all tools
 * of a parallel batch start in one macrotask in both implementations, and every microtask
 * a completion causes has run before the next release, so completion order is the same in
 * both whatever their microtask counts.
 */
export function scheduler() {
  const waiting = [];
  let seq = 0;
  let running = true;
  (async () => {
    while (running) {
      await sleep(0);
      if (waiting.length === 0) continue;
      waiting.sort((a, b) => a.rank - b.rank || a.seq - b.seq);
      waiting.shift().resolve();
    }
  })();
  return {
    wait: (rank) => new Promise((resolve) => waiting.push({ rank, seq: seq++, resolve })),
    stop: async () => {
      // Tools still waiting after a rejected run finish before the next scenario starts.
      while (waiting.length > 0) {
        waiting.shift().resolve();
        await sleep(0);
      }
      running = false;
    },
  };
}

/**
 * A scripted stream function over `impl.createAssistantMessageEventStream`: each call
 * answers with the next of `responses` (then a plain "done"), streaming its blocks as a
 * provider would, and records what it received in `requests`.
 */
export function makeStreamFn(impl, responses, requests) {
  return (model, context, options) => {
    requests.push({
      messages: normalize(context.messages),
      keys: Object.keys(context),
      apiKey: options.apiKey,
      reasoning: options.reasoning,
      identity: options.identity,
      model: model.id,
    });
    const stream = impl.createAssistantMessageEventStream();
    const spec = responses.shift() ?? { content: [text('done')], stopReason: 'stop', start: true };
    const stopReason = options.signal?.aborted ? 'aborted' : spec.stopReason;
    const final = assistant(stopReason === 'aborted' ? { content: [] } : spec, stopReason);
    (async () => {
      await Promise.resolve();
      const partial = { ...clone(final), content: [], stopReason: 'pending' };
      const snap = spec.live ? () => partial : () => clone(partial);
      // Each step changes the partial and pushes an event. A live response runs one step per
      // macrotask, so the consumer reads the shared partial before it changes again (as with
      // a network stream); the others run all at once.
      const steps = [];
      if (spec.start) steps.push(() => stream.push({ type: 'start', partial: snap() }));
      final.content.forEach((block, i) => {
        if (block.type === 'text' || block.type === 'thinking') {
          const key = block.type;
          steps.push(() => {
            partial.content.push({ ...block, [key]: '' });
            stream.push({ type: `${key}_start`, contentIndex: i, partial: snap() });
          });
          for (const piece of block[key].split(' ')) {
            steps.push(() => {
              partial.content[i][key] += piece;
              stream.push({ type: `${key}_delta`, contentIndex: i, delta: piece, partial: snap() });
            });
          }
          steps.push(() => {
            partial.content[i][key] = block[key];
            stream.push({ type: `${key}_end`, contentIndex: i, content: block[key], partial: snap() });
          });
        } else if (block.type === 'toolCall') {
          steps.push(() => {
            partial.content.push(clone(block));
            stream.push({ type: 'toolcall_start', contentIndex: i, partial: snap() });
          });
          steps.push(() => stream.push({ type: 'toolcall_end', contentIndex: i, toolCall: clone(block), partial: snap() }));
        }
      });
      steps.push(() => {
        const message = spec.live ? Object.assign(partial, { ...final, content: partial.content }) : final;
        if (spec.malformed === 'string') message.content = 'malformed';
        if (spec.malformed === 'nullBlock') message.content = [null, ...message.content];
        if (spec.malformed === 'none') delete message.content;
        if (stopReason === 'error' || stopReason === 'aborted') stream.push({ type: 'error', reason: stopReason, error: message });
        else stream.push({ type: 'done', reason: stopReason, message });
      });
      for (const step of steps) {
        if (spec.live) await new Promise((r) => setImmediate(r));
        step();
      }
    })();
    return stream;
  };
}

/**
 * The scenario's tools from their specs; executions are logged and released by `clock`.
 * `queue(message)` is what a tool calls to steer mid-execution (the Agent's `steer`, or a
 * push onto the loop's steering source).
 */
export function makeTools(specs, log, clock, queue = () => {}) {
  return specs.map((t) => ({
    name: t.name,
    label: t.name,
    description: `the ${t.name} tool`,
    parameters: PARAMS[t.name],
    ...(t.mode ? { executionMode: t.mode } : {}),
    ...(t.prepare ? { prepareArguments: (raw) => (raw && typeof raw.lines === 'string' ? { ...raw, lines: [raw.lines] } : raw) } : {}),
    execute: (id, args, signal, onUpdate) => {
      // Synchronous shapes first: a plain function that throws or returns at once.
      if (t.behavior === 'syncThrow') {
        log.push(`execute ${id}`);
        throw new Error(`${t.name} failed synchronously`);
      }
      if (t.behavior === 'syncValue') {
        log.push(`execute ${id}`);
        return shaped(t.shape, { content: [text(`at once ${JSON.stringify(args)}`)], details: {} });
      }
      return runTool(t, id, args, onUpdate, log, clock, queue).then((result) => shaped(t.shape, result));
    },
  }));
}

async function runTool(t, id, args, onUpdate, log, clock, queue) {
  log.push(`execute ${id}`);
  if (t.behavior === 'updateThenQueue') {
    // An update, then a queue call, before the tool's first await.
    onUpdate({ content: [text('halfway')], details: {} });
    log.push(`after update ${id}`);
    queue({ role: 'user', content: [text(`steered by ${id}`)], timestamp: 5 });
  }
  if (t.behavior === 'catchUpdate') {
    try {
      onUpdate({ content: [text('maybe')], details: {} });
    } catch (e) {
      log.push(`update threw in ${id}: ${e?.message}`);
    }
  }
  if (t.behavior === 'updates') onUpdate({ content: [text('25%')], details: {} });
  await clock.wait(t.delay);
  switch (t.behavior) {
    case 'throw': throw new Error(`${t.name} failed`);
    case 'throwString': throw `${t.name} threw a string`;
    case 'rejectUndefined': return Promise.reject(undefined);
    case 'isError': return { content: [text('soft failure')], details: { code: 7 }, isError: true };
    case 'noContent': return { details: { only: 'details' } };
    case 'terminate': return { content: [text('stopping')], details: {}, terminate: true };
    case 'updates':
      onUpdate({ content: [text('75%')], details: {} });
      return { content: [text(`done ${JSON.stringify(args)}`)], details: {} };
    default: return { content: [text(JSON.stringify(args))], details: { id } };
  }
}

/**
 * `fn` as the hook `name`, unless the scenario aborts in it: then its first call aborts
 * through `abort()` and returns what `fn` returns, throws synchronously, or rejects.
 */
export function aborting(scenario, name, fn, abort) {
  if (scenario.abortIn !== name) return fn;
  let done = false;
  return (...args) => {
    if (done) return fn(...args);
    done = true;
    abort();
    if (scenario.abortThen === 'throw') throw new Error(`${name} failed after abort`);
    if (scenario.abortThen === 'reject') return Promise.reject(new Error(`${name} rejected after abort`));
    if (scenario.abortThen === 'throwString') throw `${name} threw a string after abort`;
    if (scenario.abortThen === 'rejectUndefined') return Promise.reject(undefined);
    return fn(...args);
  };
}

const HOOK_NAMES = { before: 'beforeToolCall', after: 'afterToolCall', finish: 'finishTurn', nextTurn: 'prepareNextTurn', prepareRequest: 'prepareRequest' };

/** The scenario's tool and turn hooks (`before`, `after`, `finish`, `nextTurn`,
 * `prepareRequest`), each with its own state; with `scenario`, the one it aborts in. */
export function makeHooks(h, scenario = {}, abort = () => {}) {
  const config = makeHookFunctions(h);
  for (const [key, name] of Object.entries(HOOK_NAMES)) {
    if (scenario.abortIn !== key) continue;
    config[name] = aborting(scenario, key, config[name] ?? (async () => undefined), abort);
  }
  return config;
}

function makeHookFunctions(h) {
  const config = {};
  let turns = 0;
  let continued = false;
  if (h.before) {
    config.beforeToolCall = async ({ toolCall, args }) => {
      if (h.before === 'throw' && toolCall.name === 'calc') throw new Error('before hook failed');
      if (h.before === 'blockSearch' && toolCall.name === 'search') return shaped(h.shape, { block: true, reason: 'search is disabled' });
      if (h.before === 'blockAllTerminate') return shaped(h.shape, { block: true, terminate: true });
      if (h.before === 'mutateArgs' && args && typeof args === 'object') args.injected = true;
      return undefined;
    };
  }
  if (h.after) {
    config.afterToolCall = async ({ toolCall, isError }) => {
      if (h.after === 'throw' && toolCall.name === 'search') throw new Error('after hook failed');
      if (h.after === 'replaceContent') return shaped(h.shape, { content: [text('replaced')] });
      if (h.after === 'flipError') return shaped(h.shape, { isError: !isError });
      return undefined;
    };
  }
  if (h.finish) {
    config.finishTurn = async (turn) => {
      turns += 1;
      if (h.finish === 'continueOnce' && !continued) {
        continued = true;
        return { action: 'continue' };
      }
      if (h.finish === 'endAfterTools' && turn.toolResults.length > 0) return { action: 'end' };
      if (h.finish === 'junk') return { action: 'explode' };
      if (h.finish === 'throw' && turns > 1) throw new Error('finishTurn failed');
      return undefined;
    };
  }
  if (h.nextTurn) {
    config.prepareNextTurn = async () => {
      if (h.nextTurn === 'inject') return { messages: [{ role: 'user', content: [text('prepared')], timestamp: 6 }] };
      if (h.nextTurn === 'level') return { thinkingLevel: 'off' };
      return undefined;
    };
  }
  if (h.prepareRequest) {
    config.prepareRequest = async () => (h.prepareRequest === 'off' ? { thinkingLevel: 'off' } : undefined);
  }
  return config;
}

/**
 * Runs `scenario` through `impl` ({ runAgentLoop, runAgentLoopContinue,
 * createAssistantMessageEventStream }). Resolves with the observable record.
 */
export async function runScenario(impl, scenario) {
  const events = [];
  const requests = [];
  const log = [];
  const responses = [...scenario.responses];
  const controller = new AbortController();
  const steering = scenario.hooks.steering ? clone(scenario.hooks.steering) : undefined;
  const followUps = scenario.hooks.followUps ? clone(scenario.hooks.followUps) : undefined;
  const clock = scheduler();

  const scripted = makeStreamFn(impl, responses, requests);
  let streamCalls = 0;
  const fails = scenario.streamFails;
  const streamFn = (...args) => {
    if (fails && streamCalls++ === fails.nth) {
      if (fails.how === 'throw') throw new Error('stream function threw');
      if (fails.how === 'throwString') throw 'stream function threw a string';
      return Promise.reject(new Error('stream function rejected'));
    }
    return scripted(...args);
  };

  // Messages a tool steers with mid-execution join the next steering poll.
  const steered = [];
  const tools = makeTools(scenario.tools, log, clock, (m) => steered.push(m));

  const h = scenario.hooks;
  const abort = () => controller.abort();
  const hook = (name, fn) => aborting(scenario, name, fn, abort);
  const pollSteering = steering || scenario.tools.some((t) => t.behavior === 'updateThenQueue');
  const config = {
    model: { id: 'test-model', api: 'test-api', provider: 'test-provider' },
    convertToLlm: hook('convertToLlm', (messages) => {
      if (h.convertThrows) throw new TypeError('convertToLlm exploded');
      return messages.filter((m) => ['system', 'user', 'assistant', 'toolResult'].includes(m.role));
    }),
    ...(scenario.toolExecution ? { toolExecution: scenario.toolExecution } : {}),
    ...(scenario.reasoning ? { reasoning: scenario.reasoning } : {}),
    ...(scenario.apiKey ? { apiKey: scenario.apiKey } : {}),
    ...(h.getApiKey !== undefined || scenario.abortIn === 'getApiKey' ? { getApiKey: hook('getApiKey', async () => h.getApiKey) } : {}),
    ...(h.transformContext || scenario.abortIn === 'transformContext'
      ? { transformContext: hook('transformContext', async (messages) => messages.filter((m) => m.role !== 'system' || m.toolsAdded)) } : {}),
    ...(pollSteering || scenario.abortIn === 'getSteeringMessages'
      ? { getSteeringMessages: hook('getSteeringMessages', async () => [...(steering?.shift() ?? []), ...steered.splice(0)]) } : {}),
    ...(followUps || scenario.abortIn === 'getFollowUpMessages' ? { getFollowUpMessages: hook('getFollowUpMessages', async () => followUps?.shift() ?? []) } : {}),
  };
  Object.assign(config, makeHooks(h, scenario, abort));
  const identity = inPlaceHooks(config, scenario.inPlace);

  let aborted = false;
  const emit = (event) => {
    events.push(normalize(event));
    identity.event(event);
    // Synchronously: the throw reaches the tool that called onUpdate (L-106).
    if (scenario.updateThrows && event.type === 'tool_execution_update') throw new Error('listener refused the update');
    return emitLater(event);
  };
  const emitLater = async (event) => {
    if (scenario.throwAt === event.type) throw new Error(`listener failed at ${event.type}`);
    if (!aborted && scenario.abortAt === event.type) {
      aborted = true;
      controller.abort();
    }
  };

  const context = { messages: clone(scenario.context), tools };
  if (scenario.contextShape === 'noTools') delete context.tools;
  if (scenario.contextShape === 'toolsUndefined') context.tools = undefined;
  if (scenario.contextShape === 'extraKeys') Object.assign(context, { systemPrompt: 'ignored by the loop', sessionTag: { id: 7 } });
  let outcome;
  try {
    const messages = scenario.continueRun
      ? await impl.runAgentLoopContinue({ ...context, messages: [...context.messages, ...clone(scenario.prompts)] }, config, emit, controller.signal, streamFn)
      : await impl.runAgentLoop(clone(scenario.prompts), context, config, emit, controller.signal, streamFn);
    outcome = { messages: normalize(messages) };
  } catch (error) {
    outcome = { rejected: error instanceof Error ? error.message : String(error) };
  }
  const settled = events.length;
  const identities = identity.seen.slice();
  await clock.stop();
  // Events emitted after the run settled (pi: still-running parallel tools of a rejected
  // run, L-175) are reported apart.
  return { events: events.slice(0, settled), late: events.slice(settled), requests, outcome, log, identities };
}

/**
 * Wraps the hooks of `config` that get the context so that each records which context object
 * and which `messages` array it got (by first sighting), and, for `inPlace`, changes the
 * context in place. Also records, for each event, which message objects it carries (the
 * identities a listener sees). Returns `{ seen, event }`.
 */
export function inPlaceHooks(config, inPlace) {
  const objects = [];
  const seen = [];
  const id = (o) => {
    if (o === null || typeof o !== 'object') return -1;
    let i = objects.indexOf(o);
    if (i === -1) i = objects.push(o) - 1;
    return i;
  };
  const note = (timestamp) => ({ role: 'user', content: [text(`in place ${timestamp}`)], timestamp });
  let changes = 0;
  const change = (context, what) => {
    if (inPlace !== what || changes >= 2 || !Array.isArray(context?.messages)) return;
    changes += 1;
    if (what.endsWith('Push')) context.messages.push(note(7 + changes));
    else if (what === 'finishReplace') context.messages = [...context.messages.slice(-2)];
    else context.messages.splice(0, 1);
  };
  const wrap = (name, contextOf, what) => {
    const inner = config[name];
    if (inner === undefined && inPlace !== what) return;
    config[name] = function (...args) {
      const context = contextOf(args);
      seen.push(`${name}:${id(context)}:${id(context?.messages)}`);
      // A tool hook's `toolCall` is the response's block itself, its `args` the validated copy.
      if (name.endsWith('ToolCall')) seen.push(`${name}:toolCall ${id(args[0]?.toolCall)}:args ${id(args[0]?.args)}`);
      change(context, what);
      return inner === undefined ? undefined : inner.apply(this, args);
    };
  };
  wrap('prepareRequest', ([r]) => r.context, 'requestPush');
  wrap('prepareNextTurn', ([t]) => t.context, 'nextTurnPush');
  wrap('beforeToolCall', ([c]) => c.context, 'beforePush');
  wrap('afterToolCall', ([c]) => c.context, 'afterSplice');
  wrap('finishTurn', ([t]) => t.context, inPlace === 'finishReplace' ? 'finishReplace' : 'finishSplice');
  if (config.transformContext !== undefined || inPlace === 'transformPush') {
    const inner = config.transformContext;
    config.transformContext = function (messages, signal) {
      seen.push(`transformContext:-:${id(messages)}`);
      if (inPlace === 'transformPush' && changes < 2) {
        changes += 1;
        messages.push(note(7 + changes));
      }
      return inner === undefined ? messages : inner.call(this, messages, signal);
    };
  }
  const event = (e) => {
    const carried = [e.message, ...(e.messages ?? []), ...(e.toolResults ?? []), e.result, e.args].filter((o) => o !== undefined);
    if (carried.length > 0) seen.push(`${e.type}:${carried.map(id).join(',')}`);
    // An answer's tool call blocks and their arguments: the objects pi's tool events and hooks
    // then carry (a message whose reads throw is left as it is).
    if (e.type === 'message_end' && e.message?.role === 'assistant') {
      try {
        const blocks = Array.isArray(e.message.content) ? e.message.content.filter((b) => b?.type === 'toolCall') : [];
        if (blocks.length > 0) seen.push(`calls:${blocks.map((b) => `${id(b)}/${id(b.arguments)}`).join(',')}`);
      } catch {
        // (as said)
      }
    }
  };
  return { seen, event };
}
