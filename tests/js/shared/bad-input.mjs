// Seeded bad input for every public entry point (tests/js/bad-input.test.mjs): wrong types,
// Proxies (revoked, or with a throwing trap), throwing getters, deep and huge values,
// cycles, BigInt, hostile thenables, broken iterators, cut and garbled event streams,
// re-entrant calls and aborts from hooks and listeners.
//
// A case is planned from its seed first: every random choice is made then, and the plan
// holds factories. Running a plan calls the factories, so each run (ours, then pi's) gets
// fresh values built the same way, and a case is the same whatever the run does.
import { rng } from './scenario.mjs';

const USAGE = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const text = (t) => ({ type: 'text', text: t });

/** A value that is thrown or returned somewhere, made by `make()`; `tags` say what it is. */
const v = (make, ...tags) => ({ make, tags });

function revoked(target) {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

const TRAPS = ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'set', 'defineProperty', 'apply'];

/** A Proxy of `target` whose `trap` throws (for `key` only, when given). */
function trapping(target, trap, key) {
  return new Proxy(target, {
    [trap](...args) {
      if (key === undefined || args[1] === key) throw new Error(`${trap} trap of ${String(key ?? 'any key')}`);
      return Reflect[trap](...args);
    },
  });
}

/** A copy of `value` (array or object) whose `key` is a getter that throws. */
function withGetter(value, key) {
  // An array's `length` cannot become a getter: a Proxy stands in.
  if (Array.isArray(value) && key === 'length') return trapping([...value], 'get', 'length');
  const copy = Array.isArray(value) ? [...value] : { ...value };
  Object.defineProperty(copy, key, { get() { throw new Error(`getter ${String(key)}`); }, enumerable: true, configurable: true });
  return copy;
}

function deep(depth, leaf) {
  let x = leaf;
  for (let i = 0; i < depth; i++) x = i % 2 ? [x] : { d: x };
  return x;
}

function cyclic() {
  const o = { a: 1 };
  o.self = o;
  return o;
}

/** Thrown values of every kind, some of which cannot be printed. */
function thrownValue(r) {
  return r.pick([
    v(() => new Error('plain error')),
    v(() => 'a string'),
    v(() => undefined),
    v(() => null),
    v(() => 42),
    v(() => 10n),
    v(() => Symbol('thrown')),
    v(() => ({ message: 'not an Error' })),
    v(() => revoked({}), 'unprintable'),
    v(() => revoked(new Error('revoked error')), 'unprintable'),
    v(() => trapping(new Error('trapped'), 'get'), 'unprintable'),
    v(() => withGetter(new Error('getter message'), 'message')),
    v(() => Object.assign(new Error('with cause'), { cause: revoked({}) })),
  ]);
}

/**
 * A hostile stand-in for the good value `good()`: a wrong type, a Proxy or getter around
 * the good value, or a deep, huge or cyclic variant. `keys` are the keys worth trapping.
 */
export function hostile(r, good, keys = []) {
  const key = keys.length > 0 && r.chance(0.8) ? r.pick(keys) : undefined;
  const kinds = [
    () => r.pick([
      v(() => undefined, 'type'), v(() => null, 'type'), v(() => 0, 'type'), v(() => NaN, 'type'), v(() => '', 'type'),
      v(() => 'text', 'type'), v(() => true, 'type'), v(() => 10n, 'type'), v(() => Symbol('s'), 'type'),
      v(() => () => {}, 'type'), v(() => [], 'type'), v(() => [null, 1], 'type'), v(() => ({}), 'type'),
      v(() => new Date(0), 'type'), v(() => new Map(), 'type'), v(() => Object.create(null), 'type'),
    ]),
    () => v(() => revoked(good()), 'proxy'),
    () => {
      const trap = r.pick(TRAPS);
      return v(() => trapping(good(), trap, trap === 'get' || trap === 'has' || trap === 'getOwnPropertyDescriptor' ? key : undefined), 'proxy', `trap-${trap}`);
    },
    () => (key === undefined ? v(() => revoked(good()), 'proxy') : v(() => withGetter(good(), key), 'getter')),
    () => {
      const depth = r.pick([50, 500, 5000]);
      // Past the nesting limit (1,100) ours names the limit where pi overflows its stack.
      return v(() => (key === undefined ? deep(depth, good()) : { ...good(), [key]: deep(depth, 1) }), depth > 1100 ? 'deep' : 'nested');
    },
    () => v(() => (key === undefined ? cyclic() : { ...good(), [key]: cyclic() }), 'cycle'),
    () => v(() => (key === undefined ? 10n : { ...good(), [key]: 10n }), 'bigint'),
    () => {
      const n = r.pick([1e5, 3e6]);
      return v(() => (key === undefined ? 'x'.repeat(n) : { ...good(), [key]: 'x'.repeat(n) }), 'huge');
    },
    () => v(() => (key === undefined ? '\ud83d' : { ...good(), [key]: 'half \ud83d' }), 'surrogate'),
  ];
  const value = r.pick(kinds)();
  if (key !== undefined) value.tags.push(`key-${String(key)}`);
  return value;
}

