// Generates the API reference, docs/api/ (Markdown, committed), from the hand-written
// declarations of the package's four entries: `pi-agent-wasm` (src/js/index.d.ts, which
// re-exports ai.d.ts), `pi-agent-wasm/models` (the .d.ts scripts/gen-models.mjs writes, made
// here from node_modules the same way) and `pi-agent-wasm/cloudflare` (src/js/cloudflare.d.ts).
// No build is needed: src/js/*.d.ts are what the build copies into pkg/.
//
//   node scripts/api-docs.mjs [outDir]     (npm run api-docs; default docs/api)
//
// TypeDoc with typedoc-plugin-markdown renders it. An export without a doc comment, or a
// member without one of the option and hook types listed in MEMBERS_DOCUMENTED, is an error,
// as is any TypeDoc warning: the script then exits non-zero and writes nothing.
// tests/js/api-docs.test.mjs runs it and compares its output with the committed docs/api/.
//
// The output is deterministic: no dates, no source links (`disableSources`), no version,
// no machine paths. The declarations are staged in a temporary directory next to a
// generated models.d.ts, so TypeDoc sees one package, `pi-agent-wasm`, as a user does.
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Application, Logger, ReflectionKind, TSConfigReader } from 'typedoc';
import { generate as generateModels } from './gen-models.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
export const DEFAULT_OUT = join(root, 'docs', 'api');

/** The entry files and the module name each one's `@module` tag must give. */
const ENTRIES = [
  ['index.d.ts', 'pi-agent-wasm'],
  ['models.d.ts', 'pi-agent-wasm/models'],
  ['cloudflare.d.ts', 'pi-agent-wasm/cloudflare'],
  ['cassette.d.ts', 'pi-agent-wasm/cassette'],
];

/** Types that exported types name without being exported (helpers of index.d.ts). A name
 * listed here that no export uses any more is a warning too, so the list stays exact. */
const INTERNAL_TYPES = ['IsAny', 'SchemaValue', 'MaybePromise'];

/** Types whose every member a user sets or calls, so each member needs its own line. */
const MEMBERS_DOCUMENTED = [
  'pi-agent-wasm.Agent',
  'pi-agent-wasm.AgentOptions',
  'pi-agent-wasm.AgentLoopConfig',
  'pi-agent-wasm.SimpleStreamOptions',
  'pi-agent-wasm.BuiltinStreamOptions',
  'pi-agent-wasm.ProxyStreamOptions',
  'pi-agent-wasm.RunToolCallOptions',
  'pi-agent-wasm.AgentTool',
  'pi-agent-wasm.AgentToolResult',
  'pi-agent-wasm.BeforeToolCallResult',
  'pi-agent-wasm.AfterToolCallResult',
  'pi-agent-wasm.BeforeToolCallContext',
  'pi-agent-wasm.AfterToolCallContext',
  'pi-agent-wasm.AgentTurnContext',
  'pi-agent-wasm.AgentLoopTurnUpdate',
  'pi-agent-wasm.PrepareRequestContext',
  'pi-agent-wasm.AgentContext',
  'pi-agent-wasm.AgentState',
  'pi-agent-wasm.AgentSnapshot',
  'pi-agent-wasm.LoopCheckpoint',
  'pi-agent-wasm.CheckpointPosition',
  'pi-agent-wasm.Model',
  'pi-agent-wasm.Tool',
  'pi-agent-wasm.EventStream',
  'pi-agent-wasm.SseDecoder',
  'pi-agent-wasm.SseEvent',
  'pi-agent-wasm/cloudflare.AgentSession',
  'pi-agent-wasm/cassette.Recorder',
  'pi-agent-wasm/cassette.ReplayDivergence',
  'pi-agent-wasm/cassette.ReplayOptions',
  'pi-agent-wasm/cassette.ReplayResult',
  'pi-agent-wasm/cassette.CassetteSummary',
];

