// Tampering with the records of an exported run, one test per row: every field of every record
// (nested too) changed in every way its kind allows, and records removed, reordered or forged.
import type { Bundle, LedgerRecord } from '@callgate/protocol';
import { changeCharacter, expectCaught, tamperBase, ZERO_DIGEST } from '@callgate/testing';
import { describe, expect, it } from 'vitest';
import { hashRecord } from '../record.js';
import { verifyBundle } from './verify-bundle.js';

const { honest, pinned, tampered } = await tamperBase();

type Path = Array<string | number>;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function at(root: unknown, path: Path): Json {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown>)[key], root) as Json;
}
function setAt(root: unknown, path: Path, value: Json | undefined): void {
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  const key = path.at(-1) as string | number;
  if (value === undefined) delete parent[key];
  else parent[key] = value;
}

/** The ways to change the value at a path, by its kind. */
function mutationsOf(value: Json): Array<[kind: string, change: (old: Json) => Json | undefined]> {
  if (typeof value === 'string') return [['changed character', (old) => changeCharacter(old as string)]];
  if (typeof value === 'number') return [['plus one', (old) => (old as number) + 1]];
  if (typeof value === 'boolean') return [['flipped', (old) => !old]];
  if (value === null) return [['set', () => ZERO_DIGEST]];
  if (Array.isArray(value)) {
    return [
      ['element added', (old) => [...(old as Json[]), (old as Json[]).at(-1) ?? 'x']],
      ...(value.length > 0
        ? [['element removed', (old: Json) => (old as Json[]).slice(0, -1)] as const]
        : []),
    ] as Array<[string, (old: Json) => Json | undefined]>;
  }
  return [['key added', (old) => ({ ...(old as Record<string, Json>), extra: 'x' })]];
}

interface FieldRow {
  name: string;
  index: number;
  path: Path;
  change: (old: Json) => Json | undefined;
}

/** Every field of every record (nested too), every way its kind can change, and its removal. */
function fieldRows(bundle: Bundle): FieldRow[] {
  const rows: FieldRow[] = [];
  bundle.records.forEach((record, index) => {
    const label = `record ${index} (${(record as LedgerRecord).type})`;
    const visit = (path: Path, value: Json, removable: boolean) => {
      const where = path.slice(1).join('.');
      for (const [kind, change] of mutationsOf(value))
        rows.push({ name: `${label} ${where}: ${kind}`, index, path, change });
      if (removable) rows.push({ name: `${label} ${where}: removed`, index, path, change: () => undefined });
      if (Array.isArray(value)) for (const [i, item] of value.entries()) visit([...path, i], item, false);
      else if (value !== null && typeof value === 'object')
        for (const [key, item] of Object.entries(value)) visit([...path, key], item, true);
    };
    for (const [key, value] of Object.entries(record as Record<string, Json>))
      visit([index, key], value, true);
  });
  return rows;
}

const FIELD_ROWS = fieldRows(honest.bundle);

describe('a changed byte in any field of any record is caught', () => {
  it('covers every record and every kind of value', () => {
    expect(new Set(FIELD_ROWS.map((row) => row.index)).size).toBe(honest.bundle.records.length);
    const kinds = new Set(FIELD_ROWS.map((row) => row.name.split(': ').at(-1)));
    for (const kind of [
      'changed character',
      'plus one',
      'flipped',
      'set',
      'element added',
      'element removed',
    ])
      expect(kinds).toContain(kind);
  });

  it.each(FIELD_ROWS)('$name', ({ index, path, change }) => {
    const original = honest.bundle.records[index] as LedgerRecord;
    const bundle = tampered((copy) => {
      const records = copy.records as unknown[];
      setAt(records, path, change(at(records, path)));
    });
    const report = verifyBundle(bundle, pinned);
    expect(report.ok).toBe(false);
    const changed = bundle.records[index] as Partial<LedgerRecord>;
    const named = report.failures.some(
      (failure) =>
        failure.seq === original.seq ||
        (failure.seq !== undefined && failure.seq === changed.seq) ||
        (failure.seq === undefined && failure.type === changed.type),
    );
    expect(named, JSON.stringify(report.failures)).toBe(true);
  });
});

describe('removed, reordered and forged records are caught', () => {
  const without = (index: number) =>
    tampered((bundle) => {
      bundle.records.splice(index, 1);
      bundle.proofs.splice(index, 1);
    });

  it.each([0, 5, 9])('record %i deleted', (index) => {
    expectCaught(verifyBundle(without(index), pinned), 'run-sequence');
  });

  it('the last record (run-end) deleted, with strict', () => {
    const last = honest.bundle.records.length - 1;
    expect(verifyBundle(without(last), pinned).ok).toBe(true);
    expectCaught(verifyBundle(without(last), { ...pinned, strict: true }), 'run-end');
  });

  it('two records swapped, with their proofs', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        for (const list of [bundle.records, bundle.proofs] as unknown[][])
          [list[6], list[7]] = [list[7], list[6]];
      }),
      pinned,
    );
    expectCaught(report, 'record-order');
    expectCaught(report, 'chain');
  });

  it('two records swapped, proofs left in place', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        [bundle.records[6], bundle.records[7]] = [bundle.records[7], bundle.records[6]];
      }),
      pinned,
    );
    expectCaught(report, 'inclusion');
  });

  it('a forged record appended, chained correctly but not in the log', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const last = bundle.records.at(-1) as LedgerRecord;
        const forged: LedgerRecord = {
          ...(bundle.records[14] as LedgerRecord),
          seq: last.seq + 1,
          run_seq: last.run_seq + 1,
          prev: hashRecord(last).digest,
        };
        bundle.records.push(forged);
        bundle.proofs.push({ ...(bundle.proofs.at(-1) as Bundle['proofs'][number]), leaf_index: forged.seq });
      }),
      pinned,
    );
    expectCaught(report, 'inclusion');
  });

  it('a forged record inserted in the middle', () => {
    const report = verifyBundle(
      tampered((bundle) => {
        const forged = {
          ...(bundle.records[4] as LedgerRecord),
          seq: (bundle.records[4] as LedgerRecord).seq + 1,
        };
        bundle.records.splice(5, 0, forged);
        bundle.proofs.splice(5, 0, structuredClone(bundle.proofs[4] as Bundle['proofs'][number]));
      }),
      pinned,
    );
    expectCaught(report, 'run-sequence');
    expectCaught(report, 'inclusion');
  });
});
