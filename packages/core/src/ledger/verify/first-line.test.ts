// The first line of a bundle file (manifest, openings, policies, proofs, checkpoints) is held to
// exact text as its record lines are (docs/ledger.md, "One record a line"): generated mutations of
// real exported bundles' first lines either fail verification (`canonical`) or are provably
// meaning-preserving. Another spelling of a number (`4999.9999999999999999` for 5000), another
// escape of a string or added whitespace (inside the line or around it) fails; so does a field its
// schema does not define in a nested entry, an entry given twice, or an opening or run key
// removed so that a decision's keyed digest goes unchecked. Only another key order of an object is
// accepted, and then the bundle read is the same bundle (JSON objects are unordered and the
// verifier reads fields by name).
import { testEngine } from '@callgate/testing';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseBundleText, serializeBundle } from '../bundle-text.js';
import { verifyBundleText } from './verify-bundle.js';

const RECORDS_OPEN = '"records":[';

interface Exported {
  text: string;
  publicKey: string;
}

/** Real exports: a run with an allowed and an asked call, openings on; `/3` and `/1` layouts. */
async function exports(): Promise<Exported[]> {
  const { engine, runId, signer } = await testEngine({ vault: true });
  await engine.decide(runId, [
    { id: 'c1', tool: 'send_invoice', arguments: { to: 'acme/é', amount: 500 } },
    { id: 'c2', tool: 'send_invoice', arguments: { to: 'globex', amount: 5000 } },
    { id: 'c3', tool: 'read_file', arguments: { path: 'a/b.txt' } },
  ]);
  await engine.recordOutcome(runId, { call_id: 'c1', outcome: 'ok', result: { total: 500.25 } });
  await engine.endRun(runId);
  const made = [
    serializeBundle(await engine.exportRun(runId, { openings: true })),
    serializeBundle(await engine.exportRun(runId, { openings: true, proofs: true })),
  ];
  await engine.close();
  return made.map((text) => ({ text, publicKey: signer.verifierKey }));
}

/** The arguments commitments of the call decisions of a bundle file's records. */
function decidedCommitments(text: string): Set<string> {
  const records = (JSON.parse(text) as { records: Array<Record<string, unknown>> }).records;
  return new Set(
    records
      .filter((record) => record.type === 'call-decision' && typeof record.arguments_commitment === 'string')
      .map((record) => record.arguments_commitment as string),
  );
}

/** Token spans of JSON text: strings and numbers (start inclusive, end exclusive), and separators. */
function tokens(text: string) {
  const strings: Array<[number, number]> = [];
  const numbers: Array<[number, number]> = [];
  const separators: number[] = [];
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (char === '"') {
      const start = index;
      index += 1;
      while (text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
      strings.push([start, index + 1]);
    } else if (/[-0-9]/.test(char)) {
      const start = index;
      while (/[-+0-9.eE]/.test(text[index + 1] ?? '')) index += 1;
      numbers.push([start, index + 1]);
    } else if (char === ',' || char === ':') separators.push(index);
  }
  return { strings, numbers, separators };
}

/** Other spellings of the number `written` (JSON text) that parse to the same double. */
function respellings(written: string): string[] {
  const value = Number(written);
  const candidates = [
    `${written}.0`.replace(/\.(\d*)\.0$/, '.$10'),
    `${written}e0`,
    `${written}E+0`,
    value.toExponential(),
    Number.isInteger(value) && value > 0
      ? `${value - 1}.99999999999999999999`
      : `${written}00000000000000000001`,
  ];
  const parsesTo = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined; // `000…1` for `0` is not JSON
    }
  };
  return candidates.filter((text) => text !== written && parsesTo(text) === value);
}

/** Objects of `value` (paths) that hold two keys or more. */
function reorderable(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const here = !Array.isArray(value) && Object.keys(value).length >= 2 ? [path] : [];
  return [
    ...here,
    ...Object.entries(value).flatMap(([key, child]) =>
      reorderable(child, [...path, Array.isArray(value) ? Number(key) : key]),
    ),
  ];
}

/** `value` with the object at `path` holding its keys in reverse order. */
function reversedAt(value: unknown, path: Array<string | number>): unknown {
  if (path.length === 0) return Object.fromEntries(Object.entries(value as object).reverse());
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(value))
    return value.map((child, index) => (index === head ? reversedAt(child, rest) : child));
  return Object.fromEntries(
    Object.entries(value as object).map(([key, child]) => [
      key,
      key === head ? reversedAt(child, rest) : child,
    ]),
  );
}

type Mutation =
  | { kind: 'number'; pick: number; spelling: number }
  | { kind: 'escape'; pick: number; at: number }
  | { kind: 'whitespace'; pick: number; space: string }
  | { kind: 'surround'; before: boolean; space: string }
  | { kind: 'key-order'; pick: number }
  | { kind: 'nested-field'; pick: number }
  | { kind: 'duplicate'; pick: number; at: number }
  | { kind: 'unopened'; pick: number };

