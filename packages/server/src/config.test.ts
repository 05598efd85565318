import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readServerConfig } from './config.js';

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
