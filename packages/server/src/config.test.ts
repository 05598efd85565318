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

describe('callgate.yaml', () => {
  it('reads a policy file, inline tools, paths relative to the file and a secret from the environment', async () => {
    const dir = await folder();
    await writeFile(
      join(dir, 'policy.yaml'),
      'version: 1\ndefault: deny\nrules:\n  - id: reads\n    match: { tools: ["read_*"] }\n    effect: allow\n',
    );
    await writeFile(
      join(dir, 'callgate.yaml'),
      [
        'policy: policy.yaml',
        'tools:',
        '  - name: read_file',
        '    inputSchema: { type: object }',
        'data: ./data',
        'port: 0',
        'webhook: { url: "https://hooks.example/x", secret_env: HOOK_SECRET }',
      ].join('\n'),
    );
    const config = await readServerConfig(join(dir, 'callgate.yaml'), {
      HOOK_SECRET: 'from-the-environment',
    });
    expect(config.policy?.document.rules.map((rule) => rule.id)).toEqual(['reads']);
    expect(config.tools.map((tool) => tool.name)).toEqual(['read_file']);
    expect(config.data).toBe(join(dir, 'data'));
    expect(config.port).toBe(0);
    expect(config.webhook).toEqual({ url: 'https://hooks.example/x', secret: 'from-the-environment' });
  });

  it('refuses a number a double does not hold, naming the field and quoting its digits', async () => {
    const dir = await folder();
    for (const [text, field, kind] of [
      ['port: 12345678901234567890\n', 'port', 'request-invalid'],
      ['request_timeout: 1e400\n', 'request_timeout', 'request-invalid'],
      [
        'policy: { version: 1, default: deny, limits: { run: { max_calls: 12345678901234567890 } } }\n',
        'policy.limits.run.max_calls',
        'policy-invalid',
      ],
    ] as const) {
      await writeFile(join(dir, 'n.yaml'), text);
      const digits = /: ([^ ,}\n]+)/.exec(text.slice(text.lastIndexOf(':') - 1))?.[1] ?? '';
      await expect(readServerConfig(join(dir, 'n.yaml'))).rejects.toMatchObject({
        kind,
        message: expect.stringMatching(
          new RegExp(`n\\.yaml:1:\\d+: ${field.replace(/\./g, '\\.')}: the (number|integer) ${digits} `),
        ),
      });
    }
  });

  it('holds every whole-number and duration field to decimal digits as written (table)', async () => {
    const dir = await folder();
    const upstream = (timeout: string) =>
      `upstreams:\n  - name: files\n    stdio: { command: node }\n    timeout: ${timeout}\n`;
    const fields: ReadonlyArray<readonly [string, (value: string) => string, string, string]> = [
      ['port', (v) => `port: ${v}\n`, 'request-invalid', '1'],
      [
        'witnesses.quorum',
        (v) => `witnesses:\n  quorum: ${v}\n  servers: [{ url: "http://127.0.0.1:1", key: k }]\n`,
        'request-invalid',
        '2',
      ],
      ['upstreams[0].timeout', upstream, 'request-invalid', '4'],
      [
        'policy.limits.run.max_calls',
        (v) => `policy:\n  version: 1\n  limits: { run: { max_calls: ${v} } }\n`,
        'policy-invalid',
        '3',
      ],
      [
        'policy.approval.ttl',
        (v) => `policy:\n  version: 1\n  approval: { ttl: ${v} }\n`,
        'policy-invalid',
        '3',
      ],
    ];
    for (const [field, yaml, kind, line] of fields)
      for (const value of [
        '-0',
        '0x10',
        '0o10',
        '7.0',
        '+5',
        '1e2',
        '010',
        '" 5s"',
        '"5 s"',
        '1_000',
        '.inf',
        '9007199254740992',
      ]) {
        await writeFile(join(dir, 'n.yaml'), yaml(value));
        const error = await readServerConfig(join(dir, 'n.yaml')).then(
          () => undefined,
          (caught: unknown) => caught as { kind: string; message: string },
        );
        expect(error, `${field}: ${value}`).toMatchObject({ kind });
        // One spelling of the field in every message: the gateway's own and the YAML number check.
        expect(error?.message, `${field}: ${value}`).toMatch(
          new RegExp(`n\\.yaml:${line}:\\d+: ${field.replace(/[.[\]]/g, '\\$&')}: `),
        );
      }
    // What the fields take, with the meaning the docs give.
    await writeFile(join(dir, 'ok.yaml'), `port: 16\n${upstream('1500')}`);
    const config = await readServerConfig(join(dir, 'ok.yaml'));
    expect(config.port).toBe(16);
    expect(config.upstreams[0]?.timeoutMs).toBe(1500);
  });

  it('takes an inline policy and names an unknown key by its path', async () => {
    const dir = await folder();
    await writeFile(join(dir, 'a.yaml'), 'policy: { version: 1, default: deny, rules: [] }\n');
    expect((await readServerConfig(join(dir, 'a.yaml'))).policySource).toBe('inline');
    await writeFile(join(dir, 'b.yaml'), 'prot: 7420\n');
    await expect(readServerConfig(join(dir, 'b.yaml'))).rejects.toMatchObject({
      kind: 'request-invalid',
      message: expect.stringMatching(/b\.yaml:1:1: prot: unknown field/),
    });
    await writeFile(join(dir, 'c.yaml'), 'webhook: { url: "https://x.example", secret_env: MISSING }\n');
    await expect(readServerConfig(join(dir, 'c.yaml'), {})).rejects.toMatchObject({
      message: expect.stringContaining('MISSING'),
    });
  });

  it('reads upstreams (cwd resolved against the file’s folder, which is its default) and mcp.default_profile', async () => {
    const dir = await folder();
    await writeFile(
      join(dir, 'callgate.yaml'),
      [
        'upstreams:',
        '  - name: files',
        '    stdio: { command: npx, args: [-y, "@modelcontextprotocol/server-filesystem", ./shared] }',
        '  - name: local',
        '    stdio: { command: ./bin/server, cwd: tools }',
        '  - name: web',
        '    http: { url: "https://mcp.example.com/mcp" }',
        '    trust: untrusted',
        '    timeout: 30s',
        'mcp: { default_profile: observe }',
      ].join('\n'),
    );
    const config = await readServerConfig(join(dir, 'callgate.yaml'));
    expect(config.upstreams).toEqual([
      {
        name: 'files',
        stdio: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', './shared'],
          cwd: dir,
        },
      },
      { name: 'local', stdio: { command: './bin/server', cwd: join(dir, 'tools') } },
      { name: 'web', http: { url: 'https://mcp.example.com/mcp' }, trust: 'untrusted', timeoutMs: 30_000 },
    ]);
    expect(config.defaultProfile).toBe('observe');
    await writeFile(join(dir, 'none.yaml'), 'port: 0\n');
    expect((await readServerConfig(join(dir, 'none.yaml'))).upstreams).toEqual([]);
  });

  it('names the path of an upstream or mcp field that does not validate', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    // FILE:LINE:COLUMN: FIELD: PROBLEM.
    const cases: [string, string][] = [
      ['upstreams:\n  - name: files\n    stdio: { args: [x] }\n', `:3:12: upstreams[0].stdio.command: `],
      [
        'upstreams:\n  - name: a\n    stdio: { command: x }\n  - name: b\n    http: { url: "ftp://x" }\n',
        `:5:18: upstreams[1].http.url: `,
      ],
      ['upstreams: { files: {} }\n', `:1:12: upstreams: must be a list`],
      ['mcp: { default_profile: "no way" }\n', `:1:25: mcp.default_profile: `],
      ['mcp: { profile: x }\n', `:1:8: mcp.profile: unknown field`],
    ];
    for (const [text, message] of cases) {
      await writeFile(file, text);
      const error = (await readServerConfig(file).catch((caught: unknown) => caught)) as Error;
      expect(error).toMatchObject({ kind: 'request-invalid' });
      expect(error.message.startsWith(`${file}:`), error.message).toBe(true);
      expect(error.message.slice(file.length)).toMatch(new RegExp(`^${message.replace(/[.[\]]/g, '\\$&')}`));
    }
  });

  it('names the element and field of a config error, with its line and column', async () => {
    const dir = await folder();
    const file = join(dir, 'c.yaml');
    const cases: [string, string, { line: number; column: number }][] = [
      [
        'port: 7420\ntools:\n  - { name: 5 }\n',
        `${file}: tools[0].name: expected string, received number`,
        { line: 3, column: 13 },
      ],
      [
        'tools:\n  - name: read_file\n    inputSchema: { type: object }\n  - name: write_file\n',
        `${file}: tools[1].inputSchema: missing (expected object)`,
        { line: 4, column: 5 },
      ],
      [
        'tools:\n  - name: read_file\n    inputSchema: {}\n    anotations: {}\n',
        `${file}: tools[0].anotations: unknown field`,
        { line: 4, column: 5 },
      ],
      ['tools: 5\n', `${file}: tools: expected array or string, received number`, { line: 1, column: 8 }],
      ['port: 99999\n', `${file}: port: `, { line: 1, column: 7 }],
      [
        'upstreams:\n  - name: files\n    stdio: { args: [x] }\n',
        `${file}: upstreams[0].stdio.command: `,
        { line: 3, column: 12 },
      ],
    ];
    for (const [text, message, { line, column }] of cases) {
      await writeFile(file, text);
      const error = await readServerConfig(file).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ kind: 'request-invalid', details: { line, column } });
      // FILE:LINE:COLUMN: FIELD: PROBLEM, as a policy's errors read.
      expect((error as Error).message).toContain(message.replace(`${file}: `, `${file}:${line}:${column}: `));
    }
    await writeFile(
      join(dir, 'tools.yaml'),
      '- name: ok\n  inputSchema: {}\n- name: [x]\n  inputSchema: {}\n',
    );
    await writeFile(file, 'tools: tools.yaml\n');
    await expect(readServerConfig(file)).rejects.toMatchObject({
      message: `${join(dir, 'tools.yaml')}:3:9: [1].name: expected string, received array`,
      details: { file: join(dir, 'tools.yaml'), path: '[1].name', line: 3, column: 9 },
    });
  });
});

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

