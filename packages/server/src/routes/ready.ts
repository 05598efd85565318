import { readySchema } from '../http/schemas.js';
import type { ServerContext } from '../server-context.js';
import { defineRoute, type Route } from './define.js';

/**
 * `GET /v1/ready` (no key): 200 `{ready: true}` when the server takes traffic; 503 with the
 * status and the problems while it drains or is degraded (for a load balancer's readiness probe;
 * `/v1/health` stays 200 and says why).
 */
export function readyRoutes(server: ServerContext): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/ready',
      operationId: 'ready',
      summary: 'Whether the server takes traffic (503 while draining or degraded)',
      roles: 'public',
      response: readySchema,
      errors: [503],
      async handler() {
        if (server.lifecycle.draining)
          return Response.json({ ready: false, status: 'draining' }, { status: 503 });
        const problems = await server.health.problems();
        if (problems.length === 0) return { ready: true, status: 'ok' };
        return Response.json({ ready: false, status: 'degraded', problems }, { status: 503 });
      },
    }),
  ];
}