/** The mutations that keep the bundle's values (another text of the same JSON). */
const SAME_VALUES = new Set<Mutation['kind']>(['number', 'escape', 'whitespace', 'surround', 'key-order']);
/** The fields of line 1 whose entries are objects with a schema, and the lists of entries. */
const ENTRY_LISTS = ['openings', 'policies', 'consistency', 'run_keys', 'proofs'] as const;
const LISTS = ['openings', 'policies', 'checkpoints', 'run_keys', 'consistency'] as const;

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('number' as const), pick: fc.nat(), spelling: fc.nat() }),
  fc.record({ kind: fc.constant('escape' as const), pick: fc.nat(), at: fc.nat() }),
  fc.record({
    kind: fc.constant('whitespace' as const),
    pick: fc.nat(),
    space: fc.constantFrom(' ', '\t', '\r', '  '),
  }),
  fc.record({
    kind: fc.constant('surround' as const),
    before: fc.boolean(),
    space: fc.constantFrom(' ', '\t', '\r', '\n', ' \r'),
  }),
  fc.record({ kind: fc.constant('key-order' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('nested-field' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('duplicate' as const), pick: fc.nat(), at: fc.nat() }),
  fc.record({ kind: fc.constant('unopened' as const), pick: fc.nat() }),
);

/** The line-1 text of `fields` (a parsed first line, `records` left out), as callgate writes it. */
const lineOf = (fields: Record<string, unknown>): string =>
  `${JSON.stringify(fields).slice(0, -1)},${RECORDS_OPEN}`;

/** The objects of line 1's entry lists (and `inclusion`), each a place for an unknown field. */
function entryObjects(fields: Record<string, unknown>): Array<Record<string, unknown>> {
  const lists = ENTRY_LISTS.flatMap((name) => (fields[name] as Array<Record<string, unknown>>) ?? []);
  return fields.inclusion === undefined ? lists : [...lists, fields.inclusion as Record<string, unknown>];
}

/** The first line with `change` applied, or undefined when it has nothing to apply it to. */
function mutated(first: string, change: Mutation, decided: ReadonlySet<string>): string | undefined {
  const head = `${first.slice(0, -RECORDS_OPEN.length)}"records":[]}`;
  const { records: _records, ...fields } = JSON.parse(head) as Record<string, unknown>;
  const { strings, numbers, separators } = tokens(head);
  const replace = (start: number, end: number, text: string) =>
    `${head.slice(0, start)}${text}${head.slice(end)}`.replace(/"records":\[\]\}$/, RECORDS_OPEN);
  switch (change.kind) {
    case 'number': {
      const [start, end] = numbers[change.pick % numbers.length] as [number, number];
      const spellings = respellings(head.slice(start, end));
      if (spellings.length === 0) return undefined;
      return replace(start, end, spellings[change.spelling % spellings.length] as string);
    }
    case 'escape': {
      // A character of a string written as a \u escape (or `/` as `\/`): the same string parsed.
      const [start, end] = strings[change.pick % strings.length] as [number, number];
      const inner = head.slice(start + 1, end - 1);
      const plain = [...inner.matchAll(/[A-Za-z0-9/+=._-]/g)].map((match) => match.index);
      if (plain.length === 0) return undefined;
      const at = start + 1 + (plain[change.at % plain.length] as number);
      const char = head[at] as string;
      const escaped =
        char === '/' && change.at % 2 === 0
          ? '\\/'
          : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
      return replace(at, at + 1, escaped);
    }
    case 'whitespace': {
      // Not the `:` of the trailing `"records":[]}`, which stands for the line's end.
      const before = separators.filter((at) => at < head.lastIndexOf('"records":'));
      const at = before[change.pick % before.length] as number;
      return replace(at + 1, at + 1, change.space);
    }
    case 'surround':
      return change.before ? `${change.space}${first}` : `${first}${change.space}`;
    case 'key-order': {
      const paths = reorderable(fields);
      const path = paths[change.pick % paths.length] as Array<string | number>;
      const reordered = lineOf(reversedAt(fields, path) as Record<string, unknown>);
      return reordered === first ? undefined : reordered;
    }
    case 'nested-field': {
      const objects = entryObjects(fields);
      if (objects.length === 0) return undefined;
      (objects[change.pick % objects.length] as Record<string, unknown>).note = 'x';
      return lineOf(fields);
    }
    case 'duplicate': {
      const lists = LISTS.map((name) => fields[name] as unknown[] | undefined).filter(
        (list): list is unknown[] => list !== undefined && list.length > 0,
      );
      const list = lists[change.pick % lists.length] as unknown[];
      list.splice(change.at % (list.length + 1), 0, structuredClone(list[change.at % list.length]));
      return lineOf(fields);
    }
    case 'unopened': {
      // An opening of a decision's arguments removed, or the run keys emptied or left out.
      const openings = (fields.openings as Array<{ commitment: string }> | undefined) ?? [];
      const opened = openings.filter((opening) => decided.has(opening.commitment));
      if (fields.run_keys === undefined || opened.length === 0) return undefined;
      const way = change.pick % (opened.length + 2);
      if (way === opened.length) fields.run_keys = [];
      else if (way === opened.length + 1) delete fields.run_keys;
      else fields.openings = openings.filter((opening) => opening !== opened[way]);
      return lineOf(fields);
    }
  }
}

