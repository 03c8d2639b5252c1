// Hand-written types of the public surface, the same for every runtime entry.
// The generated wasm-bindgen declarations are not shipped: these are the contract.

/** One dispatched Server-Sent Event, as the WHATWG event-stream interpretation defines it. */
export interface SseEvent {
  /** The `event:` field, or `"message"` when the event named none. */
  type: string;
  /** The `data:` lines joined with `"\n"`. */
  data: string;
  /** The last event ID at dispatch time (`""` when never set). */
  lastEventId: string;
}

/**
 * Incremental Server-Sent Events decoder. Feed the body in chunks of any size (CR, LF and
 * CRLF line ends, multi-byte UTF-8 and the leading BOM may be split anywhere); each call
 * returns the events that chunk completed.
 */
export declare class SseDecoder {
  constructor();
  /** Feeds one chunk of the body; returns the events it completed, in order. */
  feed(chunk: Uint8Array): SseEvent[];
  /**
   * Ends the stream. Returns the events completed by a final unterminated line. An event
   * still missing its blank line is discarded, as the standard says; `truncated` reports it.
   */
  finish(): SseEvent[];
  /** After `finish()`: whether the stream ended inside an event. */
  readonly truncated: boolean;
  /** The last valid `retry:` value in milliseconds, if any. */
  readonly retry: number | undefined;
  /** Releases the decoder's wasm memory now instead of at garbage collection. */
  free(): void;
}
