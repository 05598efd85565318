// A synthetic but realistic policy and calls for timing `Policy.evaluate` (DESIGN §7: 200 rules,
// p50 <= 5 µs). Used by bench/ and by a smoke test; not part of the engine's behaviour.
import { compilePolicy, type Policy, type PolicyInput } from '@callgate/core';

const VERBS = [
  'read',
  'list',
  'get',
  'search',
  'create',
  'update',
  'delete',
  'send',
  'export',
  'run',
] as const;
const NOUNS = [
  'file',
  'invoice',
  'customer',
  'order',
  'ticket',
  'email',
  'report',
  'contract',
  'user',
  'payment',
] as const;

/** The 100 tool names the bench policy speaks about: `<verb>_<noun>`. */
export const BENCH_TOOL_NAMES: readonly string[] = VERBS.flatMap((verb) =>
  NOUNS.map((noun) => `${verb}_${noun}`),
);

function tool(index: number): string {
  return BENCH_TOOL_NAMES[index % BENCH_TOOL_NAMES.length] ?? 'read_file';
}

/**
 * A policy of `ruleCount` rules over the 100 tool names of {@link BENCH_TOOL_NAMES}, in a mix a
 * real policy might have: exact-name rules (some with CEL on `args`, `run`, `call`), globs over
 * verbs and nouns, annotation rules and a few rules for every tool.
 */
export function makeBenchPolicy(ruleCount: number): Policy {
  const rules: Record<string, unknown>[] = [];
  for (let index = 0; index < ruleCount; index++) {
    const id = `rule-${index}`;
    const group = Math.floor(index / 10);
    const verb = VERBS[group % VERBS.length] ?? 'read';
    const noun = NOUNS[(group * 3) % NOUNS.length] ?? 'file';
    switch (index % 10) {
      case 0:
        // Globs over a verb or a noun.
        if (group % 2 === 0) {
          const readOnly = ['read', 'list', 'get', 'search'].includes(verb);
          rules.push({ id, match: { tools: [`${verb}_*`] }, effect: readOnly ? 'allow' : 'ask' });
        } else {
          rules.push({
            id,
            match: { tools: [`*_${noun}`] },
            when: 'run.labels.env == "prod"',
            effect: 'ask',
          });
        }
        break;
      case 1:
        rules.push({
          id,
          match: { tools: [tool(index * 7)] },
          when: `args.amount > ${index * 10}`,
          effect: 'ask',
        });
        break;
      case 2:
        rules.push({ id, match: { tools: [tool(index * 3)] }, when: '"env" in run.labels', effect: 'allow' });
        break;
      case 3:
        rules.push({
          id,
          match: { tools: [tool(index), tool(index + 31)] },
          effect: 'deny',
          reason: `${id} blocks`,
        });
        break;
      case 4:
        rules.push({
          id,
          match: { tools: [tool(index * 3)] },
          when: 'has(args.to) && args.to.endsWith("@example.com")',
          effect: 'allow',
        });
        break;
      case 5:
        rules.push({ id, match: { tools: [tool(index * 11)] }, when: 'call.attempt > 3', effect: 'deny' });
        break;
      case 6:
        // A few rules for every tool with side effects; the rest name their tools.
        rules.push({
          id,
          match:
            group < 2
              ? { annotations: { destructiveHint: true } }
              : { tools: [tool(index * 5)], annotations: { destructiveHint: true } },
          when: group < 2 ? 'provenance.untrusted' : `"${tool(index)}" in provenance.sources`,
          effect: 'deny',
        });
        break;
      case 7:
        rules.push({
          id,
          match: { tools: [tool(index * 13)], annotations: { readOnlyHint: true } },
          effect: 'allow',
        });
        break;
      case 8:
        rules.push({
          id,
          match: { tools: [tool(index * 17)] },
          when: `run.principal == "user-${index}"`,
          effect: 'allow',
        });
        break;
      default:
        rules.push({ id, match: { tools: [tool(index * 19)] }, effect: 'allow' });
    }
  }
  return compilePolicy(
    {
      version: 1,
      default: 'deny',
      trust: { untrusted: ['read_email', 'search_*'] },
      profiles: { observe: ['read_*', 'list_*', 'get_*', 'search_*'] },
      rules,
    },
    { source: 'bench-policy' },
  );
}

/** `count` calls spread over the bench tool names, with small realistic arguments. */
export function makeBenchInputs(count: number): PolicyInput[] {
  const inputs: PolicyInput[] = [];
  for (let index = 0; index < count; index++) {
    const name = tool(index * 37);
    inputs.push({
      tool: { name, annotations: { readOnlyHint: name.startsWith('read_') || name.startsWith('list_') } },
      args: { amount: (index * 97) % 2_000, to: `someone-${index}@example.com`, note: 'bench' },
      call: { id: `call-${index}`, attempt: 1 + (index % 5), minted: false },
      run: {
        id: 'run-bench',
        principal: `user-${index % 50}`,
        framework: 'bench',
        labels: { env: index % 2 ? 'prod' : 'dev' },
      },
      provenance: { untrusted: index % 3 === 0, sources: index % 3 === 0 ? [tool(index)] : [] },
    });
  }
  return inputs;
}
