// Query strings are bad input when a parameter repeats, when `public_key` is no key, or when a
// value is out of its range: each is a 400 `request-invalid` naming the parameter, in callgate's
// words (never the validation library's).
import { buildBundleFixture } from '@callgate/testing';
import { testApp } from '@callgate/testing/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const fixture = await buildBundleFixture();

describe('a query parameter given more than once', () => {
  it('is refused on every route, naming it and how many times it came (generated)', async () => {
    const { call, keys } = await testApp();
    const routes = [
      { method: 'GET', path: '/v1/runs', name: 'limit', value: '5' },
      { method: 'GET', path: '/v1/approvals', name: 'status', value: 'pending' },
      { method: 'POST', path: '/v1/verify', name: 'expect_size', value: '1' },
      { method: 'POST', path: '/v1/verify', name: 'strict', value: 'true' },
      // A route that takes no query: repeats are refused there too (one rule).
      { method: 'GET', path: '/v1/tools', name: 'anything', value: 'x' },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.integer({ min: 2, max: 4 }),
        fc.boolean(),
        async (route, times, encodeName) => {
          // A name written percent-encoded is the same name.
          const written = (index: number) =>
            encodeName && index === 0
              ? [...route.name].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('')
              : route.name;
          const query = Array.from({ length: times }, (_, index) => `${written(index)}=${route.value}`).join(
            '&',
          );
          const answer = await call(route.method, `${route.path}?other=1&${query}`, {
            key: keys.admin,
            ...(route.method === 'POST' ? { raw: '' } : {}),
          });
          expect(answer.status, query).toBe(400);
          expect(answer.json.error.kind).toBe('request-invalid');
          expect(answer.json.error.path).toBe(`query.${route.name}`);
          expect(answer.json.error.message).toBe(`query.${route.name}: given ${times} times; give it once`);
        },
      ),
      { numRuns: 30 },
    );
    // Given once, the same values are taken.
    expect((await call('GET', '/v1/runs?limit=5', { key: keys.admin })).status).toBe(200);
  });
});

describe('POST /v1/verify?public_key=', () => {
  it('refuses text that is not a verifier key, as `callgate verify --public-key` does (generated)', async () => {
    const { call, keys } = await testApp();
    const verify = (query: string) =>
      call('POST', `/v1/verify${query}`, {
        key: keys.reviewer,
        body: JSON.parse(JSON.stringify(fixture.bundle)),
      });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(
            '',
            'garbage',
            'a+b',
            'name+00000000+AAAA',
            fixture.signer.verifierKey.slice(0, -4),
          ),
          fc.string({ maxLength: 40 }),
        ),
        async (text) => {
          const answer = await verify(`?public_key=${encodeURIComponent(text)}`);
          expect(answer.status, JSON.stringify(text)).toBe(400);
          expect(answer.json.error.path).toBe('query.public_key');
          expect(answer.json.error.message).toMatch(/^query\.public_key: (must be|not) a verifier key/);
        },
      ),
      { numRuns: 25 },
    );
    // A key that parses is pinned: the bundle's own signer passes, and the check is the verdict.
    const pinned = await verify(`?public_key=${encodeURIComponent(fixture.signer.verifierKey)}`);
    expect(pinned.status).toBe(200);
    expect(pinned.json.ok).toBe(true);
  });
});

describe('query values out of range', () => {
  it('are refused in callgate words, quoting the value (generated)', async () => {
    const { call, keys } = await testApp();
    const body = JSON.parse(JSON.stringify(fixture.bundle));
    const cases = [
      { method: 'GET', path: '/v1/runs', name: 'limit', must: 'must be an integer 1..1000' },
      { method: 'GET', path: '/v1/runs', name: 'before', must: 'must be a time in epoch ms' },
      { method: 'POST', path: '/v1/verify', name: 'expect_size', must: 'must be a whole number of records' },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cases),
        fc.oneof(
          // Digits past 2^53 − 1, which a double cannot hold exactly.
          fc.bigInt({ min: BigInt(Number.MAX_SAFE_INTEGER) + 1n, max: 10n ** 16n - 1n }).map(String),
          fc.constantFrom('-1', '1.5', 'abc', '', '1e3'),
        ),
        async (route, value) => {
          const answer = await call(
            route.method,
            `${route.path}?${route.name}=${encodeURIComponent(value)}`,
            {
              key: keys.admin,
              ...(route.method === 'POST' ? { body } : {}),
            },
          );
          expect(answer.status, `${route.name}=${value}`).toBe(400);
          expect(answer.json.error.path).toBe(`query.${route.name}`);
          expect(answer.json.error.message).not.toMatch(/Too big|Too small|Invalid|expected int/);
          expect(answer.json.error.message).toContain(`query.${route.name}: ${route.must}`);
          expect(answer.json.error.message).toContain(`(got ${JSON.stringify(value)})`);
        },
      ),
      { numRuns: 40 },
    );
    for (const [query, must] of [
      ['strict=maybe', 'query.strict: must be true or false'],
      ['strict=TRUE', 'query.strict: must be true or false'],
    ] as const) {
      const answer = await call('POST', `/v1/verify?${query}`, { key: keys.reviewer, body });
      expect(answer.status).toBe(400);
      expect(answer.json.error.message).toContain(must);
    }
    const status = await call('GET', '/v1/approvals?status=maybe', { key: keys.reviewer });
    expect(status.status).toBe(400);
    expect(status.json.error.message).toBe(
      'query.status: must be one of pending, approved, denied, expired, withdrawn (got "maybe")',
    );
  });
});
