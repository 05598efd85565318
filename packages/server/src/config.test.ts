import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('takes an inline policy and names an unknown key by its path', async () => {
    const dir = await folder();
    await writeFile(join(dir, 'a.yaml'), 'policy: { version: 1, default: deny, rules: [] }\n');
    expect((await readServerConfig(join(dir, 'a.yaml'))).policySource).toBe('inline');
    await writeFile(join(dir, 'b.yaml'), 'prot: 7420\n');
    await expect(readServerConfig(join(dir, 'b.yaml'))).rejects.toMatchObject({
      kind: 'request-invalid',
      message: expect.stringContaining('.prot: unknown field'),
    });
    await writeFile(join(dir, 'c.yaml'), 'webhook: { url: "https://x.example", secret_env: MISSING }\n');
    await expect(readServerConfig(join(dir, 'c.yaml'), {})).rejects.toMatchObject({
      message: expect.stringContaining('MISSING'),
    });
  });
});