/** How a function (hook, tool, listener) answers: its value `value` plainly, from a Promise,
 * from a thenable, by throwing, or by a rejection; or after aborting the run, or after a
 * nested run of its own (`ctx` gives `abort` and `nested`). */
function answer(r, value) {
  const how = r.pick(['return', 'return', 'promise', 'thenable', 'throw', 'reject', 'badThen', 'ownThen', 'abort', 'reenter']);
  const thrown = thrownValue(r);
  return {
    tags: [...value.tags, ...(how === 'throw' || how === 'reject' ? thrown.tags.map((t) => `thrown-${t}`) : []), ...(how === 'abort' ? ['abort'] : [])],
    call(ctx) {
      switch (how) {
        case 'promise': return Promise.resolve().then(() => value.make());
        case 'thenable': return { then: (resolve) => resolve(value.make()) };
        case 'throw': throw thrown.make();
        case 'reject': return Promise.reject(thrown.make());
        case 'badThen': return { get then() { throw new Error('then getter'); } };
        case 'ownThen': return Object.assign(Promise.resolve(value.make()), { then() { throw new Error('own then'); } });
        case 'abort': ctx?.abort?.(); return value.make();
        case 'reenter': return Promise.resolve(ctx?.nested?.()).then(() => value.make());
        default: return value.make();
      }
    },
  };
}

// --- Good values ---

export const model = () => ({ id: 'm', name: 'm', api: 'test-api', provider: 'test-provider', baseUrl: '', reasoning: false, input: ['text'], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 });
export const userMessage = () => ({ role: 'user', content: [text('hi')], timestamp: 1 });
const toolCall = (id = 'call_1', args = { x: 1 }) => ({ type: 'toolCall', id, name: 'echo', arguments: args });
export const assistantMessage = (content, stopReason = 'stop') => ({ role: 'assistant', content, api: 'test-api', provider: 'test-provider', model: 'm', usage: USAGE, stopReason, timestamp: 1 });
const toolResult = () => ({ content: [text('ok')], details: {} });

function echoTool(over = {}) {
  return {
    name: 'echo', label: 'echo', description: 'echoes', parameters: { type: 'object', properties: { x: { type: 'number' } } },
    execute: async (_id, args) => ({ content: [text(`echo ${JSON.stringify(args)}`)], details: {} }),
    ...over,
  };
}

/** The responses of a scripted model: a tool call (sometimes two), then an answer. */
function script(r) {
  const calls = r.chance(0.7) ? [toolCall('call_1'), ...(r.chance(0.3) ? [toolCall('call_2', { x: 2 })] : [])] : [];
  return [calls.length > 0 ? assistantMessage([text('calling'), ...calls], 'toolUse') : assistantMessage([text('hello')]), assistantMessage([text('done')])];
}

/** Events for a final message, as a provider streams them. */
function eventsOf(final) {
  const partial = { ...final, content: [], stopReason: 'pending' };
  const events = [{ type: 'start', partial: { ...partial } }];
  final.content.forEach((block, i) => {
    partial.content = [...partial.content, block];
    if (block.type === 'toolCall') {
      events.push({ type: 'toolcall_start', contentIndex: i, partial: { ...partial } });
      events.push({ type: 'toolcall_end', contentIndex: i, toolCall: block, partial: { ...partial } });
    } else {
      events.push({ type: 'text_start', contentIndex: i, partial: { ...partial } });
      events.push({ type: 'text_delta', contentIndex: i, delta: block.text, partial: { ...partial } });
      events.push({ type: 'text_end', contentIndex: i, content: block.text, partial: { ...partial } });
    }
  });
  events.push(final.stopReason === 'error' ? { type: 'error', reason: 'error', error: final } : { type: 'done', reason: final.stopReason, message: final });
  return events;
}

