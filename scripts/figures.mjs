// The README's comparison with pi, made from the two records it quotes: the build's size
// report (target/size-report.json, written by scripts/size-report.mjs on every build) and
// the recorded benchmark run (bench/results.json, `npm run bench -- --record`).
// tests/js/docs-figures.test.mjs requires the README to hold exactly this table, so no
// figure there can go stale; after a build or a recorded run that changes one, paste what
// `node scripts/figures.mjs` prints into the README.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function records(root = fileURLToPath(new URL('..', import.meta.url))) {
  return {
    size: JSON.parse(readFileSync(`${root}/target/size-report.json`, 'utf8')),
    bench: JSON.parse(readFileSync(`${root}/bench/results.json`, 'utf8')),
  };
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const x = (r) => `${r.toFixed(2)}×`;

/** The table, as Markdown lines. */
export function comparisonTable({ size, bench }) {
  const time = (r) => (r <= 1 ? `**${x(r)} pi's time**` : `${x(r)} pi's time`);
  const pi = (r) => (r <= 1 ? '1×' : '**1×**');
  return [
    '| | pi-agent-wasm | pi 1.6.0 |',
    '|---|---|---|',
    `| Browser download (gzip): the agent with four LLM APIs | **${kb(size.browserPackageGzip)}** | ${kb(size.piBrowserFourApisGzip)} |`,
    `| Browser download (gzip): the agent with one API | ${kb(size.browserPackageGzip)} (the four come together) | **${kb(size.piBrowserOneApiGzip)}** |`,
    `| SSE throughput, a whole run over 100,000 chunks (Node) | **${x(bench.sseThroughput)} pi's** | 1× |`,
    `| Loop overhead per event, JS stream function | ${time(bench.perEventLoopOverhead)} | ${pi(bench.perEventLoopOverhead)} |`,
    `| Streamed tool-call arguments, 1 MB in 8-byte deltas | ${time(bench.streamedArguments1MB)} | ${pi(bench.streamedArguments1MB)} |`,
    `| Long session: per turn, 400 turns with 16 KB tool results (loop functions) | ${time(bench.longSessionPerTurn)} | ${pi(bench.longSessionPerTurn)} |`,
    `| The same through \`Agent\`; memory (RSS) after it | ${time(bench.longSessionAgentPerTurn)}; ${x(bench.longSessionAgentRss)} pi's RSS | **1×**; 1× |`,
    `| Cold start to the first \`agent_end\` (Node, installed) | ${time(bench.coldStartInstalled)} | ${pi(bench.coldStartInstalled)} |`,
    `| The same, each app bundled into one file by esbuild | ${time(bench.coldStartBundled)} | ${pi(bench.coldStartBundled)} |`,
    `| CPU per agent request in a Worker (workerd; a tool call, two model requests) | ${x(bench.workerdCpuPerRequest)} pi's | ${pi(bench.workerdCpuPerRequest)} |`,
    '',
    `Speeds recorded at ${bench.commit} on ${bench.date} (${bench.machine}).`,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(comparisonTable(records()).join('\n'));
