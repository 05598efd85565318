import { readArguments } from '@callgate/core';
import { argumentsDigestOf, parseVerifierKey, verifyBundleBytes } from '@callgate/core/ledger';
import {
  bundleSchema,
  bundleV2Schema,
  bundleV3Schema,
  CallgateError,
  toolSpecSchema,
} from '@callgate/protocol';
import { z } from 'zod';
import {
  bundleQuery,
  consumedGrantSchema,
  consumeGrantBody,
  flagOn,
  verifyQuery,
  verifyReportSchema,
} from '../http/schemas.js';
import { DEFAULT_BUNDLE_LIMIT } from '../http/validation.js';
import type { ServerContext } from '../server-context.js';
import { defineRoute, type Route } from './define.js';

/** Routes of grants, tools, bundles and verification. */
export function ledgerRoutes(server: ServerContext): Route[] {
  const { engine } = server;
  return [
    defineRoute({
      method: 'post',
      path: '/grants/consume',
      operationId: 'consumeGrant',
      summary: 'Consume a grant',
      roles: ['agent', 'admin'],
      body: consumeGrantBody,
      response: consumedGrantSchema,
      errors: [409],
      async handler({ body, key }) {
        const run = await engine.store.getRun(body.run_id);
        if (key.role === 'agent' && !(run && (await server.owns(key, run)))) {
          throw new CallgateError('grant-invalid', 'the grant is unknown, already used or expired', {
            call_id: body.call_id,
          });
        }
        const digest = body.arguments_digest ?? argumentsDigestOf(readArguments(body.arguments));
        const grant = await engine.consumeGrant(
          body.token,
          { run_id: body.run_id, call_id: body.call_id, tool: body.tool, arguments_digest: digest },
          { actor: key.name },
        );
        return {
          consumed: true,
          run_id: grant.run_id,
          call_id: grant.call_id,
          tool: grant.tool,
          arguments_digest: grant.arguments_digest,
          expires_at: grant.expires_at,
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/tools',
      operationId: 'listTools',
      summary: 'List the tools the server knows',
      roles: ['agent', 'reviewer', 'admin'],
      response: z.object({ tools: z.array(toolSpecSchema) }),
      async handler() {
        return { tools: engine.registry.specs() };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/:id/bundle',
      operationId: 'exportRun',
      summary: 'Export a run as a bundle',
      roles: ['agent', 'reviewer', 'admin'],
      query: bundleQuery,
      response: z.union([bundleV3Schema, bundleV2Schema, bundleSchema]),
      errors: [404],
      async handler({ params, key, query }) {
        const run = await server.runFor(key, params.id ?? '');
        return engine.exportRun(run.run_id, {
          openings: flagOn(query.openings),
          proofs: flagOn(query.proofs),
          revealRunKeys: flagOn(query.reveal_run_keys),
        });
      },
    }),
    defineRoute({
      method: 'post',
      path: '/verify',
      operationId: 'verifyBundle',
      summary: 'Verify a bundle',
      roles: ['agent', 'reviewer', 'admin'],
      body: z.unknown(),
      bodyLimit: DEFAULT_BUNDLE_LIMIT,
      query: verifyQuery,
      response: verifyReportSchema,
      bodyBytes: true,
      async handler({ bodyBytes, query }) {
        // The bytes as sent, read by the one input rule `callgate verify FILE` follows
        // (`verifyBundleBytes`): every line held to its exact text, and bytes that are no
        // bundle's text (empty, too large, gzip, UTF-16, a byte-order mark first, not UTF-8, not
        // JSON) refused as input. A pinned key that is no key is bad input, as `callgate verify
        // --public-key` takes it (exit 2), not a bundle that failed the check.
        if (query.public_key !== undefined) refuseMalformedKey(query.public_key);
        const verdict = verifyBundleBytes(bodyBytes, {
          publicKey: query.public_key ?? server.publicKey,
          ...(flagOn(query.strict) ? { strict: true } : {}),
          ...(query.expect_size !== undefined ? { expectSize: query.expect_size } : {}),
        });
        if (!verdict.readable)
          throw new CallgateError('request-invalid', `body: the bundle ${verdict.refusal}`, { path: 'body' });
        return verdict.report;
      },
    }),
  ];
}

/**
 * Refuses `?public_key=` text that is not a C2SP signed-note verifier key (`name+id+key`).
 * @throws CallgateError `request-invalid` (path `query.public_key`) with the parser's reason.
 */
function refuseMalformedKey(text: string): void {
  try {
    parseVerifierKey(text);
  } catch (error) {
    throw new CallgateError(
      'request-invalid',
      `query.public_key: not a verifier key (name+id+key): ${(error as Error).message}`,
      { path: 'query.public_key' },
    );
  }
}