/** The TypeDoc options; `staging` holds the declarations and tsconfig.json. */
function typedocOptions(staging, out) {
  return {
    name: 'pi-agent-wasm',
    tsconfig: join(staging, 'tsconfig.json'),
    entryPoints: ENTRIES.map(([file]) => join(staging, file)),
    entryPointStrategy: 'resolve',
    readme: join(staging, 'intro.md'),
    plugin: ['typedoc-plugin-markdown'],
    out,
    // Deterministic output: no links to sources or a git revision, no version, no dates.
    disableSources: true,
    disableGit: true,
    includeVersion: false,
    githubPages: false,
    excludePrivate: true,
    excludeExternals: true,
    // Every export documented; anything TypeDoc would warn about fails the run.
    validation: { notExported: true, notDocumented: true, invalidLink: true, rewrittenLink: true, unusedMergeModuleWith: true },
    requiredToBeDocumented: ['Module', 'Namespace', 'Enum', 'Variable', 'Function', 'Class', 'Interface', 'TypeAlias', 'Constructor', 'Method', 'Accessor'],
    intentionallyNotExported: INTERNAL_TYPES,
    treatWarningsAsErrors: true,
    treatValidationWarningsAsErrors: true,
    logLevel: 'Warn',
    // typedoc-plugin-markdown: tables read well on GitHub; one page per module and export.
    router: 'member',
    entryFileName: 'README.md',
    mergeReadme: true,
    hidePageHeader: true,
    indexFormat: 'table',
    parametersFormat: 'table',
    interfacePropertiesFormat: 'table',
    classPropertiesFormat: 'table',
    typeDeclarationFormat: 'table',
    propertyMembersFormat: 'table',
    useCodeBlocks: true,
    sanitizeComments: true,
  };
}

const TITLE = '# pi-agent-wasm API reference';

/** The entry page's text; the list of the entries follows it (`mergeReadme`). */
const INTRO = `${TITLE}

The agent loop of \`@earendil-works/pi-agent-core\` 1.6.0 in Rust/WebAssembly: every export of the
package's four entries, generated from its TypeScript declarations by \`npm run api-docs\`
(scripts/api-docs.mjs). GUIDE_LINK
`;
/** TypeDoc takes a relative link in the staged intro for a file to copy, so the link to the
 * repository's README is put into the rendered page. */
const GUIDE = ['GUIDE_LINK', 'The [README](../../README.md) and the pages in [docs/](../) are the guide.'];

/** Copies the declarations into a fresh directory, with models.d.ts, a package.json naming
 * the package, and a tsconfig.json listing the entries. */
function stage(edit = (_file, text) => text) {
  const staging = mkdtempSync(join(tmpdir(), 'pi-agent-wasm-api-docs-'));
  for (const file of ['index.d.ts', 'ai.d.ts', 'cloudflare.d.ts', 'cassette.d.ts']) {
    writeFileSync(join(staging, file), edit(file, readFileSync(join(root, 'src', 'js', file), 'utf8')));
  }
  writeFileSync(join(staging, 'models.d.ts'), edit('models.d.ts', generateModels().dts));
  writeFileSync(join(staging, 'package.json'), `${JSON.stringify({ name: 'pi-agent-wasm', private: true, type: 'module' })}\n`);
  writeFileSync(
    join(staging, 'tsconfig.json'),
    `${JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
      },
      files: ENTRIES.map(([file]) => file),
    })}\n`,
  );
  writeFileSync(join(staging, 'intro.md'), INTRO);
  return staging;
}

/** The members of the MEMBERS_DOCUMENTED types that have no comment: their full names. */
function undocumentedMembers(project) {
  const missing = [];
  const found = new Set();
  for (const reflection of project.getReflectionsByKind(ReflectionKind.Class | ReflectionKind.Interface)) {
    const name = reflection.getFullName();
    if (!MEMBERS_DOCUMENTED.includes(name)) continue;
    found.add(name);
    for (const member of reflection.children ?? []) {
      const signatures = member.signatures ?? [member.getSignature, member.setSignature].filter(Boolean);
      const documented = member.hasComment() || signatures.some((s) => s.hasComment());
      if (!documented) missing.push(member.getFullName());
    }
  }
  for (const name of MEMBERS_DOCUMENTED) if (!found.has(name)) missing.push(`${name} (listed in MEMBERS_DOCUMENTED, not found)`);
  return missing;
}

