// The one wasm instance of this realm, loaded on first use.
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
import initAsync, { initSync } from './pi_agent_wasm.js';

/**
 * How an entry obtains the module: `sync()` returns a `WebAssembly.Module` or bytes, or
 * `undefined` when it cannot without waiting; `load()` resolves to one of those. `hint` is
 * appended to a load error: what to check in this runtime.
 * @typedef {{ sync?: () => unknown, load: () => Promise<unknown>, hint: string }} Source
 */

/** @type {Source | undefined} */
let source;
let loaded = false;
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

/** Instantiates from a module or bytes synchronously, or returns false when the source
 * cannot give one without waiting. */
function loadSync() {
  if (loaded) return true;
  if (!source) throw noSource();
  let module;
  try {
    module = source.sync?.();
    if (module === undefined) return false;
    initSync({ module });
  } catch (error) {
    throw loadError(error, source.hint);
  }
  loaded = true;
  return true;
}

/**
 * Resolves once the module is loaded; rejects with a `wasm_load_failed` error when it
 * cannot be. A failed load is tried again by the next call.
 */
export function ready() {
  if (loaded) return Promise.resolve();
  if (pending) return pending;
  pending = (async () => {
    if (loadSync()) return;
    try {
      await initAsync({ module_or_path: await source.load() });
    } catch (error) {
      throw loadError(error, source.hint);
    }
    loaded = true;
  })();
  pending.then(
    () => {
      failed = undefined;
    },
    (error) => {
      failed = error;
      pending = undefined;
    },
  );
  return pending;
}

/**
 * Runs `fn` now when the module is loaded (so a call behaves as it would with an eager
 * instance, events and all), else once it is. Returns what `fn` returns, as a Promise.
 */
export function whenReady(fn) {
  if (loaded) return fn();
  return ready().then(fn);
}

/** For synchronous exports: loads now where the runtime can, else explains: the last load's
 * error when it failed, else that the module is still loading. */
export function requireReady(what) {
  if (loadSync()) return;
  if (failed && !pending) throw failed;
  const error = new Error(
    `pi-agent-wasm is still loading its WebAssembly module; \`await ready()\` (exported by the package) before ${what} in this runtime.`,
  );
  error.code = 'wasm_not_ready';
  throw error;
}