/** A hostile change to a response stream (the stream function's business). */
function streamFault(r) {
  const thrown = thrownValue(r);
  const bad = hostile(r, () => ({ type: 'text_delta', contentIndex: 0, delta: 'x' }), ['type', 'partial', 'delta']);
  const at = r.int(6);
  const returned = hostile(r, () => ({}), [Symbol.asyncIterator]);
  const partial = hostile(r, () => assistantMessage([]), ['content', 'role']);
  const result = hostile(r, () => assistantMessage([text('x')]), ['content', 'role', 'stopReason']);
  const args = r.pick([v(() => ({ x: 10n }), 'bigint'), v(() => cyclic(), 'cycle'), v(() => withGetter({ x: 1 }, 'x'), 'getter'), v(() => revoked({}), 'proxy'), v(() => deep(r.pick([50, 5000]), 1), 'deep')]);
  const faults = [
    { tags: ['control', ...returned.tags], kind: 'notAFunction', value: returned },
    { tags: ['control', ...thrown.tags.map((t) => `thrown-${t}`)], kind: 'throwsSync' },
    { tags: ['control', ...thrown.tags.map((t) => `thrown-${t}`)], kind: 'rejects' },
    { tags: ['control', ...returned.tags], kind: 'returns', value: returned },
    { tags: ['control'], kind: 'iteratorThrows' },
    { tags: ['control'], kind: 'nonObjectStep', value: r.pick([42, null, undefined, 'step', true]) },
    { tags: ['control'], kind: 'stepGetter', key: r.pick(['done', 'value']) },
    { tags: ['control', ...bad.tags], kind: 'badEvent', value: bad },
    { tags: ['control', ...partial.tags], kind: 'badPartial', value: partial },
    // pi waits forever for these (L-15, L-170): the differential does not run pi on them.
    { tags: ['control', 'pi-hangs'], kind: 'cut' },
    { tags: ['control', 'pi-hangs'], kind: 'endWithoutResult' },
    { tags: ['control'], kind: 'garbled' },
    { tags: ['control'], kind: 'resultThrows' },
    { tags: ['data', ...result.tags], kind: 'badResult', value: result },
    { tags: ['args', ...args.tags], kind: 'badArgs', value: args },
  ];
  return { ...r.pick(faults), thrown, at };
}

/** What a stream function throws when a run asks for more responses than any case needs:
 * a run that would go on forever (pi does on some bad input) ends instead of eating memory. */
export const RUNAWAY = 'runaway run: more than 40 requests';

/**
 * A stream function for `impl` answering with `responses` (then "done"), with `fault`
 * applied to the response number `fault.response`.
 */
function streamFunction(impl, responses, fault) {
  let calls = 0;
  const queue = responses.map((m) => () => structuredClone(m));
  return (_model, _context, options) => {
    const n = calls++;
    if (n > 40) throw new Error(RUNAWAY);
    const final = (queue.shift() ?? (() => assistantMessage([text('done')])))();
    if (options?.signal?.aborted) Object.assign(final, { stopReason: 'aborted', errorMessage: 'aborted', content: [] });
    const f = fault && fault.response === n ? fault : undefined;
    if (f?.kind === 'throwsSync') throw f.thrown.make();
    if (f?.kind === 'rejects') return Promise.reject(f.thrown.make());
    if (f?.kind === 'returns') return f.value.make();
    if (f?.kind === 'badArgs' && final.content.some((b) => b.type === 'toolCall')) {
      final.content = final.content.map((b) => (b.type === 'toolCall' ? { ...b, arguments: f.value.make() } : b));
    }
    let events = eventsOf(final);
    if (f?.kind === 'badEvent') events.splice(Math.min(f.at, events.length - 1), 0, f.value.make());
    if (f?.kind === 'badPartial') events[0] = { type: 'start', partial: f.value.make() };
    // Cut before the terminal event, with a result that never comes (pi waits forever, L-15).
    if (f?.kind === 'cut' || f?.kind === 'endWithoutResult') events = events.slice(0, Math.min(f.at, events.length - 1));
    if (f?.kind === 'garbled') events = [...events.slice(1, 3), events[0], ...events.slice(1)].reverse();
    const result = f?.kind === 'badResult' ? () => f.value.make() : () => final;
    if (['iteratorThrows', 'nonObjectStep', 'stepGetter', 'endWithoutResult', 'resultThrows', 'cut', 'badResult'].includes(f?.kind)) {
      // A hand-made iterable: the iterator protocol itself is what fails.
      let i = 0;
      return {
        [Symbol.asyncIterator]() {
          return {
            next() {
              if (f.kind === 'iteratorThrows' && i === f.at) throw f.thrown.make();
              if (f.kind === 'nonObjectStep' && i === f.at) return Promise.resolve(f.value);
              if (i >= events.length) return Promise.resolve({ done: true, value: undefined });
              const value = events[i++];
              if (f.kind === 'stepGetter' && i === f.at) return Promise.resolve(withGetter({ done: false, value }, f.key));
              return Promise.resolve({ done: false, value });
            },
          };
        },
        result() {
          if (f.kind === 'resultThrows') throw f.thrown.make();
          if (f.kind === 'endWithoutResult' || f.kind === 'cut') return new Promise(() => {});
          return Promise.resolve(result());
        },
      };
    }
    const stream = impl.createAssistantMessageEventStream();
    queueMicrotask(() => {
      for (const e of events) {
        try {
          stream.push(e);
        } catch {
          // A hostile event can break pushing itself (its `type` getter throws).
        }
      }
      stream.end();
    });
    return stream;
  };
}

