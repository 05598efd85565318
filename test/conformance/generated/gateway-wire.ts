// What the generated gateway runs draw about the wire, beside the run itself: the form of the
// JSON-RPC ids of the calls sent as raw text (strings, safe integers, integers beyond ±2^53 that a
// double cannot hold), whether a step's raw calls go as one batch with two decoy requests sharing
// an id, whether a successful call asks the upstream for a big integer in its result, and how the
// upstream breaks a `hang` answer (a bare NaN, or a key given twice). And the checks of what the
// client got: every request answered exactly once, with its id as sent, decoys refused (-32600)
// and never run, the upstream's digits as sent.
import fc from 'fast-check';
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';

/** The wire choices of one generated gateway run. */
export interface WireChoices {
  ids: 'string' | 'safe-integer' | 'big-integer';
  /** Send a step's raw calls as one JSON-RPC batch, with two decoy requests sharing one id. */
  batch: boolean;
  /** Digits (beyond 2^53) a succeeding call asks the upstream to return as a bare number, if any. */
  bigResult?: string;
  /** How the upstream answers a call whose act is `hang`: invalid JSON either way. */
  invalid: 'nan' | 'dupkey';
}

/** The choices the fixed counterexamples are replayed with (as before these choices existed). */
export const PLAIN_WIRE: WireChoices = { ids: 'string', batch: false, invalid: 'nan' };

export const wireChoices: fc.Arbitrary<WireChoices> = fc.record(
  {
    ids: fc.constantFrom('string', 'safe-integer', 'big-integer'),
    batch: fc.boolean(),
    bigResult: fc.bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n }).map(String),
    invalid: fc.constantFrom('nan', 'dupkey'),
  },
  { requiredKeys: ['ids', 'batch', 'invalid'] },
) as fc.Arbitrary<WireChoices>;

/** The raw JSON id text of call `index` of run `run` (unique within its session). */
export function idText(wire: WireChoices, tag: string, index: number): string {
  if (wire.ids === 'safe-integer') return String(1_000 + index);
  if (wire.ids === 'big-integer') return String(2n ** 60n + BigInt(index) * 7n);
  return JSON.stringify(tag);
}

/** True when `text` is JSON (RFC 8259: no bare NaN). */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** One JSON-RPC answer as received: its id as raw JSON text, its error code, its raw text. */
export interface WireAnswer {
  id: string;
  code?: string;
  text: string;
}

/** The JSON-RPC answers (responses) in an HTTP body: event stream `data:` lines, or JSON. */
export function answersIn(body: string): WireAnswer[] {
  const events = /^(event|data):/m.test(body)
    ? body
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
    : [body];
  const answers: WireAnswer[] = [];
  for (const event of events) {
    if (event.trim() === '') continue;
    const value = parseLossless(event) as unknown;
    for (const message of (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown>>) {
      if (!('result' in message || 'error' in message)) continue;
      const code = (message.error as { code?: unknown } | undefined)?.code;
      answers.push({
        id: isLosslessNumber(message.id) ? message.id.value : JSON.stringify(message.id),
        ...(code !== undefined ? { code: isLosslessNumber(code) ? code.value : String(code) } : {}),
        text: event,
      });
    }
  }
  return answers;
}

/**
 * Throws unless `body` answers each of `sent` (raw id texts) exactly once and each of `decoys`
 * (raw id texts, each sent twice) twice with -32600, and nothing else; and unless every answer
 * holding the upstream's `big` result quotes `bigResult`'s digits exactly.
 */
export function checkAnswers(
  body: string,
  sent: readonly string[],
  decoys: readonly string[],
  bigResult: string | undefined,
): void {
  const answers = answersIn(body);
  const got = answers.map((answer) => `${answer.id} ${answer.code === '-32600' ? 'refused' : 'answered'}`);
  const wanted = [
    ...sent.map((id) => `${id} answered`),
    ...decoys.flatMap((id) => [`${id} refused`, `${id} refused`]),
  ];
  if (JSON.stringify([...got].sort()) !== JSON.stringify([...wanted].sort()))
    throw new Error(
      `the answers were ${JSON.stringify(got)}, not one per request ${JSON.stringify(wanted)}: ${body}`,
    );
  if (bigResult === undefined) return;
  for (const answer of answers) {
    const quoted = /"structuredContent":\{"big":([^}]*)\}/.exec(answer.text)?.[1];
    if (quoted !== undefined && quoted !== bigResult)
      throw new Error(`the upstream's ${bigResult} reached the client as ${quoted}`);
  }
}
