// callgate.yaml's errors beyond one field: every key listed by `serve --help`, any field at any
// depth broken (generated), tool input schemas, witnesses.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readServerConfig, serverConfigSchema } from './config.js';
import { CONFIG_KEYS } from './defaults.js';

async function folder() {
  return mkdtemp(join(tmpdir(), 'callgate-config-'));
}

/** `text` as a regular expression matching it literally. */
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('the keys of callgate.yaml', () => {
  it('are the ones `callgate serve --help` lists (CONFIG_KEYS), no more, no fewer', () => {
    expect([...CONFIG_KEYS].sort()).toEqual(Object.keys(serverConfigSchema.shape).sort());
  });
});

describe('callgate.yaml errors, generated', () => {
  // Every top-level key, given a value of the wrong type: the message names the file, then the
  // field (never `file.yaml.field`, which reads as a file name), then the line and column.
  const wrongValues: Record<string, fc.Arbitrary<unknown>> = {
    policy: fc.oneof(fc.integer(), fc.boolean(), fc.constant('')),
    tools: fc.oneof(fc.integer(), fc.boolean()),
    data: fc.oneof(fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 2 })),
    store: fc.oneof(fc.integer(), fc.constant('mysql://db/x')),
    log_key: fc.oneof(fc.integer(), fc.boolean()),
    host: fc.oneof(fc.integer(), fc.constant('')),
    port: fc.oneof(
      fc.integer({ min: 65_536 }),
      fc.integer({ max: -1 }),
      fc.constant('7420'),
      fc.double({ min: 0.1, max: 0.9 }),
    ),
    vault: fc.oneof(fc.integer(), fc.constant('yes')),
    synchronous: fc.oneof(fc.constant('OFF'), fc.integer()),
    upstreams: fc.oneof(fc.integer(), fc.constant({ files: {} })),
    webhook: fc.oneof(fc.integer(), fc.constant({ url: 'ftp://x' })),
  };
  it('names FILE: FIELD: and the line and column for a wrong value of any key', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    await fc.assert(
      fc.asyncProperty(
        fc
          .constantFrom(...Object.keys(wrongValues))
          .chain((key) =>
            fc.tuple(fc.constant(key), wrongValues[key] as fc.Arbitrary<unknown>, fc.boolean()),
          ),
        async ([key, value, padded]) => {
          const before = padded ? '# callgate\n' : '';
          await writeFile(file, `${before}${key}: ${JSON.stringify(value)}\n`);
          const error = await readServerConfig(file, {}).catch((caught: unknown) => caught);
          expect(error).toMatchObject({ kind: 'request-invalid' });
          const message = (error as Error).message;
          expect(message, message).toMatch(new RegExp(`^${escaped(file)}:${padded ? 2 : 1}:\\d+: ${key}`));
          expect(message).not.toContain(`${file}.`);
        },
      ),
      { numRuns: 60 },
    );
  });
  // A valid config with fields at every depth; each case breaks one field inside it (a value of
  // the wrong type, a value outside the field's set, or a key the section does not have).
  const valid = () => ({
    port: 7420,
    synchronous: 'NORMAL',
    tools: [{ name: 'read_file', description: 'reads', inputSchema: { type: 'object' } }],
    upstreams: [
      { name: 'files', stdio: { command: 'node', args: ['x'] }, trust: 'trusted', timeout: '30s' },
      { name: 'web', http: { url: 'http://127.0.0.1:1/mcp' }, trust: { default: 'untrusted' } },
    ],
    witnesses: {
      quorum: 1,
      servers: [
        {
          url: 'http://127.0.0.1:2',
          key: 'witness.test/w1+e6754a64+BLDvac9mmAMfo6UM3ZhuGEswRR4MUnSlB9TyBI0y+MK1',
        },
      ],
    },
    webhook: { url: 'http://127.0.0.1:3/hook', secret_env: 'HOOK_SECRET' },
    mcp: { default_profile: 'observe' },
  });
  const breaks: ReadonlyArray<readonly (string | number)[]> = [
    ['port'],
    ['synchronous'],
    ['tools', 0, 'name'],
    ['tools', 0, 'description'],
    ['upstreams', 0, 'name'],
    ['upstreams', 0, 'stdio', 'command'],
    ['upstreams', 0, 'stdio', 'args'],
    ['upstreams', 0, 'trust'],
    ['upstreams', 0, 'timeout'],
    ['upstreams', 1, 'http', 'url'],
    ['upstreams', 1, 'trust', 'default'],
    ['witnesses', 'servers', 0, 'url'],
    ['webhook', 'url'],
    ['mcp', 'default_profile'],
  ];
  const sections: ReadonlyArray<readonly (string | number)[]> = [
    [],
    ['tools', 0],
    ['upstreams', 0],
    ['upstreams', 0, 'stdio'],
    ['upstreams', 1, 'http'],
    ['upstreams', 1, 'trust'],
    ['witnesses'],
    ['witnesses', 'servers', 0],
    ['webhook'],
    ['mcp'],
  ];
  const at = (root: unknown, path: readonly (string | number)[]) =>
    path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
  /** `upstreams[0].stdio.command`: how every message names a field. */
  const spelled = (path: readonly (string | number)[]) =>
    path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');
  it('names any nested field it refuses as FILE:L:C: a[0].b: in callgate words (generated)', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    const wrong = fc.oneof(
      fc.integer({ min: -5, max: 5 }),
      fc.boolean(),
      fc.constant('bogus value'),
      fc.constant(''),
      fc.constant([]),
      fc.constant({ nested: 1 }),
    );
    const change = fc.oneof(
      fc.record({ kind: fc.constant('value' as const), path: fc.constantFrom(...breaks), value: wrong }),
      fc.record({
        kind: fc.constant('key' as const),
        path: fc.constantFrom(...sections),
        key: fc.constantFrom('colour', 'timeout_ms', 'Name'),
      }),
    );
    await fc.assert(
      fc.asyncProperty(change, fc.boolean(), async (edit, flow) => {
        const config = valid();
        const parent = at(config, edit.path.slice(0, -1)) as Record<string | number, unknown>;
        let field: readonly (string | number)[];
        if (edit.kind === 'value') {
          parent[edit.path[edit.path.length - 1] as string | number] = edit.value;
          field = edit.path;
        } else {
          (at(config, edit.path) as Record<string, unknown>)[edit.key] = 1;
          field = [...edit.path, edit.key];
        }
        // The same document as YAML flow style (one line) or block style (JSON lines, indented).
        await writeFile(file, flow ? JSON.stringify(config) : JSON.stringify(config, null, 2));
        const error = await readServerConfig(file, { HOOK_SECRET: 'a secret of 16+ chars' }).then(
          () => undefined,
          (caught: Error) => caught,
        );
        // Some wrong values are right for their field (`args: []`, a profile named `bogus`...).
        if (error === undefined) return;
        const message = error.message;
        expect(error, message).toMatchObject({ kind: 'request-invalid' });
        expect(message).toMatch(new RegExp(`^${escaped(file)}:\\d+:\\d+: [A-Za-z]`));
        // Never the schema library's words, never a dotted index.
        expect(message).not.toMatch(
          /Invalid input|Unrecognized key|Invalid option|Expected|Too small|Too big|Invalid URL|received undefined|expected record|\.\d+[.:]/,
        );
        // The field named is the one broken, one of its ancestors within its section, or a key
        // inside the wrong value itself (`trust: { nested: 1 }` is an object with an unknown key).
        const named = message.slice(message.indexOf(': ') + 2).split(': ')[0] ?? '';
        expect(
          spelled(field).startsWith(named) || named.startsWith(spelled(field)),
          `${named} for ${spelled(field)}: ${message}`,
        ).toBe(true);
        expect(named.split(/[.[]/)[0], message).toBe(String(field[0]));
        if (edit.kind === 'key') expect(message, message).toContain(`${spelled(field)}: unknown field`);
      }),
      {
        numRuns: 150,
        examples: [[{ kind: 'value', path: ['upstreams', 0, 'trust'], value: { nested: 1 } }, false]],
      },
    );
  });
  it('says a YAML syntax error in one line with its place', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('port: 1\nport: 2\n', 'port: [1\n', 'a: b: c\n', '- x\ny: 1\n'),
        async (text) => {
          await writeFile(file, text);
          const message = ((await readServerConfig(file).catch((caught: unknown) => caught)) as Error)
            .message;
          expect(message).toMatch(new RegExp(`^${escaped(file)}:\\d+:\\d+: not valid YAML: `));
          expect(message).not.toMatch(/at line \d+, column \d+/);
          expect(message).not.toContain('\n');
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('tools: in callgate.yaml or a tools file', () => {
  it('refuses an input schema the gate cannot compile at its line, naming the field', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    const cases: [string, RegExp][] = [
      [
        'tools: [{name: a, inputSchema: {type: objectt}}]\n',
        /callgate\.yaml:1:32: tools\[0\]\.inputSchema: its input schema does not compile: schema is invalid: /,
      ],
      [
        'tools:\n  - name: a\n    inputSchema:\n      type: object\n      properties:\n        x: { type: string, pattern: "(a)\\\\1" }\n',
        /callgate\.yaml:6:37: tools\[0\]\.inputSchema\.properties\.x\.pattern: the pattern "\(a\)\\\\1" is not supported/,
      ],
    ];
    for (const [text, says] of cases) {
      await writeFile(file, text);
      const error = await readServerConfig(file).catch((caught: Error) => caught);
      expect(error).toMatchObject({ kind: 'request-invalid' });
      expect((error as Error).message).toMatch(says);
    }
    await writeFile(join(dir, 'tools.yaml'), '- name: a\n  inputSchema: {type: objectt}\n');
    await writeFile(file, 'tools: tools.yaml\n');
    const fromFile = await readServerConfig(file).catch((caught: Error) => caught);
    expect((fromFile as Error).message).toMatch(
      /tools\.yaml:2:16: \[0\]\.inputSchema: its input schema does not compile/,
    );
  });
});

describe('witnesses: in callgate.yaml', () => {
  const key = 'witness.test/w1+e6754a64+BLDvac9mmAMfo6UM3ZhuGEswRR4MUnSlB9TyBI0y+MK1';
  it('names the line and field of a witness key that is no key, a witness listed twice, a quorum no servers meet', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    const cases: [string, RegExp][] = [
      [
        `witnesses:\n  servers:\n    - { url: "http://127.0.0.1:1", key: nope }\n`,
        /callgate\.yaml:3:41: witnesses\.servers\[0\]\.key: a witness key is <name>\+<key id>\+<key>, got "nope"$/,
      ],
      [
        `witnesses:\n  quorum: 2\n  servers:\n    - { url: "http://127.0.0.1:1", key: "${key}" }\n    - { url: "http://127.0.0.1:2", key: "${key}" }\n`,
        /callgate\.yaml:5:41: witnesses\.servers\[1\]\.key: the same witness as witnesses\.servers\[0\]: a quorum counts distinct witnesses/,
      ],
      [
        `witnesses:\n  quorum: 2\n  servers:\n    - { url: "http://127.0.0.1:1", key: "${key}" }\n`,
        /callgate\.yaml:2:11: witnesses\.quorum: 2 cannot be met by 1 server$/,
      ],
    ];
    for (const [text, says] of cases) {
      await writeFile(file, text);
      const error = await readServerConfig(file).catch((caught: Error) => caught);
      expect(error).toMatchObject({ kind: 'request-invalid' });
      expect((error as Error).message).toMatch(says);
    }
  });
});