describe('the first line of a bundle file', () => {
  let made: Exported[];
  beforeAll(async () => {
    made = await exports();
  });

  it('verifies as exported', () => {
    for (const { text, publicKey } of made)
      expect(verifyBundleText(text, { publicKey, strict: true }).failures).toEqual([]);
  });

  it('fails in any other text or content of line 1, but another key order (generated)', () => {
    const applied = new Map<Mutation['kind'], number>();
    fc.assert(
      fc.property(fc.nat(), mutation, (which, change) => {
        const { text, publicKey } = made[which % made.length] as Exported;
        const cut = text.indexOf('\n');
        const first = mutated(text.slice(0, cut), change, decidedCommitments(text));
        fc.pre(first !== undefined && first !== text.slice(0, cut));
        const changed = `${first}${text.slice(cut)}`;
        // Some mutations keep the values: the same bundle parses (escapes, spellings, spacing).
        if (SAME_VALUES.has(change.kind)) expect(JSON.parse(changed)).toEqual(JSON.parse(text));
        else expect(JSON.parse(changed)).not.toEqual(JSON.parse(text));
        applied.set(change.kind, (applied.get(change.kind) ?? 0) + 1);
        const report = verifyBundleText(changed, { publicKey, strict: true });
        const checks = report.failures.map((failure) => failure.check);
        if (change.kind === 'key-order') {
          // Meaning-preserving: the same bundle is read, and it verifies as the original does.
          expect(parseBundleText(changed).bundle).toEqual(parseBundleText(text).bundle);
          expect(report.failures).toEqual([]);
          return;
        }
        expect(report.ok).toBe(false);
        if (SAME_VALUES.has(change.kind)) expect(checks).toContain('canonical');
        else if (change.kind === 'unopened') {
          expect(checks).toContain('arguments-digest');
          // Without --strict, a warning names what could not be checked.
          const lenient = verifyBundleText(changed, { publicKey });
          expect(lenient.warnings.join('\n')).toMatch(/arguments_digest could not be checked/);
        } else expect(checks).toContain('bundle-shape');
      }),
      { numRuns: 600, seed: 2026_1203 },
    );
    // Every kind of mutation was tried, not filtered away.
    for (const kind of [
      'number',
      'escape',
      'whitespace',
      'surround',
      'key-order',
      'nested-field',
      'duplicate',
    ] as const)
      expect(applied.get(kind) ?? 0).toBeGreaterThan(20);
    expect(applied.get('unopened') ?? 0).toBeGreaterThan(5);
  });

  it('in a layout callgate does not write, verifies by its values: key order, escapes and spacing are free (generated)', () => {
    // Another JSON writer (Python's json.dumps escapes every non-ASCII character as \uXXXX;
    // sort_keys reorders) writes the same values: the bundle is the same bundle.
    const escapeText = (json: string, every: boolean): string => {
      let out = '';
      let inString = false;
      for (let index = 0; index < json.length; index++) {
        const character = json.charAt(index);
        const code = json.charCodeAt(index);
        if (inString && code === 92) {
          out += character + json.charAt(index + 1); // an escape already: kept as it is
          index += 1;
        } else if (code === 34) {
          inString = !inString;
          out += character;
        } else if (inString && (code > 0x7e || (every && /[a-z]/.test(character)))) {
          out += `\\u${code.toString(16).padStart(4, '0')}`;
        } else out += character;
      }
      return out;
    };
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(0, 1, 2, 4),
        fc.boolean(),
        (which, pickRecord, pickPath, indent, everyLetter) => {
          const { text, publicKey } = made[which % made.length] as Exported;
          const bundle = parseBundleText(text).bundle as { records: unknown[] };
          const index = pickRecord % bundle.records.length;
          const paths = reorderable(bundle.records[index]);
          const path = paths[pickPath % paths.length] as Array<string | number>;
          const records = bundle.records.map((record, at) =>
            at === index ? reversedAt(record, path) : record,
          );
          const written = escapeText(JSON.stringify({ ...bundle, records }, null, indent), everyLetter);
          const report = verifyBundleText(written, { publicKey, strict: true });
          expect(report.failures).toEqual(verifyBundleText(text, { publicKey, strict: true }).failures);
        },
      ),
      { numRuns: 60, seed: 2026_1203 },
    );
  });

  it('in a layout callgate does not write (indented), fails another number form or escape', () => {
    const { text, publicKey } = made[0] as Exported;
    const indented = JSON.stringify(parseBundleText(text).bundle, null, 2);
    expect(verifyBundleText(indented, { publicKey, strict: true }).failures).toEqual([]);
    const respelled = indented.replace('"amount": 500', '"amount": 499.99999999999999999');
    expect(respelled).not.toBe(indented);
    const report = verifyBundleText(respelled, { publicKey, strict: true });
    expect(report.failures.map((failure) => failure.check)).toEqual(['canonical']);
  });
});