// --- The loop ---

/** A plan change putting `value` at `site`, tagged with both. */
const at = (site, value, ...tags) => ({ [site]: value, tags: [...tags, ...(value?.tags ?? [])] });

/** The places a loop case can put a hostile value. Each returns a change to the plan. */
const LOOP_SITES = {
  prompts: (r) => at('prompts', hostile(r, () => [userMessage()], [0, 'length']), 'data'),
  promptMessage: (r) => at('promptMessage', hostile(r, userMessage, ['role', 'content', 'timestamp']), 'data'),
  context: (r) => at('context', hostile(r, () => ({ messages: [], tools: [echoTool()] }), ['messages', 'tools', 'extra']), 'control'),
  messages: (r) => at('messages', hostile(r, () => [userMessage()], [0, 'length']), 'data'),
  tools: (r) => at('tools', hostile(r, () => [echoTool()], [0, 'length']), 'control'),
  tool: (r) => at('tool', hostile(r, () => echoTool(), ['name', 'parameters', 'execute', 'description', 'executionMode', 'prepareArguments']), 'tool'),
  execute: (r) => {
    // A hostile tool result is data: read as JSON here (pi uses the object as it is).
    const result = r.chance(0.5) ? hostile(r, toolResult, ['content', 'details', 'isError', 'terminate']) : undefined;
    const a = answer(r, result ?? v(toolResult));
    return { execute: a, tags: ['execute', ...(result ? ['data'] : []), ...a.tags] };
  },
  onUpdate: (r) => at('onUpdate', hostile(r, toolResult, ['content']), 'control'),
  config: (r) => at('config', hostile(r, () => ({}), ['model', 'convertToLlm', 'beforeToolCall', 'getApiKey', 'reasoning', 'toolExecution']), 'control'),
  model: (r) => at('model', hostile(r, model, ['id', 'api', 'provider']), 'data'),
  options: (r) => ({ options: { reasoning: r.pick([undefined, 'high', 'bogus', 5]), toolExecution: r.pick([undefined, 'sequential', 'parallel', 7]), apiKey: r.pick([undefined, 'k', 5, {}]) }, tags: ['data'] }),
  hook: (r) => {
    const name = r.pick(['convertToLlm', 'transformContext', 'getApiKey', 'beforeToolCall', 'afterToolCall', 'finishTurn', 'prepareNextTurn', 'prepareRequest', 'getSteeringMessages', 'getFollowUpMessages']);
    const goods = {
      convertToLlm: () => [userMessage()], transformContext: () => [userMessage()], getApiKey: () => 'key',
      beforeToolCall: () => ({ block: false }), afterToolCall: () => ({ content: [text('after')] }), finishTurn: () => ({ action: 'end' }),
      prepareNextTurn: () => ({ messages: [userMessage()] }), prepareRequest: () => ({ thinkingLevel: 'off' }),
      getSteeringMessages: () => [], getFollowUpMessages: () => [],
    };
    const keys = { beforeToolCall: ['block', 'reason'], afterToolCall: ['content', 'isError'], finishTurn: ['action'], prepareNextTurn: ['messages', 'context', 'model', 'thinkingLevel'], prepareRequest: ['context', 'model', 'thinkingLevel'] };
    // A hostile hook result is checked by the hook-value policy (pi passes it on).
    const value = r.chance(0.8) ? hostile(r, goods[name], keys[name] ?? [0, 'length']) : v(goods[name]);
    if (value.tags.length > 0) value.tags.push('hook-value');
    const a = answer(r, value);
    const toolHook = name === 'beforeToolCall' || name === 'afterToolCall';
    const notAFunction = r.chance(0.1) ? hostile(r, () => () => {}, []) : undefined;
    return { hook: { name, answer: a, notAFunction }, tags: [toolHook ? 'toolHook' : 'hook', ...(notAFunction ? ['notAFunction', ...notAFunction.tags] : a.tags)] };
  },
  configGetter: (r) => ({ configGetter: r.pick(['convertToLlm', 'model', 'transformContext', 'beforeToolCall', 'finishTurn', 'getSteeringMessages', 'apiKey', 'identity']), tags: ['control'] }),
  emit: (r) => {
    const index = r.int(12);
    const how = r.pick(['throw', 'reject', 'hostile', 'abort', 'reenter', 'abortAndThrow']);
    const value = hostile(r, () => undefined, []);
    const thrown = thrownValue(r);
    const tags = how === 'throw' || how === 'reject' ? thrown.tags.map((t) => `thrown-${t}`) : how === 'hostile' ? value.tags : [];
    return { emit: { at: index, how, value, thrown }, tags: ['emit', ...tags] };
  },
  signal: (r) => at('signal', hostile(r, () => new AbortController().signal, ['aborted', 'addEventListener', 'reason']), 'signal'),
  stream: (r) => {
    const fault = streamFault(r);
    fault.response = r.int(2);
    return { stream: fault, tags: ['stream', ...fault.tags] };
  },
};

