// Push-based event streams with pi-ai's semantics (spec L-14, L-16, L-22), so a JS stream
// function can be written without pi-ai. Written in JS because they live entirely on the
// JS side: a producer pushes, a consumer iterates with `for await` and reads `result()`.

/**
 * An async-iterable push queue. `push(e)` is ignored once the stream is done; a completing
 * event (per `isComplete`) finishes the stream, resolves `result()` with
 * `extractResult(e)`, and is still delivered. `end(result?)` finishes it, resolving
 * `result()` only when a result is given.
 */
export class EventStream {
  #queue = [];
  #head = 0;
  #waiters = [];
  #done = false;
  #failure = undefined;
  #resolve;
  #reject;
  #result;
  #isComplete;
  #extractResult;

  constructor(isComplete, extractResult) {
    this.#isComplete = isComplete;
    this.#extractResult = extractResult;
    this.#result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A failure nobody awaits must not become an unhandled rejection.
    this.#result.catch(() => {});
  }

  get done() {
    return this.#done;
  }

  push(event) {
    if (this.#done) return;
    if (this.#isComplete(event)) {
      this.#done = true;
      this.#resolve(this.#extractResult(event));
    }
    const waiter = this.#waiters.shift();
    if (waiter) waiter.resolve({ value: event, done: false });
    else this.#queue.push(event);
  }

  end(result) {
    this.#done = true;
    if (result !== undefined) this.#resolve(result);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve({ value: undefined, done: true });
  }

  /**
   * Ends the stream with an error: iterators throw it once the queued events are read, and
   * `result()` rejects with it. (pi's streams have no way to fail, so a consumer of a run
   * that rejected waited forever; see the README's list of improvements.)
   */
  fail(error) {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.#done = true;
    this.#reject(error);
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
  }

  #take() {
    const event = this.#queue[this.#head];
    this.#queue[this.#head] = undefined;
    this.#head += 1;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }

  [Symbol.asyncIterator]() {
    return {
      next: () => {
        if (this.#head < this.#queue.length) return Promise.resolve({ value: this.#take(), done: false });
        if (this.#failure !== undefined) return Promise.reject(this.#failure.error);
        if (this.#done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
      },
      return: () => Promise.resolve({ value: undefined, done: true }),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  result() {
    return this.#result;
  }
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * The stream of one assistant response: completes on `done` (result: `message`) or `error`
 * (result: `error`), and stamps the final message with `durationMs` since the stream was
 * created, unless it has one or started before the stream (L-22).
 */
export class AssistantMessageEventStream extends EventStream {
  #startedAt = Date.now();
  #startedAtMonotonic = now();

  constructor() {
    super(
      (event) => event.type === 'done' || event.type === 'error',
      (event) => (event.type === 'done' ? event.message : event.error),
    );
  }

  push(event) {
    if (event?.type === 'done') this.#time(event.message);
    else if (event?.type === 'error') this.#time(event.error);
    super.push(event);
  }

  end(result) {
    if (result !== undefined) this.#time(result);
    super.end(result);
  }

  #time(message) {
    if (this.done || !message || message.durationMs !== undefined || message.timestamp < this.#startedAt) return;
    message.durationMs = Math.max(0, Math.round(now() - this.#startedAtMonotonic));
  }
}

export function createAssistantMessageEventStream() {
  return new AssistantMessageEventStream();
}
