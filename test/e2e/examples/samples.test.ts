// The sample configurations people start from, and every copy of them in the docs: a YAML block
// whose first line is `# examples/<path>` must be that file, word for word, and the samples must
// load as callgate loads them.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readServerConfig } from '@callgate/server';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');

function markdownFiles(): string[] {
  const files = ['README.md', 'python/callgate-haystack/README.md'];
  for (const name of readdirSync(join(ROOT, 'docs'))) if (name.endsWith('.md')) files.push(`docs/${name}`);
  for (const name of readdirSync(join(ROOT, 'examples'), { withFileTypes: true }))
    if (name.isDirectory()) files.push(`examples/${name.name}/README.md`);
  return files;
}

/** Every fenced block that says which sample it copies: `[markdown file, sample path, text]`. */
function quotedSamples(): Array<[string, string, string]> {
  const found: Array<[string, string, string]> = [];
  for (const file of markdownFiles()) {
    let text: string;
    try {
      text = readFileSync(join(ROOT, file), 'utf8');
    } catch {
      continue;
    }
    for (const match of text.matchAll(/```ya?ml\n(# (examples\/\S+)\n[\s\S]*?)```/g)) {
      found.push([file, match[2] as string, match[1] as string]);
    }
  }
  return found;
}

describe('sample configurations', () => {
  it('are quoted word for word wherever the docs show them', () => {
    const quoted = quotedSamples();
    const where = quoted.map(([file, sample]) => `${file}: ${sample}`);
    expect(where).toEqual(
      expect.arrayContaining([
        'README.md: examples/gateway/callgate.yaml',
        'docs/mcp-gateway.md: examples/gateway/callgate.yaml',
        'docs/mcp-gateway.md: examples/gateway/policy.yaml',
      ]),
    );
    for (const [file, sample, text] of quoted) {
      expect(text, `${file} quotes ${sample}`).toBe(readFileSync(join(ROOT, sample), 'utf8'));
    }
  });

  it('load as callgate serve loads them, the upstream path resolved against the file’s folder', async () => {
    const config = await readServerConfig(join(ROOT, 'examples/gateway/callgate.yaml'));
    expect(config.policySource).toBe(join(ROOT, 'examples/gateway/policy.yaml'));
    expect(config.defaultProfile).toBe('observe');
    expect(Object.keys(config.policy?.profiles ?? {})).toContain('observe');
    expect(config.upstreams).toEqual([
      {
        name: 'files',
        stdio: {
          command: '../../node_modules/.bin/mcp-server-filesystem',
          args: ['./sandbox'],
          cwd: join(ROOT, 'examples/gateway'),
        },
        timeoutMs: 30_000,
      },
    ]);
    expect(config.warnings).toBeUndefined();
  });
});