const LOOP_APIS = ['runAgentLoop', 'runAgentLoop', 'runAgentLoopContinue', 'agentLoop', 'agentLoopContinue'];

/** A loop case: one to three hostile sites on a run that would otherwise succeed. */
export function loopCase(seed) {
  const r = rng(seed);
  const api = r.pick(LOOP_APIS);
  const plan = { family: 'loop', seed, api, responses: script(r), tags: [], sites: [] };
  const names = Object.keys(LOOP_SITES);
  for (let n = 1 + (r.chance(0.3) ? r.int(3) : 0); n > 0; n--) {
    const site = r.pick(names);
    const change = LOOP_SITES[site](r);
    plan.sites.push(site);
    plan.tags.push(...change.tags);
    Object.assign(plan, change, { tags: plan.tags });
  }
  plan.sequential = r.chance(0.3);
  return plan;
}

/** Makes the arguments of a loop plan for `impl` and runs it. Returns what happened:
 * `{ kind: 'resolve' | 'reject' | 'throw', value, events }`. */
export async function runLoopPlan(plan, impl, { abortController = new AbortController(), nested } = {}) {
  const events = [];
  const make = (x, good) => (x === undefined ? good() : x.make());
  const toolOver = {};
  // Not async: the answer is returned as it is (an async wrapper would adopt it first).
  const ctx = { abort: () => abortController.abort(), nested };
  if (plan.execute) toolOver.execute = () => plan.execute.call(ctx);
  if (plan.onUpdate) toolOver.execute = async (_id, _args, _signal, onUpdate) => {
    onUpdate(plan.onUpdate.make());
    onUpdate(undefined);
    setTimeout(() => onUpdate('late'), 0);
    return toolResult();
  };
  if (plan.sequential) toolOver.executionMode = 'sequential';
  const tool = plan.tool ? plan.tool.make() : echoTool(toolOver);
  const tools = plan.tools ? plan.tools.make() : [tool];
  const history = plan.api.endsWith('Continue') ? [userMessage()] : [];
  let messages = plan.messages ? plan.messages.make() : history;
  if (plan.promptMessage && plan.api.endsWith('Continue')) messages = [plan.promptMessage.make()];
  const context = plan.context ? plan.context.make() : { messages, tools };
  const prompts = plan.prompts ? plan.prompts.make() : [plan.promptMessage ? plan.promptMessage.make() : userMessage()];
  const config = plan.config ? plan.config.make() : { model: make(plan.model, model), convertToLlm: (m) => m, ...(plan.options ?? {}) };
  if (plan.hook) {
    try {
      config[plan.hook.name] = plan.hook.notAFunction ? plan.hook.notAFunction.make() : () => plan.hook.answer.call(ctx);
    } catch {
      // A Proxy config may refuse the assignment: the case goes on without the hook.
    }
  }
  if (plan.configGetter) {
    try {
      Object.defineProperty(config, plan.configGetter, { get() { throw new Error(`config.${plan.configGetter} getter`); }, enumerable: true, configurable: true });
    } catch {
      // As above.
    }
  }
  const streamFn = plan.stream?.kind === 'notAFunction' ? plan.stream.value.make() : streamFunction(impl, plan.responses, plan.stream);
  const signal = plan.signal ? plan.signal.make() : abortController.signal;
  let count = 0;
  const emit = (event) => {
    events.push(event);
    const e = plan.emit;
    if (!e || count++ !== e.at) return undefined;
    switch (e.how) {
      case 'throw': throw e.thrown.make();
      case 'reject': return Promise.reject(e.thrown.make());
      case 'hostile': return e.value.make();
      case 'abort': abortController.abort(); return undefined;
      case 'abortAndThrow': abortController.abort(); throw new Error('listener aborted and threw');
      // A nested run from inside a listener: must work and must not disturb this one.
      case 'reenter': return nested?.();
      default: return undefined;
    }
  };
  const call = () => {
    switch (plan.api) {
      case 'runAgentLoop': return impl.runAgentLoop(prompts, context, config, emit, signal, streamFn);
      case 'runAgentLoopContinue': return impl.runAgentLoopContinue(context, config, emit, signal, streamFn);
      case 'agentLoop': return drain(impl.agentLoop(prompts, context, config, signal, streamFn), emit);
      default: return drain(impl.agentLoopContinue(context, config, signal, streamFn), emit);
    }
  };
  return { ...(await outcome(call)), events };
}

