// The declarations and the code must agree: for every subpath of package.json's exports map
// with a `types` condition, the value exports its .d.ts declares (read with the TypeScript
// compiler, re-exports followed) must be exactly the exports of the built package imported by
// name in Node. And since a pi user switches by changing one import, every export of
// pi-agent-core 1.6.0 must be exported here too, as a value where pi's is a value and as a
// type where pi's is a type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from './helpers.mjs';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const typed = Object.entries(manifest.exports).filter(([, target]) => typeof target === 'object' && target.types);

const options = ts.convertCompilerOptionsFromJson(
  { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, skipLibCheck: false },
  repoRoot,
).options;

/** The exports of the module a .d.ts declares: name -> { value, type } meanings. */
function declaredExports(dts) {
  return exportSymbols(dts).exports;
}

function exportSymbols(dts) {
  const program = ts.createProgram([dts], options);
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  assert.deepEqual(diagnostics, [], `${dts} does not compile on its own`);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(dts));
  assert.ok(moduleSymbol, `${dts} is not a module`);
  const exports = new Map();
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    exports.set(symbol.name, {
      value: (target.flags & ts.SymbolFlags.Value) !== 0,
      type: (target.flags & ts.SymbolFlags.Type) !== 0,
      symbol: target,
    });
  }
  return { exports, checker };
}

const specifier = (subpath) => `${manifest.name}${subpath.slice(1)}`;

test('the exports map has typed subpaths to check', () => {
  assert.ok(typed.some(([subpath]) => subpath === '.'), 'the root export has a types condition');
});

for (const [subpath, target] of typed) {
  test(`${specifier(subpath)}: the .d.ts declares exactly the runtime's value exports`, async () => {
    const declared = declaredExports(join(repoRoot, target.types));
    const declaredValues = [...declared].filter(([, m]) => m.value).map(([name]) => name).sort();
    const runtime = Object.keys(await import(specifier(subpath))).sort();

    const undeclared = runtime.filter((name) => !declaredValues.includes(name));
    assert.deepEqual(undeclared, [], `exported at runtime but not declared in ${target.types}`);
    const missing = declaredValues.filter((name) => !runtime.includes(name));
    assert.deepEqual(missing, [], `declared in ${target.types} but not exported at runtime`);
  });
}

test('every export of pi-agent-core 1.6.0 is exported with the same meaning (value, type)', () => {
  const pi = declaredExports(join(repoRoot, 'node_modules/@earendil-works/pi-agent-core/dist/index.d.ts'));
  const ours = declaredExports(join(repoRoot, manifest.exports['.'].types));
  assert.ok(pi.size > 40, `pi-agent-core's exports were not read (${pi.size})`);
  const problems = [];
  for (const [name, meaning] of pi) {
    const mine = ours.get(name);
    if (!mine) problems.push(`${name}: not exported`);
    else if (meaning.value && !mine.value) problems.push(`${name}: pi exports a value, this package only a type`);
    else if (meaning.type && !mine.type) problems.push(`${name}: pi exports a type, this package only a value`);
  }
  assert.deepEqual(problems, []);
});

test("Agent's public members are declared as pi declares them: property, accessor or method", () => {
  // A subclass written for pi's Agent overrides an accessor with an accessor and a method
  // with a method; TypeScript refuses the override when the base declares another kind.
  const kinds = (dts) => {
    const { exports } = exportSymbols(dts);
    const agent = exports.get('Agent').symbol;
    const members = new Map();
    for (const [name, member] of agent.members) {
      const declarations = member.declarations ?? [];
      if (declarations.some((d) => ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))) continue;
      if (declarations.some((d) => d.name && ts.isPrivateIdentifier(d.name))) continue;
      members.set(name, declarations.map((d) => ts.SyntaxKind[d.kind]).sort().join('+'));
    }
    return members;
  };
  const pi = kinds(join(repoRoot, 'node_modules/@earendil-works/pi-agent-core/dist/index.d.ts'));
  const ours = kinds(join(repoRoot, manifest.exports['.'].types));
  assert.ok(pi.size > 30, `pi's Agent members were not read (${pi.size})`);
  const problems = [...pi].filter(([name, kind]) => ours.get(name) !== kind).map(([name, kind]) => `${name}: pi ${kind}, here ${ours.get(name) ?? 'missing'}`);
  assert.deepEqual(problems, []);
});
