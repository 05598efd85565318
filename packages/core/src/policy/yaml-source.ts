// Reads policy YAML: parses one document (YAML 1.2 core schema, duplicate keys refused, any
// error or warning refused, a number a double does not hold refused), and maps document paths back to line:column for messages.
import { LineCounter, parseDocument } from 'yaml';
import { type PolicySource, policyInvalid, type SourceLocator } from './problems.js';
import { YamlLocator } from './yaml-locator.js';
import { firstInexactNumber } from './yaml-numbers.js';

/** A parsed policy text: its plain value and a locator over its source. */
export interface ParsedYaml {
  readonly value: unknown;
  readonly locator: SourceLocator;
}

/**
 * Parses `text` as one YAML document.
 *
 * @throws CallgateError `policy-invalid` for a syntax error, a duplicate key, several documents,
 *   an unknown tag or an unresolved alias, naming `name` and the line:column; and for a number
 *   a double (IEEE 754 binary64) does not hold exactly (`1000.00000000000001`, `1e400`,
 *   `12345678901234567890`, `.inf`), naming its path and quoting its digits as written.
 */
export function parsePolicyYaml(text: string, name: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const locator = new YamlLocator(document, lineCounter, text);
  const source: PolicySource = { name, locator };
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) {
    throw policyInvalid(source, [], `YAML: ${problem.message}`, {
      position: locator.position(problem.pos[0]),
    });
  }
  const inexact = firstInexactNumber(document);
  if (inexact) {
    throw policyInvalid(source, [...inexact.path], inexact.problem, {
      position: locator.position(inexact.offset),
    });
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw policyInvalid(source, [], `YAML: ${(error as Error).message}`, {}, error);
  }
  return { value, locator };
}
