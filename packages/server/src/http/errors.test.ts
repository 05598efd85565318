import { ERROR_KINDS } from '@callgate/protocol';
import { describe, expect, it } from 'vitest';
import { type Json, testApp } from '../test-support.js';
import { HTTP_STATUS_OF_KIND, httpStatusOf } from './errors.js';
import { DEFAULT_BODY_LIMIT } from './validation.js';

const expectError = (result: { status: number; json: Json }, status: number, kind: string) => {
  expect(result.status).toBe(status);
  expect(Object.keys(result.json)).toEqual(['error']);
  expect(result.json.error.kind).toBe(kind);
  expect(typeof result.json.error.message).toBe('string');
};

describe('error kinds → HTTP status', () => {
  it('maps every kind, in one table', () => {
    expect(Object.keys(HTTP_STATUS_OF_KIND).sort()).toEqual([...ERROR_KINDS].sort());
    expect(httpStatusOf('request-invalid')).toBe(400);
    expect(httpStatusOf('tool-args-invalid')).toBe(400);
    expect(httpStatusOf('policy-invalid')).toBe(400);
    expect(httpStatusOf('unauthorized')).toBe(401);
    expect(httpStatusOf('forbidden')).toBe(403);
    expect(httpStatusOf('not-found')).toBe(404);
    expect(httpStatusOf('conflict')).toBe(409);
    expect(httpStatusOf('grant-invalid')).toBe(409);
    expect(httpStatusOf('internal')).toBe(500);
  });
});

