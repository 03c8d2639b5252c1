// The one wasm instance of this realm, loaded on first use, and replaced after a crash.
//
// No entry awaits at top level: bundlers that target older browsers refuse top-level
// `await`, and `require()` of an ES module (Node >= 20.19) refuses a graph that has one.
// Instead each runtime entry (browser.js, node.js, workerd.js) names where its bytes come
// from with `useSource`, and every export that needs the instance waits for `ready()`;
// the synchronous ones (`new SseDecoder()`) load synchronously where the runtime can.
//
// The entries are listed in package.json `sideEffects`, so bundlers keep their `useSource`
// call. Should one drop it anyway, the first call says so instead of failing later inside
// the glue ("Cannot read properties of undefined").
//
// Crashes (issue 12). A trap (`unreachable`, an out-of-bounds access, a stack overflow), or
// any exception that unwinds through wasm frames, leaves the instance in a state no call may
// trust: Rust frames were abandoned halfway. Every call into the instance passes a guard (the
// glue is a factory whose exports `guardExports` wraps, see scripts/package-wasm.mjs), so the
// first such exception marks the engine crashed, wherever it surfaced (a wasm-bindgen-futures
// microtask, a Promise reaction, a direct call). Then:
// - every run in flight on it is ended through its `onCrash` (see `guarded`), since its own
//   Promise never will;
// - the next call gets a fresh instance of the already compiled module;
// - anything bound to the dead one (an `SseDecoder`, a Rust closure JS still holds) reaches
//   only the dead instance's guard: direct calls throw a `wasm_crashed` error, callbacks from
//   the event loop do nothing. None touches the new instance with a stale pointer.
import { createGlue } from './pi_agent_wasm.js';
import { describeError } from './describe-error.js';

/**
 * How an entry obtains the module: `sync()` returns a `WebAssembly.Module` or bytes, or
 * `undefined` when it cannot without waiting; `load()` resolves to one of those. `hint` is
 * appended to a load error: what to check in this runtime.
 * @typedef {{ sync?: () => unknown, load: () => Promise<unknown>, hint: string }} Source
 */

/** @type {Source | undefined} */
let source;
/**
 * The live engine: its glue (the factory's exports), `crash` (the `wasm_crashed` error once it
 * crashed) and `ops` (the onCrash callbacks of the calls in flight). Undefined until loaded.
 */
let engine;
/** The compiled module of the first load, for the instances that replace crashed ones. */
let compiled;
/** @type {Promise<void> | undefined} */
let pending;
/** The error of the last load that failed, until one succeeds. */
let failed;

/** Called once by the runtime entry, at its top level. */
export function useSource(s) {
  source = s;
}

function noSource() {
  return loadError(
    new Error('no runtime entry set up the module'),
    "The bundler dropped this package's entry module (its package.json lists the entries in " +
      '"sideEffects"; keep that field intact), or a file inside the package was imported directly. ' +
      "Import from 'pi-agent-wasm'.",
  );
}

/**
 * The error every call rejects with when the module cannot be loaded: what failed and how
 * to fix it, with the original error as `cause`. Code `wasm_load_failed`.
 */
function loadError(cause, hint) {
  const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const error = new Error(`pi-agent-wasm could not load its WebAssembly module (${why}). ${hint}`, { cause });
  error.code = 'wasm_load_failed';
  return error;
}

/** A new engine whose glue is not instantiated yet. */
function newEngine() {
  const next = { glue: undefined, exports: undefined, crash: undefined, ops: new Set(), cut: [] };
  next.glue = createGlue((exports) => guardExports(exports, next));
  return next;
}

/** Makes `next` (instantiated) the live engine. */
function install(next) {
  compiled = next.glue.module;
  engine = next;
  failed = undefined;
}

function live() {
  return engine !== undefined && engine.crash === undefined;
}

/** Instantiates synchronously (a compiled module after a crash, or what the source gives
 * now), or returns false when the source cannot give one without waiting. */
function loadSync() {
  if (live()) return true;
  if (!source) throw noSource();
  const next = newEngine();
  try {
    const module = compiled ?? source.sync?.();
    if (module === undefined) return false;
    next.glue.initSync({ module });
  } catch (error) {
    throw loadError(error, source.hint);
  }
  // A trap in the instance's start function crashed it already: that is a failed load.
  if (next.crash) throw loadError(next.crash.cause, source.hint);
  install(next);
  return true;
}

/**
 * Resolves once the module is loaded; rejects with a `wasm_load_failed` error when it
 * cannot be. A failed load is tried again by the next call.
 */
export function ready() {
  if (live()) return Promise.resolve();
  if (pending) return pending;
  pending = (async () => {
    if (loadSync()) return;
    const next = newEngine();
    try {
      await next.glue.init({ module_or_path: await source.load() });
    } catch (error) {
      throw loadError(error, source.hint);
    }
    if (next.crash) throw loadError(next.crash.cause, source.hint);
    install(next);
  })();
  pending.then(
    () => {
      pending = undefined;
    },
    (error) => {
      failed = error;
      pending = undefined;
    },
  );
  return pending;
}

/**
 * Runs `fn(glue)` now when the module is loaded (so a call behaves as it would with an eager
 * instance, events and all), else once it is. Returns what `fn` returns, as a Promise.
 */
export function whenReady(fn) {
  if (live() || loadSyncQuietly()) return fn(engine.glue);
  return ready().then(() => fn(engine.glue));
}

