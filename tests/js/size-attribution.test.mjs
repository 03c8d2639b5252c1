// The size report by part (scripts/size-attribution.mjs) reads twiggy's CSV as twiggy writes
// it: names quoted when they hold commas or quotes, each item counted once, in the first part
// whose pattern matches. (The script that makes the CSV, `npm run size`, needs a minute and
// twiggy; this checks the counting that turns it into the report.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers.mjs';

test('the size report sums twiggy items into parts, quoted names included', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'size-attr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const csv = join(dir, 'top.csv');
  writeFileSync(
    csv,
    [
      'Name,ShallowSize,ShallowSizePercent,RetainedSize,RetainedSizePercent',
      '"""function names"" subsection",1000,10,,',
      'pi_agent_wasm::provider::anthropic_request::build::h1,2048,20,,',
      '"<pi_agent_wasm::provider::google::GoogleDecoder as pi_agent_wasm::provider::Decoder>::event::h2",1024,10,,',
      '"<core::iter::adapters::map::Map<I,F> as core::iter::traits::iterator::Iterator>::next::h3",512,5,,',
      'pi_agent_wasm::agent::validate::check::Schema::walk::h4,3072,30,,',
      'data segment ".rodata",1536,15,,',
      'mystery,1040,10,,',
    ].join('\n'),
  );
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts/size-attribution.mjs'), csv, '--top', '2'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const part = (name) => {
    const line = r.stdout.split('\n').find((l) => l.endsWith(`  ${name}`));
    assert.ok(line, `no line for ${name} in\n${r.stdout}`);
    return Number(line.trim().split(/\s+/)[0]);
  };
  assert.equal(part('providers: requests'), 2);
  assert.equal(part('providers: decoders'), 1);
  assert.equal(part('argument validation'), 3);
  assert.equal(part('data (strings, tables)'), 1.5);
  assert.equal(part('core (fmt, str, char tables)'), 0.5);
  assert.equal(part('other (unnamed generics, glue)'), 1);
  assert.equal(part('total'), 10); // 10,232 bytes
  assert.match(r.stdout, /largest 2 items\n\s+1\.0\s+"function names" subsection\n\s+2\.0\s+pi_agent_wasm::provider::anthropic_request/);
});