/** Reads an `agentLoop` stream to its end: its events, then its result. */
async function drain(stream, emit) {
  for await (const event of stream) {
    try {
      await emit(event);
    } catch {
      // The stream is observational: a failing consumer does not fail the run.
    }
  }
  return stream.result();
}

/** Calls `fn` and describes how it settled (a synchronous throw included). */
export async function outcome(fn) {
  try {
    return { kind: 'resolve', value: await fn() };
  } catch (error) {
    return { kind: 'reject', error };
  }
}

// --- runToolCall ---

export function toolCallCase(seed) {
  const r = rng(seed);
  const plan = { family: 'runToolCall', seed, tags: [], sites: [] };
  const sites = {
    toolCall: () => ({ toolCall: hostile(r, () => toolCall(), ['id', 'name', 'arguments']), tags: ['data'] }),
    options: () => ({ options: hostile(r, () => ({ tools: [echoTool()] }), ['tools', 'signal', 'beforeToolCall', 'context']), tags: ['control'] }),
    tools: () => ({ tools: hostile(r, () => [echoTool()], [0, 'length']), tags: ['control'] }),
    tool: () => ({ tool: hostile(r, () => echoTool(), ['name', 'execute', 'parameters']), tags: ['tool'] }),
    execute: () => {
      const a = answer(r, r.chance(0.5) ? hostile(r, toolResult, ['content', 'isError']) : v(toolResult));
      return { execute: a, tags: ['execute', ...a.tags] };
    },
    hook: () => {
      const name = r.pick(['beforeToolCall', 'afterToolCall', 'onUpdate']);
      const a = answer(r, hostile(r, () => ({ block: false }), ['block', 'reason', 'content']));
      return { hook: { name, answer: a }, tags: ['toolHook', ...a.tags] };
    },
    reenter: () => ({ reenter: true, tags: ['control'] }),
  };
  for (let n = 1 + (r.chance(0.3) ? 1 : 0); n > 0; n--) {
    const site = r.pick(Object.keys(sites));
    const change = sites[site]();
    plan.sites.push(site);
    plan.tags.push(...change.tags);
    Object.assign(plan, change, { tags: plan.tags });
  }
  return plan;
}

export function runToolCallPlan(plan, impl) {
  const over = {};
  if (plan.execute) over.execute = () => plan.execute.call();
  if (plan.hook?.name === 'onUpdate') over.execute = async (_id, _args, _signal, onUpdate) => {
    await onUpdate?.(toolResult());
    return toolResult();
  };
  if (plan.reenter) over.execute = async (id, args) => {
    // A tool that runs another tool through the same steps (L-38), re-entrantly.
    const inner = await impl.runToolCall(toolCall('inner'), { tools: [echoTool()], assistantMessage: assistantMessage([]), context: { messages: [] } });
    return { content: [text(`inner ${inner.isError}`)], details: { id, args } };
  };
  const tools = plan.tools ? plan.tools.make() : [plan.tool ? plan.tool.make() : echoTool(over)];
  const options = plan.options ? plan.options.make() : { tools, assistantMessage: assistantMessage([toolCall()], 'toolUse'), context: { messages: [] } };
  if (plan.hook && options && typeof options === 'object') {
    try {
      options[plan.hook.name] = () => plan.hook.answer.call();
    } catch {
      // A Proxy may refuse the assignment.
    }
  }
  const call = plan.toolCall ? plan.toolCall.make() : toolCall();
  return outcome(() => impl.runToolCall(call, options));
}

// --- Agent ---

