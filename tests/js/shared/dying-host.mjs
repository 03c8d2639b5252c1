// A host that dies at one step of a run, for the kill-at-every-step tests: each step (an
// event, or the checkpoint before a tool runs) calls `step()`; at step `killAt` it keeps
// the agent's snapshot (as JSON), marks itself dead and throws, as a killed process leaves
// its last save behind.

/** `{ seen, step }`: `seen` counts steps and holds the snapshot; `snapshotOf()` is read at
 * the kill. */
export function dyingHost(killAt, snapshotOf) {
  const seen = { steps: 0, snapshot: undefined, dead: false };
  const step = () => {
    if (seen.steps++ !== killAt) return;
    seen.snapshot = JSON.parse(JSON.stringify(snapshotOf()));
    seen.dead = true;
    throw new Error('the host died');
  };
  return { seen, step };
}
