import { CallgateError } from '@callgate/protocol';
import {
  apiKeyListSchema,
  createdApiKeySchema,
  createKeyBody,
  healthSchema,
  revokedApiKeySchema,
} from '../http/schemas.js';
import { createApiKey, revokeApiKey } from '../keys.js';
import type { ServerContext } from '../server-context.js';
import { storeHealth } from '../store-status.js';
import { SERVER_VERSION } from '../version.js';
import { defineRoute, type Route } from './define.js';

/** Health (no key needed) and API key management (admin). */
export function adminRoutes(server: ServerContext): Route[] {
  const { store } = server.engine;
  // Revocations run one at a time, so two admins revoking each other at once cannot both pass
  // the last-admin check. (Within this process: `callgate keys revoke` on the same data folder
  // is the operator's own tool and is not held back.)
  let revoking: Promise<unknown> = Promise.resolve();

  /** Revokes the live key `name` by the one rule of {@link revokeApiKey} (not the last admin). */
  const revoke = (name: string) => revokeApiKey(store, name, server.clock());
  return [
    defineRoute({
      method: 'get',
      path: '/health',
      operationId: 'health',
      summary: 'Check the server is up',
      roles: 'public',
      response: healthSchema,
      async handler() {
        const problem = await server.storeHealth?.();
        if (problem !== undefined) throw new CallgateError('gate-unavailable', problem);
        const upstreams = server.gateway
          ?.status()
          .map(({ name, status, tools }) => ({ name, status, tools: tools.length }));
        const storeStatus = await storeHealth(store);
        const problems = await server.health.problems();
        if (storeStatus.status !== 'ok' && !problems.some((problem) => problem.check === 'store'))
          problems.push({ check: 'store', message: storeStatus.reason ?? 'the store cannot write' });
        return {
          status: server.lifecycle.draining ? 'draining' : problems.length > 0 ? 'degraded' : 'ok',
          version: SERVER_VERSION,
          log_key: server.publicKey,
          store: storeStatus,
          ...(problems.length > 0 ? { problems } : {}),
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
      response: apiKeyListSchema,
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
      response: createdApiKeySchema,
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
      response: revokedApiKeySchema,
      errors: [404, 409],
      async handler({ params }) {
        const name = params.name ?? '';
        const done = revoking.then(() => revoke(name));
        revoking = done.catch(() => undefined);
        await done;
        server.logger.info({ name }, 'API key revoked');
        return { revoked: true, name };
      },
    }),
  ];
}