/** After a crash the compiled module is at hand: a new instance needs no waiting. */
function loadSyncQuietly() {
  if (compiled === undefined) return false;
  try {
    return loadSync();
  } catch {
    return false;
  }
}

/** For synchronous exports: returns the glue, loading now where the runtime can, else
 * explains: the last load's error when it failed, else that the module is still loading. */
export function requireReady(what) {
  if (loadSync()) return engine.glue;
  if (failed && !pending) throw failed;
  const error = new Error(
    `pi-agent-wasm is still loading its WebAssembly module; \`await ready()\` (exported by the package) before ${what} in this runtime.`,
  );
  error.code = 'wasm_not_ready';
  throw error;
}

/** The size in bytes of the live instance's linear memory; 0 before the first load. For the
 * memory tests and the soak figures (not part of the package's API). */
export function memorySize() {
  return live() ? engine.exports.memory.buffer.byteLength : 0;
}

/**
 * Runs `start(glue)`, which returns the Promise of a call into the instance, and returns a
 * Promise of its outcome. Should the instance crash before that Promise settles (it then
 * never would), the outcome is what `onCrash(error)` returns instead, `error` being the
 * `wasm_crashed` error (its `cause` the trap).
 */
export function guarded(start, onCrash) {
  return whenReady((glue) => {
    const owner = engine;
    return new Promise((resolve, reject) => {
      let settled = false;
      const crashed = (error) => {
        if (settled) return;
        settled = true;
        Promise.resolve()
          .then(() => onCrash(error))
          .then(resolve, reject);
      };
      const finish = (settle) => (value) => {
        owner.ops.delete(crashed);
        // A failure because of the crash is left to `crashed`, which the crash scheduled.
        if (settled || (owner.crash !== undefined && value === owner.crash)) return;
        settled = true;
        settle(value);
      };
      owner.ops.add(crashed);
      let promise;
      try {
        promise = start(glue);
      } catch (error) {
        finish(reject)(error);
        return;
      }
      Promise.resolve(promise).then(finish(resolve), finish(reject));
    });
  });
}

/** Marks `target` crashed by `cause` (once), lets go of its instance, and schedules the
 * ending of every call in flight on it. */
function crash(target, cause) {
  if (target.crash !== undefined) return;
  // An error's stack trace holds its frames (the dead instance's, the caller's with their
  // arguments) until it is formatted: formatted now, they go with the instance.
  try {
    void cause?.stack;
  } catch {
    // A thrown value whose `stack` throws holds no frames of ours.
  }
  const error = new Error(
    `pi-agent-wasm: its WebAssembly engine crashed (${describeCause(cause)}) and was restarted. ` +
      'Runs in progress were ended; objects made before the crash (such as an SseDecoder) no longer work: make new ones.',
    { cause },
  );
  error.code = 'wasm_crashed';
  void error.stack;
  target.crash = error;
  for (const cut of target.cut) cut();
  target.cut = [];
  target.glue?.release();
  const ops = [...target.ops];
  target.ops.clear();
  // Not now: this runs inside the failing call, possibly deep inside wasm frames.
  queueMicrotask(() => {
    for (const op of ops) op(error);
  });
}

/** The error message of a run, tool call or response that a crash ended. */
export function crashText(error) {
  return `pi-agent-wasm: its WebAssembly engine crashed (${describeCause(error.cause)}) and was restarted; this run was ended.`;
}

/** The trap as text: "RuntimeError: unreachable". */
function describeCause(cause) {
  try {
    if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  } catch {
    // A cross-realm or hostile value: described below.
  }
  return describeError(cause);
}

/** The exports whose callers are JS callbacks (a Promise reaction, a microtask, a listener,
 * a finalizer): a throw from them would be uncaught. */
const CALLBACK = /^wasm_bindgen__convert__closures_|^__wbindgen_destroy_closure$|_free$/;
/** What a swallowed call returns: read by the closure shims as "no error". */
const NOTHING = Object.freeze([0, 0, 0]);

/**
 * The instance's exports as the glue calls them: each function checked and wrapped.
 * Non-functions (the memory, the externref table) are read through getters, so that a crash
 * lets go of them.
 */
function guardExports(raw, target) {
  const out = {};
  // Calls into this instance on the stack: a callback at depth 0 was called by the event loop.
  let depth = 0;
  for (const name of Object.keys(raw)) {
    let value = raw[name];
    target.cut.push(() => {
      value = undefined;
    });
    if (typeof value !== 'function') {
      Object.defineProperty(out, name, {
        enumerable: true,
        get() {
          if (value === undefined) throw target.crash;
          return value;
        },
      });
      continue;
    }
    const callback = CALLBACK.test(name);
    // Fixed parameters rather than rest and spread: no array per call. Extra arguments are
    // ignored by a wasm function; none has more than these.
    if (value.length > 12) throw new Error(`pi-agent-wasm: export ${name} takes ${value.length} arguments`);
    out[name] = function (a, b, c, d, e, f, g, h, i, j, k, l) {
      if (target.crash !== undefined) {
        if (callback && depth === 0) return NOTHING;
        throw target.crash;
      }
      depth += 1;
      try {
        return value(a, b, c, d, e, f, g, h, i, j, k, l);
      } catch (error) {
        crash(target, error);
        if (callback && depth === 1) return NOTHING;
        throw target.crash;
      } finally {
        depth -= 1;
      }
    };
  }
  target.exports = out;
  return out;
}
