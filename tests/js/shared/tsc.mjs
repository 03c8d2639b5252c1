// Runs the repo's TypeScript compiler on a generated project and reads its diagnostics, for
// the type tests that must see which lines fail (the swap and typo programs).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../helpers.mjs';

const run = promisify(execFile);
const tscBin = join(repoRoot, 'node_modules/typescript/bin/tsc');

/** A scratch directory under tests/types (so 'pi-agent-wasm' resolves to this package by
 * name, through its exports map), removed by `cleanup()`. */
export function scratchDir(prefix) {
  const dir = mkdtempSync(join(repoRoot, 'tests/types', `.tmp-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The compiler options every type test starts from: strict, and declaration files checked
 * too (skipLibCheck off), so errors in this package's .d.ts count. */
export const STRICT = {
  target: 'ES2022',
  lib: ['ES2022', 'DOM'],
  strict: true,
  noEmit: true,
  skipLibCheck: false,
};

/**
 * Writes `<dir>/<name>.json` with `compilerOptions` and `files` (absolute paths) and runs tsc
 * on it. Resolves to the diagnostics, each `{ file, line, col, code, message }` with `file`
 * relative to the repo root (`line`/`col` 1-based; `file` is '' for global ones).
 */
export async function tsc(dir, name, compilerOptions, files) {
  const project = join(dir, `${name}.json`);
  writeFileSync(project, JSON.stringify({ compilerOptions, files: files.map((f) => resolve(f)) }, null, 2));
  let stdout;
  try {
    ({ stdout } = await run(process.execPath, [tscBin, '-p', project, '--pretty', 'false'], { cwd: repoRoot, maxBuffer: 64 << 20 }));
  } catch (error) {
    // tsc exits 1 or 2 when it reports errors; anything else (no output) is a real failure.
    if (typeof error.stdout !== 'string' || error.stdout === '') throw error;
    stdout = error.stdout;
  }
  return parseDiagnostics(stdout);
}

/** Parses `tsc --pretty false` output: `file(line,col): error TSnnnn: text`, continuation
 * lines indented below it, and `error TSnnnn: text` for diagnostics without a file. */
export function parseDiagnostics(output) {
  const diagnostics = [];
  for (const line of output.split('\n')) {
    const located = /^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line);
    const global = /^error (TS\d+): (.*)$/.exec(line);
    if (located) {
      const [, file, l, c, code, message] = located;
      diagnostics.push({ file: relative(repoRoot, resolve(repoRoot, file)), line: Number(l), col: Number(c), code, message });
    } else if (global) {
      diagnostics.push({ file: '', line: 0, col: 0, code: global[1], message: global[2] });
    } else if (line.startsWith(' ') && diagnostics.length > 0) {
      diagnostics.at(-1).message += `\n${line}`;
    } else if (line.trim() !== '') {
      throw new Error(`unexpected tsc output line: ${line}`);
    }
  }
  return diagnostics;
}

/** One line per diagnostic, for assertion messages. */
export function formatDiagnostics(diagnostics) {
  return diagnostics.map((d) => `${d.file}(${d.line},${d.col}): ${d.code}: ${d.message}`).join('\n');
}
