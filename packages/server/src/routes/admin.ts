import { CallgateError } from '@callgate/protocol';
import { z } from 'zod';
import { apiKeySchema, createKeyBody, healthSchema } from '../http/schemas.js';
import { createApiKey } from '../keys.js';
import type { ServerContext } from '../server-context.js';
import { SERVER_VERSION } from '../version.js';
import { defineRoute, type Route } from './define.js';

/** Health (no key needed) and API key management (admin). */
export function adminRoutes(server: ServerContext): Route[] {
  const { store } = server.engine;
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'health',
      summary: 'Check the server is up',
      roles: 'public',
      response: healthSchema,
      async handler() {
        const upstreams = server.gateway
          ?.status()
          .map(({ name, status, tools }) => ({ name, status, tools: tools.length }));
        return {
          status: server.lifecycle.draining ? 'draining' : 'ok',
          version: SERVER_VERSION,
          ...(upstreams ? { upstreams } : {}),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/keys',
      operationId: 'listKeys',
      summary: 'List API keys',
      roles: ['admin'],
      response: z.object({ keys: z.array(apiKeySchema) }),
      async handler() {
        const keys = (await store.listApiKeys()).map(({ key_hash: _, ...row }) => row);
        return { keys };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/keys',
      operationId: 'createKey',
      summary: 'Create an API key',
      roles: ['admin'],
      body: createKeyBody,
      status: 201,
      response: apiKeySchema.extend({ key: z.string() }),
      errors: [409],
      async handler({ body }) {
        const { key, row } = await createApiKey(store, {
          role: body.role,
          ...(body.name ? { name: body.name } : {}),
          now: server.clock(),
        });
        const { key_hash: _, ...shown } = row;
        server.logger.info({ name: row.name, role: row.role }, 'API key created');
        return { ...shown, key };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/keys/:name',
      operationId: 'revokeKey',
      summary: 'Revoke an API key',
      roles: ['admin'],
      response: z.object({ revoked: z.literal(true), name: z.string() }),
      errors: [404],
      async handler({ params }) {
        const name = params.name ?? '';
        if (!(await store.revokeApiKey(name, server.clock())))
          throw new CallgateError('not-found', `no live API key named ${name}`);
        server.logger.info({ name }, 'API key revoked');
        return { revoked: true, name };
      },
    }),
  ];
}
