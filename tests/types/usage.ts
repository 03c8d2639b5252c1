// Typed usage sample: `tsc --noEmit -p tests/types` must accept it against the package's
// published types (resolved by name through the "types" export condition).
import { SseDecoder, type SseEvent } from 'pi-agent-wasm';

const decoder = new SseDecoder();
const events: SseEvent[] = decoder.feed(new TextEncoder().encode('data: x\n\n'));
const rest: SseEvent[] = decoder.finish();
const names: string[] = [...events, ...rest].map((e) => `${e.type}:${e.data}:${e.lastEventId}`);
const truncated: boolean = decoder.truncated;
const retry: number | undefined = decoder.retry;
decoder.free();

// @ts-expect-error feed takes bytes, not a string
decoder.feed('data: x');

export { names, truncated, retry };