export function agentCase(seed) {
  const r = rng(seed);
  const plan = { family: 'Agent', seed, tags: [], responses: script(r), ops: [] };
  plan.ctor = r.chance(0.3) ? hostile(r, () => ({}), ['initialState', 'streamFn', 'convertToLlm', 'steeringMode', 'beforeToolCall']) : undefined;
  plan.initial = r.chance(0.3) ? hostile(r, () => ({ model: model(), messages: [], tools: [echoTool()] }), ['model', 'messages', 'tools', 'systemPrompt', 'thinkingLevel']) : undefined;
  plan.hook = r.chance(0.3) ? LOOP_SITES.hook(r).hook : undefined;
  plan.stream = r.chance(0.2) ? { ...streamFault(r), response: r.int(2) } : undefined;
  const listener = r.pick(['none', 'none', 'throw', 'hostile', 'steer', 'followUp', 'abort', 'prompt', 'continue', 'reset']);
  plan.listener = { how: listener, at: r.int(10), value: hostile(r, () => undefined), thrown: thrownValue(r) };
  for (let n = 1 + r.int(3); n > 0; n--) {
    const op = r.pick(['prompt', 'prompt', 'promptHostile', 'continue', 'steer', 'followUp', 'setMessages', 'setTools', 'setModel', 'images', 'subscribeHostile', 'setLevel', 'setMode', 'setField', 'setStreamFn']);
    const field = r.pick(['beforeToolCall', 'afterToolCall', 'convertToLlm', 'transformContext', 'getApiKey', 'finishTurn', 'prepareNextTurn', 'toolExecution', 'transport', 'sessionId', 'identity', 'thinkingBudgets']);
    plan.ops.push({ op, field, value: hostile(r, userMessage, ['role', 'content']) });
  }
  return plan;
}

export async function runAgentPlan(plan, impl) {
  const results = [];
  let agent;
  const construct = await outcome(() => {
    const options = plan.ctor ? plan.ctor.make() : {
      initialState: plan.initial ? plan.initial.make() : { model: model(), tools: [echoTool()] },
      streamFn: streamFunction(impl, plan.responses, plan.stream),
      ...(plan.hook ? { [plan.hook.name]: () => plan.hook.answer.call() } : {}),
    };
    agent = new impl.Agent(options);
  });
  if (construct.kind !== 'resolve') return { kind: 'constructor', results: [construct], agent: undefined };
  let count = 0;
  const l = plan.listener;
  agent.subscribe((event) => {
    if (count++ !== l.at) return undefined;
    switch (l.how) {
      case 'throw': throw l.thrown.make();
      case 'hostile': return l.value.make();
      case 'steer': agent.steer(userMessage()); return undefined;
      case 'followUp': agent.followUp(userMessage()); return undefined;
      case 'abort': agent.abort(); return undefined;
      // Re-entrant calls while the run is active: each is refused, and that refusal must
      // fail only this listener call.
      case 'prompt': return agent.prompt('again').catch(() => {});
      case 'continue': return agent.continue().catch(() => {});
      case 'reset': try { agent.reset(); } catch { /* refused while running */ } return undefined;
      default: return undefined;
    }
  });
  for (const { op, field, value } of plan.ops) {
    results.push(await outcome(async () => {
      switch (op) {
        case 'prompt': return agent.prompt('hello');
        case 'promptHostile': return agent.prompt(value.make());
        case 'images': return agent.prompt('look', [value.make()]);
        case 'continue': return agent.continue();
        case 'steer': return agent.steer(value.make());
        case 'followUp': return agent.followUp(value.make());
        case 'setMessages': agent.state.messages = [userMessage(), value.make()]; return undefined;
        case 'setTools': agent.state.tools = [value.make()]; return undefined;
        case 'setModel': agent.state.model = value.make(); return undefined;
        case 'subscribeHostile': agent.subscribe(value.make()); return agent.prompt('after subscribe');
        // State and fields set to wrong types, then a prompt that reads them.
        case 'setLevel': agent.state.thinkingLevel = value.make(); return agent.prompt('with a level');
        case 'setMode': agent.steeringMode = value.make(); agent.steer(userMessage()); return agent.prompt('with a mode');
        case 'setField': agent[field] = value.make(); return agent.prompt(`with ${field}`);
        case 'setStreamFn': agent.streamFunction = value.make(); return agent.prompt('with a stream function');
        default: return undefined;
      }
    }));
  }
  return { kind: 'ran', results, agent };
}

// --- streamSimple and streamProxy, over a real local server and a caller's fetch ---

/** The bodies `startStreamServer` answers with: a Chat Completions stream for
 * `/v1/chat/completions`, a streamProxy stream for `/api/stream`. */
const SSE_OK = [
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n',
  'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: [DONE]\n\n',
];
const PROXY_OK = [
  'data: {"type":"start"}\n\n', 'data: {"type":"text_start","contentIndex":0}\n\n',
  'data: {"type":"text_delta","contentIndex":0,"delta":"Hi"}\n\n', 'data: {"type":"text_end","contentIndex":0}\n\n',
  `data: {"type":"done","reason":"stop","usage":${JSON.stringify(USAGE)}}\n\n`,
];

