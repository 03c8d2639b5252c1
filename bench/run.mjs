// npm run bench: every benchmark, printed. With --record, the Node ones are recorded in
// bench/results.json (bench/record.mjs) and the browser one runs after them.
import { execFileSync } from 'node:child_process';

const node = (file) => execFileSync(process.execPath, [file], { stdio: 'inherit' });
if (process.argv.includes('--record')) {
  node('bench/record.mjs');
} else {
  for (const file of ['bench/loop.mjs', 'bench/long-session.mjs', 'bench/provider.mjs', 'bench/cold-start.mjs', 'bench/workerd-cpu.mjs']) node(file);
}
node('bench/provider-browser.mjs');
