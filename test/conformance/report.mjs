#!/usr/bin/env node
// Writes docs/adapters-conformance.md from real test results: the JSON reports of the vitest
// runs of the adapters' conformance tests (`--reporter=json`) and the JUnit XML of the Haystack
// suite's (`pytest --junitxml`, python/callgate-haystack/tests/test_conformance.py), read against
// the scenario table.
//
//   node test/conformance/report.mjs [--check] <vitest-json | pytest-junit-xml>...
//
// Each cell is what the test of that scenario, adapter and mode did: passed, failed, did not run,
// or was skipped because the framework cannot express the scenario (the reason is the table's).
// With --check, nothing is written: the command fails when the page differs from what it would
// write, or when any scenario failed or did not run.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const target = join(root, 'docs', 'adapters-conformance.md');
const { adapters, scenarios } = JSON.parse(readFileSync(join(here, 'scenarios.json'), 'utf8'));
const MODES = ['in-process', 'remote'];
/** Adapters tested in fewer modes: Haystack's hook always talks to a server. */
const MODES_OF = { haystack: ['remote'] };
const modesOf = (adapter) => MODES_OF[adapter] ?? MODES;

const args = process.argv.slice(2);
const check = args.includes('--check');
const inputs = args.filter((arg) => arg !== '--check');
if (inputs.length === 0) {
  process.stderr.write('usage: report.mjs [--check] <vitest-json | pytest-junit-xml>...\n');
  process.exit(2);
}

/** `conformance: <adapter> (<mode>)` → results by scenario id. */
const results = new Map();
// A scenario run by several reports (e.g. on Node 20 and Node 22) fails if any run failed.
const rank = (status) => ['failed', 'passed', 'skipped', 'pending'].indexOf(status);
function note(key, status) {
  const known = results.get(key);
  if (known === undefined || rank(status) < rank(known)) results.set(key, status);
}
/** The Haystack suite's JUnit XML: `test_scenario[<id>]` of `tests.test_conformance`. */
function readJunit(text) {
  const cases = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const match of text.matchAll(cases)) {
    const attributes = match[1] ?? '';
    const name = /\bname="test_scenario\[([^\]"]+)\]"/.exec(attributes)?.[1];
    if (!name || !/\bclassname="[^"]*test_conformance"/.test(attributes)) continue;
    const body = match[3] ?? '';
    const status = /<(failure|error)\b/.test(body)
      ? 'failed'
      : /<skipped\b/.test(body)
        ? 'skipped'
        : 'passed';
    note(`haystack remote ${name}`, status);
  }
}
for (const input of inputs) {
  if (input.endsWith('.xml')) {
    readJunit(readFileSync(input, 'utf8'));
    continue;
  }
  const report = JSON.parse(readFileSync(input, 'utf8'));
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      const suite = /^conformance: (\S+) \((.+)\)$/.exec(test.ancestorTitles?.at(-1) ?? '');
      if (!suite) continue;
      const id = test.title.split(' — ')[0];
      note(`${suite[1]} ${suite[2]} ${id}`, test.status);
    }
  }
}

const notes = [];
function footnote(text) {
  let index = notes.indexOf(text);
  if (index < 0) index = notes.push(text) - 1;
  return `[^${index + 1}]`;
}

let problems = 0;
const header = [
  'scenario',
  ...adapters.flatMap((adapter) => modesOf(adapter).map((mode) => `${adapter}<br>${mode}`)),
];
const rows = scenarios.map((scenario) => {
  const cells = adapters.flatMap((adapter) =>
    modesOf(adapter).map((mode) => {
      const framework = scenario.frameworks?.[adapter] ?? {};
      const status = results.get(`${adapter} ${mode} ${scenario.id}`);
      if (framework.unsupported) {
        const mark = footnote(`${adapter}: cannot express “${scenario.id}”: ${framework.unsupported}.`);
        if (framework.refusedWith) {
          // The test runs the row and asserts the framework's own refusal, and that no tool ran.
          if (status === 'passed') return `n/a, refused by the SDK (tested) ${mark}`;
          problems++;
          return status === 'failed' ? '**FAIL**' : '**not run**';
        }
        if (status !== 'skipped' && status !== 'pending') problems++;
        return `n/a ${mark}`;
      }
      if (status === 'passed')
        return framework.note ? `pass ${footnote(`${adapter}: ${framework.note}.`)}` : 'pass';
      problems++;
      return status === 'failed' ? '**FAIL**' : '**not run**';
    }),
  );
  return [`\`${scenario.id}\`: ${scenario.title}`, ...cells];
});

// Columns padded to their widest cell, as the repository's formatter (biome) writes tables.
const table = [header, ...rows];
const widths = header.map((_, column) => Math.max(3, ...table.map((row) => [...row[column]].length)));
const pad = (cell, column) => cell + ' '.repeat(widths[column] - [...cell].length);
const line = (cells) => `| ${cells.map(pad).join(' | ')} |`;
const page = [
  '# Adapter conformance',
  '',
  '<!-- Generated by test/conformance/report.mjs from vitest JSON and pytest JUnit results; do not edit. -->',
  '',
  'One table of scenarios (`test/conformance/scenarios.json`) runs against every TypeScript adapter,',
  "each with its framework's own scripted model, both with callgate in the same process",
  '(`localGovernor`) and behind the server (`remoteGovernor` over the HTTP API), and against the',
  'Haystack hook (`python/callgate-haystack`: a Haystack `Agent` with a scripted chat generator,',
  'against a real `callgate serve`). Each test asserts whether each tool ran, what the model read as',
  'each result, and the ledger records (the run is exported and verified offline). "n/a" marks what',
  'a framework cannot express, with the reason.',
  '',
  line(header),
  line(widths.map((width) => '-'.repeat(width))),
  ...rows.map(line),
  '',
  ...notes.map((note, index) => `[^${index + 1}]: ${note}`),
  '',
  `Results read: ${inputs.map((input) => `\`${relative(root, input)}\``).join(', ')}.`,
  '',
].join('\n');

if (check) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  // The list of result files may differ between machines; compare the rest.
  const body = (text) => text.replace(/^Results read: .*$/m, '');
  if (body(current) !== body(page)) {
    process.stderr.write(
      `${relative(root, target)} is out of date: run node test/conformance/report.mjs ${inputs.join(' ')}\n`,
    );
    process.exit(1);
  }
} else {
  writeFileSync(target, page);
  process.stdout.write(`wrote ${relative(root, target)}\n`);
}
if (problems > 0) {
  process.stderr.write(`${problems} conformance cell(s) failed or did not run\n`);
  process.exit(1);
}
