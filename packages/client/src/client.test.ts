import fc from 'fast-check';
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
  it('refuses a socket URL when made, saying it speaks HTTP over TCP only', () => {
    for (const url of [
      'unix:/tmp/s.sock',
      'unix:///tmp/s.sock',
      'http+unix://%2Ftmp%2Fs.sock',
      'UNIX:/tmp/s.sock',
    ])
      expect(() => new CallgateClient({ url }), url).toThrow(
        expect.objectContaining({
          kind: 'request-invalid',
          message: expect.stringContaining('speaks HTTP over TCP only, not a Unix-domain socket'),
        }),
      );
  });

  it('takes exactly the http and https URLs, and refuses every other scheme or non-URL naming it', () => {
    const url = fc.oneof(
      fc.webUrl({ validSchemes: ['http', 'https'] }),
      fc
        .tuple(fc.stringMatching(/^[a-z][a-z0-9+.-]{0,8}$/), fc.webUrl())
        .map(([scheme, web]) => web.replace(/^https?/, scheme)),
      fc.string({ maxLength: 20 }),
    );
    fc.assert(
      fc.property(url, (text) => {
        let scheme: string | undefined;
        try {
          scheme = new URL(text).protocol;
        } catch {
          scheme = undefined;
        }
        const made = (() => {
          try {
            return new CallgateClient({ url: text });
          } catch (error) {
            return error as Error & { kind?: string };
          }
        })();
        if (scheme === 'http:' || scheme === 'https:') expect(made).toBeInstanceOf(CallgateClient);
        else {
          expect(made).toMatchObject({ kind: 'request-invalid' });
          expect((made as Error).message).toContain(scheme === undefined ? JSON.stringify(text) : text);
        }
      }),
    );
  });

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