describe('error bodies', () => {
  it('answers malformed JSON with a 400 naming the body', async () => {
    const { call, keys } = await testApp();
    const result = await call('POST', '/v1/runs', {
      key: keys.agent,
      raw: '{"framework": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(result, 400, 'request-invalid');
    expect(result.json.error.message).toMatch(/^body: malformed JSON/);
    expect(result.json.error.path).toBe('body');
  });

  it('names the field path of a wrong type', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const result = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: {
        calls: [
          { tool: 'read_file', arguments: {} },
          { tool: 7, arguments: {} },
        ],
      },
    });
    expectError(result, 400, 'request-invalid');
    expect(result.json.error.path).toBe('body.calls[1].tool');
    expect(result.json.error.message).toBe('body.calls[1].tool: expected string, received number');
  });

  it('refuses unknown fields, naming them', async () => {
    const { call, keys } = await testApp();
    const result = await call('POST', '/v1/runs', {
      key: keys.agent,
      body: { framework: 'x', principle: 'typo' },
    });
    expectError(result, 400, 'request-invalid');
    expect(result.json.error.path).toBe('body.principle');
    expect(result.json.error.message).toContain('unknown field');
    const query = await call('GET', '/v1/runs?limit=5&sort=asc', { key: keys.admin });
    expectError(query, 400, 'request-invalid');
    expect(query.json.error.path).toBe('query.sort');
  });

  it('refuses a body over the limit, with or without a Content-Length: 413 with the error JSON', async () => {
    const { app, call, keys } = await testApp();
    const big = JSON.stringify({ framework: 'x'.repeat(DEFAULT_BODY_LIMIT) });
    const declared = await call('POST', '/v1/runs', {
      key: keys.agent,
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    expectError(declared, 413, 'request-invalid');
    expect(declared.json.error).toEqual({
      kind: 'request-invalid',
      message: `body: over the limit of ${DEFAULT_BODY_LIMIT} bytes`,
      path: 'body',
    });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const response = await app.request('/v1/runs', {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.agent}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { path: string } }).error.path).toBe('body');
    // Just under the limit, the same route reads the body (and answers for its content).
    const under = await call('POST', '/v1/runs', {
      key: keys.agent,
      body: { framework: 'x'.repeat(201) },
    });
    expectError(under, 400, 'request-invalid');
    expect(under.json.error.path).toBe('body.framework');
  });

  it('refuses a duplicate key, an integer beyond 2^53 and deep nesting in a body, saying where', async () => {
    const { call, keys, engine } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decide = (raw: string) =>
      call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
        key: keys.agent,
        raw,
        headers: { 'content-type': 'application/json' },
      });
    const duplicate = await decide(
      '{"calls": [{"id": "c1", "tool": "read_file", "arguments": {"path": "a", "path": "b"}}]}',
    );
    expectError(duplicate, 400, 'request-invalid');
    expect(duplicate.json.error.message).toContain("Duplicate key 'path'");
    expect(duplicate.json.error.message).toMatch(/line 1, column \d+/);
    expect(duplicate.json.error.path).toBe('body');
    const deep = await decide(
      `{"calls": [], "message": {"role": "user", "content": ${'['.repeat(100)}${']'.repeat(100)}}}`,
    );
    expectError(deep, 400, 'request-invalid');
    expect(deep.json.error.message).toContain('nesting deeper than 80');
    // Nothing was decided: the gate never saw the collapsed values.
    expect(await engine.store.listCalls(run.json.run_id)).toEqual([]);
    // An integer beyond 2^53 in a call's arguments is the gate's to refuse, call by call and on
    // the record: the request goes through and that call is refused as tool-args-invalid.
    const big = await decide(
      '{"calls": [{"id": "c1", "tool": "send_invoice", "arguments": {"to": "a", "amount": 9007199254740993}}]}',
    );
    expect(big.status).toBe(200);
    expect(big.json.verdicts[0]).toMatchObject({
      status: 'refused',
      error: { kind: 'tool-args-invalid', path: 'arguments.amount' },
    });
    expect(big.json.verdicts[0].error.message).toMatch(/beyond ±\(2\^53−1\)/);
  });

  it('refuses a body that is not JSON by its Content-Type', async () => {
    const { call, keys } = await testApp();
    const result = await call('POST', '/v1/runs', {
      key: keys.agent,
      raw: 'framework=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectError(result, 400, 'request-invalid');
  });

  it('answers an unknown route with a JSON 404 once authenticated, and 401 before', async () => {
    const { call, keys } = await testApp();
    expectError(await call('GET', '/v1/nothing-here', { key: keys.admin }), 404, 'not-found');
  });

  it('answers a path the API serves, asked with another method, 405 with an Allow header', async () => {
    const { call, keys } = await testApp();
    const runs = await call('DELETE', '/v1/runs', { key: keys.admin });
    expect(runs.status).toBe(405);
    expect(runs.json).toEqual({
      error: {
        kind: 'request-invalid',
        message: 'method DELETE is not allowed on /v1/runs; allowed: GET, POST',
      },
    });
    expect(runs.headers.get('allow')).toBe('GET, POST');
    const run = await call('PUT', '/v1/runs/run-1', { key: keys.admin });
    expect(run.status).toBe(405);
    expect(run.headers.get('allow')).toBe('GET');
    const key = await call('GET', '/v1/keys/someone');
    expect(key.status).toBe(405);
    expect(key.headers.get('allow')).toBe('DELETE');
    expect((await call('POST', '/v1/openapi.json')).headers.get('allow')).toBe('GET');
    expectError(await call('DELETE', '/v1/nothing-here', { key: keys.admin }), 404, 'not-found');
  });

  it('answers 401 without a key, with a malformed key, with an unknown or revoked key', async () => {
    const { call, keys, engine } = await testApp();
    const none = await call('GET', '/v1/runs');
    expectError(none, 401, 'unauthorized');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expectError(await call('GET', '/v1/runs', { key: 'nope' }), 401, 'unauthorized');
    expectError(await call('GET', '/v1/runs', { key: `cg_${'A'.repeat(43)}` }), 401, 'unauthorized');
    await engine.store.revokeApiKey('admin-1', Date.now());
    expectError(await call('GET', '/v1/runs', { key: keys.admin }), 401, 'unauthorized');
  });

  it('answers 401 and 403 the same whether or not the resource exists', async () => {
    const { call, keys } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const decided = await call('POST', `/v1/runs/${run.json.run_id}/decisions`, {
      key: keys.agent,
      body: { calls: [{ id: 'c1', tool: 'send_invoice', arguments: { to: 'a', amount: 5000 } }] },
    });
    const approvalId = decided.json.verdicts[0].approval.id;
    for (const id of [approvalId, 'apr-does-not-exist']) {
      const anonymous = await call('POST', `/v1/approvals/${id}/approve`, { body: {} });
      expect(anonymous).toMatchObject({ status: 401 });
      const agent = await call('POST', `/v1/approvals/${id}/approve`, { key: keys.agent, body: {} });
      expect(agent.status).toBe(403);
      expect(agent.json.error.message).toBe('an agent key may not approve a pending approval');
    }
    for (const id of [run.json.run_id, 'run-does-not-exist']) {
      const reviewer = await call('POST', `/v1/runs/${id}/decisions`, {
        key: keys.reviewer,
        body: { calls: [] },
      });
      expect(reviewer.status).toBe(403);
      expect(reviewer.json.error.message).toBe('a reviewer key may not decide a step’s tool calls');
    }
  });

  it('hides an internal error’s cause', async () => {
    const { call, keys, engine } = await testApp();
    engine.store.listRuns = async () => {
      throw new Error('disk path /secret/db exploded');
    };
    const result = await call('GET', '/v1/runs', { key: keys.admin });
    expectError(result, 500, 'internal');
    expect(result.text).not.toContain('/secret');
  });
});
