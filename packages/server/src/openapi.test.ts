import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { testApp } from './test-support.js';

describe('GET /v1/openapi.json', () => {
  it('documents every route from the validating schemas', async () => {
    const { call } = await testApp();
    const { status, json } = await call('GET', '/v1/openapi.json');
    expect(status).toBe(200);
    expect(json.openapi).toBe('3.1.0');
    expect(Object.keys(json.paths).sort()).toEqual(
      [
        '/v1/admin/policy',
        '/v1/approvals',
        '/v1/approvals/{id}',
        '/v1/approvals/{id}/approve',
        '/v1/approvals/{id}/deny',
        '/v1/approvals/{id}/withdraw',
        '/v1/grants/consume',
        '/v1/health',
        '/v1/keys',
        '/v1/keys/{name}',
        '/v1/ready',
        '/v1/runs',
        '/v1/runs/{id}',
        '/v1/runs/{id}/bundle',
        '/v1/runs/{id}/decisions',
        '/v1/runs/{id}/end',
        '/v1/runs/{id}/gaps',
        '/v1/runs/{id}/messages',
        '/v1/runs/{id}/outcomes',
        '/v1/tools',
        '/v1/verify',
      ].sort(),
    );
    const decide = json.paths['/v1/runs/{id}/decisions'].post;
    const body = decide.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['calls']);
    expect(decide.responses['400'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorBody',
    });
    const wait = json.paths['/v1/approvals/{id}'].get.parameters.find(
      (parameter: { name: string }) => parameter.name === 'wait',
    );
    expect(wait).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'number', minimum: 0, maximum: 60 },
    });
    expect(json.paths['/v1/health'].get.security).toEqual([]);
    expect(json.components.schemas.ErrorBody.properties.error.required).toEqual(['kind', 'message']);
  });

  it('test/fixtures/schemas/openapi.json is the served document (run `npm run schemas` after a change) and lists every /v1 route', async () => {
    const { app, call } = await testApp();
    const served = (await call('GET', '/v1/openapi.json')).json;
    const committed = JSON.parse(
      readFileSync(new URL('../../../test/fixtures/schemas/openapi.json', import.meta.url), 'utf8'),
    );
    expect(committed).toEqual(served);
    // Every route the app serves under /v1 (the table's and any mounted beside it) is documented.
    const mounted = app.routes
      .filter((route) => route.path.startsWith('/v1/') && route.method !== 'ALL')
      .filter((route) => route.path !== '/v1/openapi.json')
      .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
    const documented = Object.entries(served.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`),
    );
    expect(mounted.length).toBeGreaterThan(20);
    expect(documented.sort()).toEqual([...new Set(mounted)].sort());
  });
});