describe('whole-number fields of callgate.yaml', () => {
  it('refuses each bad value in each field, naming the field and saying what is wrong (table)', async () => {
    const dir = await folder();
    const fields = [
      { field: 'port', yaml: (value: string) => `port: ${value}\n` },
      {
        field: 'witnesses.quorum',
        yaml: (value: string) =>
          `witnesses:\n  quorum: ${value}\n  servers:\n    - { url: "http://127.0.0.1:1", key: "k" }\n`,
      },
    ];
    const bad: ReadonlyArray<[string, RegExp]> = [
      ['9007199254740992', /9007199254740992 is beyond the largest safe integer, 9007199254740991/],
      ['-1', /expected a whole number, (0|1) or more \(got -1\)/],
      ['1.5', /expected a whole number \(got 1\.5\)/],
      ['"1"', /expected a whole number \(got the text "1"\)/],
      ['1e400', /1e400/],
    ];
    for (const { field, yaml } of fields)
      for (const [value, says] of bad) {
        const file = join(dir, 'callgate.yaml');
        await writeFile(file, yaml(value));
        const error = await readServerConfig(file).then(
          () => undefined,
          (refused: Error) => refused,
        );
        expect(error?.message, `${field}: ${value}`).toMatch(new RegExp(`${field.replace('.', '\\.')}`));
        expect(error?.message, `${field}: ${value}`).toMatch(says);
      }
  });
});

