// The differential suite: the same seeded scenarios through this package and through
// @earendil-works/pi-agent-core 1.6.0 must produce identical event traces (JSON at emit
// time, loop-made timestamps and durations normalised), identical stream-function inputs,
// identical tool execution order and identical results or rejections.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ours from 'pi-agent-wasm';
import * as piCore from '@earendil-works/pi-agent-core';
import { createAssistantMessageEventStream as piStream } from '@earendil-works/pi-ai';
import { generate, runScenario } from './shared/scenario.mjs';
import { applyImprovements } from './shared/improvements.mjs';

const pi = {
  runAgentLoop: piCore.runAgentLoop,
  runAgentLoopContinue: piCore.runAgentLoopContinue,
  createAssistantMessageEventStream: piStream,
};

const SCENARIOS = Number(process.env.DIFFERENTIAL_SCENARIOS ?? 10000);

function firstDifference(a, b, path = '') {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
  }
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${path}.${k}`);
      if (d) return d;
    }
    if (JSON.stringify(Object.keys(a)) !== JSON.stringify(Object.keys(b))) {
      return `${path}: key order ${JSON.stringify(Object.keys(a))} vs ${JSON.stringify(Object.keys(b))}`;
    }
  }
  return `${path}: ours ${JSON.stringify(a)?.slice(0, 300)} | pi ${JSON.stringify(b)?.slice(0, 300)}`;
}

test(`differential: ${SCENARIOS} generated scenarios behave exactly as pi-agent-core 1.6.0`, async () => {
  const failures = [];
  let events = 0;
  let rejections = 0;
  for (let seed = 1; seed <= SCENARIOS; seed++) {
    const scenario = generate(seed);
    const a = await runScenario(ours, scenario);
    const b = await runScenario(pi, scenario);
    events += b.events.length;
    if (b.outcome.rejected !== undefined) rejections += 1;
    applyImprovements(a, b);
    const d = firstDifference(a, b);
    if (d) failures.push(`seed ${seed}: ${d}`);
    if (failures.length >= 5) break;
  }
  console.log(`differential: ${SCENARIOS} scenarios, ${events} reference events, ${rejections} rejected runs`);
  assert.deepEqual(failures, []);
});
