// The one place where this package deliberately differs from pi-agent-core 1.6.0 ([EDGE]
// items of the spec). The differential suite applies these and nothing else; each is also
// tested on its own in improvements.test.mjs.
export const IMPROVEMENTS = [
  {
    rule: 'L-175',
    what: 'After a run rejected, still-running parallel tools emit no late tool_execution_end events.',
    // pi keeps emitting into the finished run; the traces before the rejection must match.
    apply(ours, pi) {
      if (pi.outcome.rejected !== undefined) pi.late = [];
    },
  },
  {
    rule: 'L-32 / L-171',
    what: "agentLoop's stream ends with the run's error (iterator throws, result() rejects) instead of never completing.",
    apply() {},
  },
  {
    rule: 'L-15 / L-85 / L-170',
    what: 'A response stream that ends with neither a terminal event nor a result ends the turn as an error message instead of hanging.',
    apply() {},
  },
  {
    rule: 'L-35 / L-172',
    what: "runAgentLoopContinue never appends to the caller's context.messages array.",
    apply() {},
  },
  {
    rule: 'L-173',
    what: "The stream function's final message object is not mutated (thinkingLevel is set on the loop's copy).",
    apply() {},
  },
  {
    rule: 'L-104',
    what: 'A tool or hook that throws a value that cannot be read gets an error result; pi\'s catch throws on it and the run rejects (guards.test.mjs).',
    apply() {},
  },
  {
    rule: 'L-112',
    what: 'Tool-call arguments from a JS stream that are not JSON give that call an error result; pi runs the tool on a clone of a BigInt or a cycle (guards.test.mjs).',
    apply() {},
  },
  {
    rule: 'L-157',
    what: 'An Agent failure whose thrown value or model cannot be read still ends with its failure message and agent_end; pi\'s prompt() rejects (guards.test.mjs).',
    apply() {},
  },
  {
    rule: 'abortGraceMs',
    what: 'An aborted run stops waiting for a Promise of the caller\'s that has not settled abortGraceMs after the abort; pi waits forever (abort-grace.test.mjs).',
    apply() {},
  },
  {
    rule: 'hook values',
    what: 'A hook returning a value of the wrong type fails the run with a clear error where pi would pass it on (see agent/hook_values.rs).',
    apply() {},
  },
];

export function applyImprovements(ours, pi) {
  for (const i of IMPROVEMENTS) i.apply(ours, pi);
}
