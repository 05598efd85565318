import { describe, expect, it } from 'vitest';
import { CallgateClient } from './client.js';

function fakeServer(answer: (request: Request) => Response | Promise<Response>) {
  const requests: Request[] = [];
  const fetcher = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push(request.clone());
    return answer(request);
  }) as typeof fetch;
  return { requests, fetcher };
}

describe('CallgateClient', () => {
  it('sends the key as a Bearer token and JSON bodies to /v1', async () => {
    const { requests, fetcher } = fakeServer(() => Response.json({ run_id: 'r1' }, { status: 201 }));
    const client = new CallgateClient({ url: 'http://gate.test/', apiKey: 'cg_key', fetch: fetcher });
    const run = await client.startRun({ framework: 'vitest' });
    expect(run.run_id).toBe('r1');
    const [request] = requests;
    expect(request?.url).toBe('http://gate.test/v1/runs');
    expect(request?.method).toBe('POST');
    expect(request?.headers.get('authorization')).toBe('Bearer cg_key');
    expect(await request?.json()).toEqual({ framework: 'vitest' });
  });

  it('throws CallgateError with the server’s kind, message and details', async () => {
    const { fetcher } = fakeServer(() =>
      Response.json(
        { error: { kind: 'forbidden', message: 'an agent key may not approve', path: 'x' } },
        { status: 403 },
      ),
    );
    const client = new CallgateClient({ url: 'http://gate.test', fetch: fetcher });
    await expect(client.approve('apr')).rejects.toMatchObject({
      name: 'CallgateError',
      kind: 'forbidden',
      message: 'an agent key may not approve',
      details: { path: 'x', status: 403 },
    });
  });

  it('reports an unreachable server as gate-unavailable and a non-JSON failure by status', async () => {
    const down = new CallgateClient({
      url: 'http://gate.test',
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
    });
    await expect(down.health()).rejects.toMatchObject({ kind: 'gate-unavailable' });
    const proxy = new CallgateClient({
      url: 'http://gate.test',
      fetch: (async () => new Response('<html>', { status: 502 })) as typeof fetch,
    });
    await expect(proxy.health()).rejects.toMatchObject({
      kind: 'gate-unavailable',
      details: { status: 502 },
    });
  });

  it('long-polls an approval until it is answered', async () => {
    let polls = 0;
    const { requests, fetcher } = fakeServer(() => {
      polls++;
      const status = polls < 3 ? 'pending' : 'approved';
      return Response.json({ approval: { id: 'apr', status } });
    });
    const client = new CallgateClient({ url: 'http://gate.test', fetch: fetcher });
    const state = await client.waitForApproval('apr', { timeoutMs: 120_000 });
    expect(state.approval.status).toBe('approved');
    expect(new URL(requests[0]?.url ?? '').searchParams.get('wait')).toBe('60');
  });
});
