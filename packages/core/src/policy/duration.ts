// Durations, one grammar for every callgate file (policy, callgate.yaml) and one way of printing
// them for people (CLI tables, the inbox, the timeline).

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^((?:0|[1-9][0-9]*)(?:\.[0-9]+)?)(ms|s|m|h)$/;
const MILLISECONDS = /^[1-9][0-9]*$/;

/**
 * The longest duration a timer can hold (2^31 − 1 ms, about 24.8 days): Node runs a longer
 * timeout at once, so a longer approval wait or upstream timeout would act as 1 ms.
 */
export const MAX_DURATION_MS = 2_147_483_647;

const tooLong = (given: string) =>
  `duration ${given} is longer than the longest a timer can hold (2147483647 ms, about 24.8 days)`;

/**
 * The number of milliseconds `value` stands for, or a sentence saying why it is no duration.
 *
 * Accepts a positive safe integer (milliseconds, written in decimal digits) or a string
 * `<number><ms|s|m|h>` whose number may have a fraction (`500ms`, `1.5s`, `30s`, `5m`, `1h`) as
 * long as it comes to a whole number of milliseconds. Refuses zero, negative numbers, unitless
 * strings, spaces anywhere (` 5s`, `5s `, `5 s`), leading zeros (`05s`), numbers written other
 * than in decimal digits (a YAML `0x10`, `+5`, `7.0`, `1e2`), other units (`5 min`, `2d`)
 * anything finer than a millisecond (`0.5ms`, `1.00000000000000001s`: the decimal is read exactly,
 * never rounded through a double) and anything over {@link MAX_DURATION_MS}.
 *
 * @param written the number as its source wrote it (`99999999999999999999`, not the double it
 *   reads as; `0x10`, not 16), held to decimal digits and quoted by the messages; default
 *   `String(value)`.
 */
export function parseDuration(value: unknown, written = String(value)): { ms: number } | { problem: string } {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value > MAX_DURATION_MS) return { problem: tooLong(written) };
    if (Number.isSafeInteger(value) && value > 0) {
      if (MILLISECONDS.test(written)) return { ms: value };
      return {
        problem: `a duration in milliseconds is written in decimal digits${/^[-+]?0[0-9]/.test(written) ? ' without a leading zero' : ''} (got ${written})`,
      };
    }
    return { problem: `a duration in milliseconds must be a positive whole number (got ${written})` };
  }
  if (typeof value === 'string') {
    const parts = DURATION.exec(value);
    const amount = parts?.[1];
    const unit = parts?.[2];
    if (amount !== undefined && unit !== undefined) {
      // In exact decimal arithmetic, never through a double: `1.00000000000000001s` is not 1000
      // ms rounded, it is finer than a millisecond (docs/ledger.md, invariant 4).
      const [whole = '', fraction = ''] = amount.split('.');
      const scaled = BigInt(whole + fraction) * BigInt(UNIT_MS[unit] ?? 1);
      const divisor = 10n ** BigInt(fraction.length);
      if (scaled % divisor !== 0n)
        return { problem: `duration ${JSON.stringify(value)} is finer than a millisecond` };
      const ms = scaled / divisor;
      if (ms > BigInt(MAX_DURATION_MS)) return { problem: tooLong(JSON.stringify(value)) };
      if (ms > 0n) return { ms: Number(ms) };
      return { problem: `duration ${JSON.stringify(value)} must be longer than 0` };
    }
  }
  return {
    problem: `expected a duration such as 500ms, 1.5s, 60s, 5m, 1h or a number of milliseconds (got ${JSON.stringify(value)})`,
  };
}

/**
 * A duration for people: `0.3 ms`, `42 ms`, `35.7 s`, `4 min 56 s`, `2 h 5 min`, `3 d 4 h`.
 * Below 100 ms one decimal is kept (`1.8 ms`), below a minute seconds have one decimal, above it
 * whole units are shown two at a time (the smaller one omitted when zero).
 *
 * Self-contained (it refers to nothing outside its body), so the web UI's script embeds this very
 * function's source for its live countdowns.
 *
 * @param ms milliseconds; negative or non-finite values print as `0 ms`.
 */
export function formatDuration(ms: number): string {
  const trimmed = (value: number) => value.toFixed(1).replace(/\.0$/, '');
  if (!Number.isFinite(ms) || ms <= 0) return '0 ms';
  if (ms < 99.95) return `${trimmed(ms)} ms`;
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 59_950) return `${trimmed(ms / 1000)} s`;
  const seconds = Math.round(ms / 1000);
  const steps: Array<[number, string, number, string]> = [
    [86_400, 'd', 3_600, 'h'],
    [3_600, 'h', 60, 'min'],
    [60, 'min', 1, 's'],
  ];
  for (const [size, unit, smallSize, smallUnit] of steps) {
    if (seconds < size) continue;
    const big = Math.floor(seconds / size);
    const small = Math.floor((seconds - big * size) / smallSize);
    return small > 0 ? `${big} ${unit} ${small} ${smallUnit}` : `${big} ${unit}`;
  }
  return `${seconds} s`;
}
