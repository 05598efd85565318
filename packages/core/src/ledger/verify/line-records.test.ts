// The record pass over a bundle file's lines (LineRecords: one line read at a time, hashed from
// the file's bytes) against the reference reading (parseBundleText: every record parsed and held,
// then verified as a parsed bundle), on generated files: honest, with records changed (so calls,
// fidelity, order, chain (a prev's digit), inclusion and manifest checks fail), and hostile lines (duplicate keys,
// non-canonical numbers, escapes, lone surrogates, huge integers, records out of order, broken
// layout, non-ASCII text). The reports must be equal, failure for failure, in order.
import { buildBundleFixture } from '@callgate/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fastCanonicalJson } from '../../json/canonical.js';
import { serializeBundle } from '../bundle-text.js';
import { verifyBundleText, verifyBundleTextReference } from './verify-bundle.js';

const fixtures = [await buildBundleFixture({ proofs: false }), await buildBundleFixture({ proofs: true })];
const files = fixtures.map(({ bundle }) => serializeBundle(bundle));
const pinned = { publicKey: fixtures[0]?.signer.verifierKey as string };

/** Record lines of a file: [first record line's index in `lines`, how many]. */
function recordLines(lines: string[]): [number, number] {
  return [1, lines.length - 3];
}

/** A change of one record line's text, given the line without its trailing comma. */
type LineChange = (line: string) => string;

/** Changes that keep the line canonical JSON, changing the record (its checks then fail). */
const recordChange = fc
  .oneof(
    fc.constantFrom(
      'effect',
      'outcome',
      'call_id',
      'attempt',
      'seq',
      'run_seq',
      'tool',
      'status',
      'type',
      'prev',
    ),
    fc.constant('reason-non-ascii'),
    // A digest's last hex digit changed: still a digest, so the line stays one the reader reads.
    fc.constantFrom('prev-digit', 'arguments_digest-digit'),
  )
  .map(
    (field): LineChange =>
      (line) => {
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          return line; // an earlier change made the line other than JSON: nothing to change in it
        }
        if (field === 'reason-non-ascii')
          record.reason = `r\u00e9sum\u00e9 \u2014 ${String(record.reason ?? '')}`;
        else if (field.endsWith('-digit')) {
          const name = field.slice(0, -'-digit'.length);
          const digest = record[name];
          if (typeof digest !== 'string') return line;
          const last = digest.at(-1) === '0' ? '1' : '0';
          record[name] = `${digest.slice(0, -1)}${last}`;
        } else if (!(field in record)) return line;
        else if (typeof record[field] === 'number') record[field] = (record[field] as number) + 1;
        else if (field === 'effect') record.effect = record.effect === 'allow' ? 'deny' : 'allow';
        else if (field === 'outcome') record.outcome = record.outcome === 'ok' ? 'denied' : 'ok';
        else if (field === 'status') record.status = record.status === 'approved' ? 'rejected' : 'approved';
        else if (field === 'type') record.type = 'call-end';
        else record[field] = `${String(record[field])}x`;
        try {
          return fastCanonicalJson(record);
        } catch {
          return line; // an earlier change left a value with no canonical form (a lone surrogate)
        }
      },
  );

/** Changes of the text that make it not canonical, not JSON, or odd. */
const hostileChange = fc.constantFrom<LineChange>(
  (line) => line.replace('{', '{"seq":0,'), // duplicate key (or a key out of order)
  (line) => line.replace(/"seq":(\d+)/, '"seq":$1.0'),
  (line) => line.replace(/"seq":(\d+)/, '"seq":$1e0'),
  (line) => line.replace(/"seq":(\d+)/, '"seq":123456789012345678901234567890'),
  (line) => line.replace(/"run_seq":(\d+)/, '"run_seq":-0'),
  (line) => line.replace('"type":"', '"type":"\\u0063'),
  (line) => line.replace(/"reason":"/, '"reason":"\\ud800'),
  (line) => line.replace(/"reason":"/, '"reason":"\ud800'),
  (line) => line.replace(/"reason":"/, '"reason":"\\u00e9\\n'),
  (line) => line.replace(',', ', '),
  (line) => `${line} `,
  (line) => line.slice(0, -1),
  (line) => `${line},`,
  () => '',
);

/** A change of the file: line `at` (modulo the record lines) changed, swapped, removed or doubled. */
const fileChange = fc.oneof(
  fc.tuple(fc.constant('change' as const), fc.nat(), fc.oneof(recordChange, hostileChange)),
  fc.tuple(
    fc.constantFrom('swap' as const, 'remove' as const, 'double' as const),
    fc.nat(),
    fc.constant(undefined),
  ),
);

function changed(text: string, changes: Array<[string, number, LineChange | undefined]>): string {
  const lines = text.split('\n');
  for (const [kind, where, change] of changes) {
    const [first, count] = recordLines(lines);
    if (count < 2) break;
    const at = first + (where % count);
    const last = at === first + count - 1;
    const body = (line: string) => (line.endsWith(',') ? line.slice(0, -1) : line);
    const comma = (line: string, isLast: boolean) => (isLast ? line : `${line},`);
    if (kind === 'change' && change) lines[at] = comma(change(body(lines[at] as string)), last);
    else if (kind === 'swap') {
      const other = last ? at - 1 : at + 1;
      const [a, b] = [body(lines[at] as string), body(lines[other] as string)];
      lines[at] = comma(b, at === first + count - 1);
      lines[other] = comma(a, other === first + count - 1);
    } else if (kind === 'remove') {
      lines.splice(at, 1);
      if (last) lines[at - 1] = body(lines[at - 1] as string);
    } else if (kind === 'double') lines.splice(at, 0, comma(body(lines[at] as string), false));
  }
  return lines.join('\n');
}

describe('the record pass over a file', () => {
  it('reports what the reference reading reports, on changed and hostile files, as text and as bytes', () => {
    fc.assert(
      fc.property(
        fc.nat(files.length - 1),
        fc.array(fileChange, { maxLength: 3 }),
        fc.boolean(),
        fc.boolean(),
        (which, changes, strict, pin) => {
          const text = changed(files[which] as string, changes);
          const options = { ...(pin ? pinned : {}), strict };
          expect(verifyBundleText(text, options)).toEqual(verifyBundleTextReference(text, options));
          // The bytes (a lone surrogate in the text is written as U+FFFD): read from the bytes too.
          const bytes = Buffer.from(text, 'utf8');
          expect(verifyBundleText(bytes, options)).toEqual(verifyBundleTextReference(bytes, options));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('verifies the honest files, and refuses a bad line even when the first line is refused too', () => {
    for (const text of files) expect(verifyBundleText(Buffer.from(text), pinned)).toMatchObject({ ok: true });
    const lines = (files[0] as string).split('\n');
    lines[0] = (lines[0] as string).replace('"format":"callgate-bundle/3"', '"format":"callgate-bundle/9"');
    const badFirst = lines.join('\n');
    expect(verifyBundleText(badFirst, pinned).failures[0]?.check).toBe('bundle-shape');
    lines[3] = `${lines[3]} `;
    const both = lines.join('\n');
    const report = verifyBundleText(Buffer.from(both), pinned);
    expect(report.failures).toEqual([expect.objectContaining({ check: 'canonical' })]);
    expect(report).toEqual(verifyBundleTextReference(both, pinned));
  });
});
