// Durations in a policy file: a whole number with a unit (`500ms`, `60s`, `5m`, `1h`) or a bare
// number of milliseconds.

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d+)(ms|s|m|h)$/;

/**
 * The number of milliseconds `value` stands for, or a sentence saying why it is no duration.
 * Accepts a positive safe integer (milliseconds) or a string `<digits><ms|s|m|h>`; refuses zero,
 * fractions, negative numbers and unitless strings.
 */
export function parseDuration(value: unknown): { ms: number } | { problem: string } {
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) return { ms: value };
    return { problem: `a duration in milliseconds must be a positive whole number (got ${value})` };
  }
  if (typeof value === 'string') {
    const parts = DURATION.exec(value.trim());
    const amount = parts?.[1];
    const unit = parts?.[2];
    if (amount !== undefined && unit !== undefined) {
      const ms = Number(amount) * (UNIT_MS[unit] ?? 1);
      if (Number.isSafeInteger(ms) && ms > 0) return { ms };
      return { problem: `duration ${JSON.stringify(value)} must be positive and not too large` };
    }
  }
  return {
    problem: `expected a duration such as 500ms, 60s, 5m, 1h or a number of milliseconds (got ${JSON.stringify(value)})`,
  };
}
