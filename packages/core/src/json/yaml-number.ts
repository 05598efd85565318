// YAML numbers read as written: a YAML 1.2 core-schema number scalar turned into the JSON number
// token of the same value, so that the one number rule of callgate (`numberHeldExactly`, the rule
// the gate applies to a call's arguments) judges the digits as written, never a rounded double.
import { numberHeldExactly } from './exact-number.js';

const DECIMAL = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
const HEX_OR_OCTAL = /^(?:0x[0-9a-fA-F]+|0o[0-7]+)$/;
const INFINITE = /^[-+]?\.(?:inf|Inf|INF)$/;
const NOT_A_NUMBER = /^\.(?:nan|NaN|NAN)$/;

/**
 * The JSON number token (RFC 8259 §6) whose value is that of the YAML 1.2 core-schema number
 * scalar written `source` (YAML 1.2.2 §10.3.2): `+5` → `5`, `.5` → `0.5`, `5.` → `5`,
 * `-.5e3` → `-0.5e3`, `0x1F` → `31`, `0o17` → `15`. Digits are kept as written, never read
 * through a double. Undefined for `.inf`, `-.inf` and `.nan` (no JSON number has their value)
 * and for text that is not a core-schema number.
 */
export function yamlNumberToken(source: string): string | undefined {
  if (HEX_OR_OCTAL.test(source)) return BigInt(source).toString();
  if (!DECIMAL.test(source)) return undefined;
  let token = source.charCodeAt(0) === 43 ? source.slice(1) : source; // '+'
  const negative = token.charCodeAt(0) === 45; // '-'
  const unsigned = negative ? token.slice(1) : token;
  let body = unsigned.charCodeAt(0) === 46 ? `0${unsigned}` : unsigned; // '.5' → '0.5'
  body = body.replace(/\.(?=[eE]|$)/, ''); // '5.' → '5', '5.e3' → '5e3'
  token = negative ? `-${body}` : body;
  return token;
}

/**
 * Why the YAML number scalar written `source` is not a number a double holds exactly, quoting
 * `source` as written; undefined when it is (`1000`, `0.1`, `1.50`, `1e3`). Refused: `.inf`,
 * `-.inf`, `.nan` (not finite), and any value whose digits a double (IEEE 754 binary64) rounds:
 * `1000.00000000000001`, `12345678901234567890`, `1e-400` (reads as 0), `1e400` (out of range).
 */
export function yamlNumberProblem(source: string): string | undefined {
  if (INFINITE.test(source) || NOT_A_NUMBER.test(source))
    return `the number ${source} is not finite: only finite numbers are accepted`;
  const token = yamlNumberToken(source);
  if (token === undefined) return `${source} is not a YAML number`;
  if (numberHeldExactly(token)) return undefined;
  const read = String(Number(token));
  if (/^-?[0-9]+$/.test(token) && !HEX_OR_OCTAL.test(source))
    return `the integer ${source} is beyond ±(2^53−1): a double does not hold its digits`;
  return `the number ${source} has digits a double does not hold (it would be read as ${read})`;
}
