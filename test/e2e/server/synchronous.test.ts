// `callgate serve --synchronous` and `synchronous:` in callgate.yaml: the durability the server
// runs under, as its exports record it.
import { CallgateClient } from '@callgate/client';
import { describe, expect, it } from 'vitest';
import { startCallgate, TOOLS_YAML } from './harness.js';

async function exportedMode(options: { config?: string; arguments?: string[] }) {
  const server = await startCallgate({ keys: { bot: 'agent', root: 'admin' }, ...options });
  try {
    const agent = new CallgateClient({ url: server.url, apiKey: server.keys.bot ?? '' });
    const run = await agent.startRun({ framework: 'durability' });
    await agent.endRun(run.run_id);
    const admin = new CallgateClient({ url: server.url, apiKey: server.keys.root ?? '' });
    const bundle = await admin.exportRun(run.run_id);
    return {
      bundle: bundle.synchronous,
      printed: /data\s+.*\(SQLite, synchronous (\w+)\)/.exec(server.output())?.[1],
    };
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

describe('callgate serve durability', () => {
  it('runs NORMAL by default, FULL from callgate.yaml, and the flag wins over the file', async () => {
    expect(await exportedMode({})).toEqual({ bundle: 'NORMAL', printed: 'NORMAL' });
    expect(await exportedMode({ config: `synchronous: FULL\n${TOOLS_YAML}` })).toEqual({
      bundle: 'FULL',
      printed: 'FULL',
    });
    expect(
      await exportedMode({
        config: `synchronous: FULL\n${TOOLS_YAML}`,
        arguments: ['--synchronous', 'NORMAL'],
      }),
    ).toEqual({ bundle: 'NORMAL', printed: 'NORMAL' });
  }, 90_000);
});