/** How many exports each module documents: [module name, count][]. */
function exportCounts(project) {
  return (project.children ?? []).map((module) => [module.name, (module.children ?? []).length]);
}

/** Refuses to replace a directory that is not empty and not a reference this script wrote. */
function checkReplaceable(out) {
  if (!existsSync(out) || readdirSync(out).length === 0) return;
  const entry = join(out, 'README.md');
  if (existsSync(entry) && readFileSync(entry, 'utf8').startsWith(`${TITLE}\n`)) return;
  throw new Error(`api-docs: ${out} is not empty and holds no API reference; refusing to replace it`);
}

/**
 * Generates the reference into `out`, replacing what is there. Resolves with `problems`
 * (TypeDoc's warnings and errors, and undocumented members; empty when all is well) and the
 * exports per module. Writes nothing when there are problems.
 *
 * `edit(file, text)`, when given, may change each staged declaration file's text (for the
 * test that checks that an undocumented export is caught); `quiet` keeps TypeDoc's messages
 * off the console (they are in `problems` all the same).
 */
export async function buildApiDocs(out = DEFAULT_OUT, { edit, quiet = false } = {}) {
  out = resolve(out);
  checkReplaceable(out);
  const staging = stage(edit);
  const rendered = join(staging, 'out');
  const problems = [];
  try {
    const app = await Application.bootstrapWithPlugins(typedocOptions(staging, rendered), [new TSConfigReader()]);
    const logger = app.logger;
    // Logger's own log only counts the message; the console logger's prints it too.
    const log = quiet ? Logger.prototype.log.bind(logger) : logger.log.bind(logger);
    logger.log = (message, level) => {
      // 2: warning, 3: error. Without the terminal colours and the temporary directory.
      // eslint-disable-next-line no-control-regex
      if (level >= 2) problems.push(String(message).replace(/\x1b\[[0-9;]*m/g, '').replaceAll(staging, '<staging>'));
      log(message, level);
    };
    if (logger.hasErrors() || logger.hasWarnings()) problems.push('TypeDoc reported problems while reading its options (above)');
    const project = await app.convert();
    if (!project) {
      problems.push('TypeDoc could not convert the declarations');
      return { problems, counts: [] };
    }
    app.validate(project);
    problems.push(...undocumentedMembers(project).map((name) => `${name}: a member of an option or hook type without a doc comment`));
    const counts = exportCounts(project);
    const names = counts.map(([name]) => name);
    for (const [file, name] of ENTRIES) {
      if (!names.includes(name)) problems.push(`no module ${name}: ${file} must start with a doc comment tagged @module ${name}`);
    }
    if (problems.length === 0) await app.generateOutputs(project);
    if ((logger.hasErrors() || logger.hasWarnings()) && problems.length === 0) problems.push('TypeDoc reported warnings or errors');
    if (problems.length === 0) {
      const entry = join(rendered, 'README.md');
      writeFileSync(entry, readFileSync(entry, 'utf8').replace(...GUIDE));
      rmSync(out, { recursive: true, force: true });
      cpSync(rendered, out, { recursive: true });
    }
    return { problems, counts };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? DEFAULT_OUT;
  const started = performance.now();
  let result;
  try {
    result = await buildApiDocs(out);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
  const { problems, counts } = result;
  if (problems.length > 0) {
    console.error(`api-docs: ${problems.length} problem(s); nothing written:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    process.exit(1);
  }
  const total = counts.reduce((n, [, c]) => n + c, 0);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`api-docs: ${total} exports (${counts.map(([m, c]) => `${m} ${c}`).join(', ')}) -> ${relative(process.cwd(), resolve(out)) || '.'} in ${seconds} s`);
}