describe('socket: and socket_mode: in callgate.yaml', () => {
  it('reads the socket relative to the file, its mode as octal text, and refuses it beside host or port', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    await writeFile(file, 'socket: run/callgate.sock\nsocket_mode: "660"\n');
    const config = await readServerConfig(file);
    expect(config.socket).toBe(join(dir, 'run', 'callgate.sock'));
    expect(config.socketMode).toBe(0o660);
    expect(config.port).toBeUndefined();
    for (const mode of ['0600', '600'])
      await writeFile(file, `socket: s.sock\nsocket_mode: "${mode}"\n`).then(async () =>
        expect((await readServerConfig(file)).socketMode).toBe(0o600),
      );
    const refusals: ReadonlyArray<[string, RegExp]> = [
      [
        'socket: s.sock\nport: 7420\n',
        /callgate\.yaml:1:9: socket: give socket .* or host and port .*, not both/,
      ],
      ['host: 127.0.0.1\nsocket: s.sock\n', /callgate\.yaml:2:9: socket: give socket/],
      // YAML reads 600 as the decimal number six hundred: only the text is taken as octal.
      [
        'socket: s.sock\nsocket_mode: 600\n',
        /callgate\.yaml:2:14: socket_mode: a file mode of three octal digits.*written as a string, e\.g\. "600"/,
      ],
      ['socket: s.sock\nsocket_mode: "800"\n', /socket_mode: .*three octal digits/],
      ['socket: s.sock\nsocket_mode: "0o600"\n', /callgate\.yaml:2:14: socket_mode: .*three octal digits/],
      [
        'socket: s.sock\nsocket_mode: "000"\n',
        /callgate\.yaml:2:14: socket_mode: .*read and write for the owner/,
      ],
      ['socket: ""\n', /callgate\.yaml:1:9: socket: a socket path must not be empty/],
      // A mode with no socket is a mistake in the file: it is named where it stands.
      [
        'socket_mode: "660"\n',
        /callgate\.yaml:1:14: socket_mode: is the mode of the socket file: give socket: too/,
      ],
    ];
    for (const [yaml, says] of refusals) {
      await writeFile(file, yaml);
      const error = await readServerConfig(file).then(
        () => undefined,
        (refused: Error) => refused,
      );
      expect(error?.message, yaml).toMatch(says);
    }
  });

  it('takes a socket_mode exactly when it is three octal digits (after an optional 0) keeping the owner read and write', async () => {
    const dir = await folder();
    const file = join(dir, 'callgate.yaml');
    const modes = fc.oneof(
      fc
        .integer({ min: 0, max: 0o777 })
        .chain((mode) =>
          fc.constantFrom(
            mode.toString(8).padStart(3, '0'),
            `0${mode.toString(8).padStart(3, '0')}`,
            `0o${mode.toString(8)}`,
            String(mode),
          ),
        ),
      fc.stringMatching(/^[0-9o]{0,5}$/),
    );
    await fc.assert(
      fc.asyncProperty(modes, async (text) => {
        await writeFile(file, `socket: s.sock\nsocket_mode: "${text}"\n`);
        const read = await readServerConfig(file).then(
          (config) => config.socketMode,
          (refused: Error) => refused,
        );
        const digits = /^0?([0-7]{3})$/.exec(text)?.[1];
        const owner = digits === undefined ? 0 : Number(digits[0]);
        if (digits !== undefined && owner >= 6) expect(read).toBe(Number.parseInt(digits, 8));
        else
          expect((read as Error).message).toMatch(
            /^.*callgate\.yaml:2:14: socket_mode: a file mode of three octal digits/,
          );
      }),
      { numRuns: 60 },
    );
  });
});