/** A 127.0.0.1 server for the stream cases, one write per event. Returns its origin. */
export async function startStreamServer() {
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const line of req.url.startsWith('/api/stream') ? PROXY_OK : SSE_OK) {
        res.write(line);
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.close(r); server.closeAllConnections(); }) };
}

/** A hostile `fetch`: its response, headers, body, reader or chunks misbehave. */
function fetchFault(r) {
  const thrown = thrownValue(r);
  return {
    kind: r.pick(['throws', 'rejects', 'notResponse', 'status', 'headers', 'body', 'reader', 'step', 'chunk', 'text', 'ok']),
    value: hostile(r, () => ({}), ['get', 'status', 'ok', 'body', 'headers']),
    chunk: r.pick([v(() => 'text chunk'), v(() => 42), v(() => revoked(new Uint8Array(2))), v(() => Object.defineProperty(new Uint8Array([100, 97]), 'length', { get() { throw new Error('length'); } })), v(() => new DataView(new ArrayBuffer(4))), v(() => new Uint16Array([1, 2])), v(() => { const b = new Uint8Array(8); structuredClone(b.buffer, { transfer: [b.buffer] }); return b; })]),
    thrown,
    at: r.int(3),
  };
}

/** The caller's `fetch`: the real one, then `fault` applied to what it gives. */
function faultyFetch(fault) {
  return async (url, init) => {
    const f = fault;
    if (f.kind === 'throws') throw f.thrown.make();
    if (f.kind === 'rejects') return Promise.reject(f.thrown.make());
    const response = await fetch(url, init);
    if (f.kind === 'notResponse') {
      await response.body.cancel();
      return f.value.make();
    }
    const real = response.body.getReader();
    let i = 0;
    const reader = {
      read: () => {
        const n = i++;
        if (f.kind === 'step' && n === f.at) return Promise.resolve(f.value.make());
        if (f.kind === 'chunk' && n === f.at) return Promise.resolve({ done: false, value: f.chunk.make() });
        return real.read();
      },
      cancel: (reason) => real.cancel(reason),
      releaseLock: () => real.releaseLock(),
    };
    const pick = (kind, own) => (f.kind === kind ? f.value.make() : own);
    return {
      status: pick('status', response.status),
      ok: pick('ok', response.ok),
      statusText: response.statusText,
      headers: pick('headers', response.headers),
      body: pick('body', { getReader: () => (f.kind === 'reader' ? f.value.make() : reader) }),
      text: () => (f.kind === 'text' ? Promise.resolve(f.value.make()) : response.text()),
    };
  };
}

export function streamCase(seed) {
  const r = rng(seed);
  const api = r.pick(['streamSimple', 'streamProxy']);
  const plan = { family: api, seed, tags: [], fault: fetchFault(r) };
  const site = r.pick(['fetch', 'fetch', 'model', 'context', 'options', 'optionGetter']);
  plan.site = site;
  if (site === 'model') plan.model = hostile(r, () => ({ ...model(), api: 'openai-completions', baseUrl: 'http://127.0.0.1:9/v1' }), ['api', 'baseUrl', 'id', 'headers']);
  if (site === 'context') plan.context = hostile(r, () => ({ messages: [userMessage()] }), ['messages', 'tools', 'systemPrompt']);
  if (site === 'options') plan.options = hostile(r, () => ({}), ['apiKey', 'fetch', 'signal', 'headers', 'proxyUrl', 'authToken']);
  if (site === 'optionGetter') plan.getter = r.pick(['apiKey', 'signal', 'headers', 'maxTokens', 'timeoutMs', 'onPayload', 'authToken', 'proxyUrl', 'fetch']);
  if (site !== 'fetch') plan.fault = { kind: 'none' };
  return plan;
}

/** Runs a stream plan against the server at `origin`; reads the stream to its end. */
export async function runStreamPlan(plan, impl, origin) {
  const proxy = plan.family === 'streamProxy';
  const m = plan.model ? plan.model.make() : { ...model(), api: 'openai-completions', baseUrl: `${origin}/v1` };
  const context = plan.context ? plan.context.make() : { messages: [userMessage()] };
  let options = plan.options ? plan.options.make() : { apiKey: 'k', proxyUrl: origin, authToken: 'token', fetch: faultyFetch(plan.fault) };
  if (plan.getter) {
    options = { ...options };
    Object.defineProperty(options, plan.getter, { get() { throw new Error(`options.${plan.getter} getter`); }, enumerable: true });
  }
  return outcome(async () => {
    const stream = (proxy ? impl.streamProxy : impl.streamSimple)(m, context, options);
    const events = [];
    for await (const e of stream) events.push(e.type);
    const result = await stream.result();
    return { events, result };
  });
}
