import { errorBodySchema } from '@callgate/protocol';
import { z } from 'zod';
import type { Route } from './routes/define.js';
import { SERVER_VERSION } from './version.js';

type JsonSchema = Record<string, unknown>;

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid (malformed JSON, a wrong type, an unknown field); the message names the field path.',
  401: 'No API key, or an unknown or revoked one.',
  403: 'The key’s role may not call this route.',
  404: 'Not found (or not visible to this key).',
  413: 'The body is over the route’s size limit (`request-invalid`, path `body`, the limit in the message).',
  409: 'Conflict: the resource is not in a state that allows this (e.g. the approval was already answered, the grant is invalid).',
  500: 'The server failed.',
  503: 'The server is shutting down.',
};

/**
 * The OpenAPI 3.1 document of the API, generated from the route table and the same zod schemas
 * (from `@callgate/protocol`) the routes validate with (JSON Schema draft 2020-12, which OpenAPI
 * 3.1 uses). `npm run schemas` writes it to `test/fixtures/schemas/openapi.json`.
 *
 * Not `@hono/zod-openapi`: its request validation reads bodies through Hono's validator
 * (`JSON.parse`), which would put a lossy parse (rounded big integers, the last of duplicate
 * keys) in front of the lossless one every body goes through here.
 */
export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const errorReference = { $ref: '#/components/schemas/ErrorBody' };
  for (const route of routes) {
    const path = `/v1${route.path.replace(/:(\w+)/g, '{$1}')}`;
    const parameters: unknown[] = [...route.path.matchAll(/:(\w+)/g)].map((match) => ({
      name: match[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (route.query) {
      const schema = jsonSchemaOf(route.query, 'output');
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      for (const [name, property] of Object.entries(properties)) {
        parameters.push({ name, in: 'query', required: required.has(name), schema: property });
      }
    }
    const errorStatuses = new Set<number>([400, 500, ...(route.errors ?? [])]);
    if (route.body) errorStatuses.add(413);
    if (route.roles !== 'public') {
      errorStatuses.add(401);
      errorStatuses.add(403);
    }
    const responses: Record<string, unknown> = {
      [String(route.status ?? 200)]: {
        description: 'Success',
        // As zod reads an answer (an unknown field is kept, not refused): a field a newer server
        // adds must not break a client that validates with this document.
        content: { 'application/json': { schema: jsonSchemaOf(route.response, 'input') } },
      },
    };
    for (const status of [...errorStatuses].sort()) {
      responses[String(status)] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'Error',
        content: { 'application/json': { schema: errorReference } },
      };
    }
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.roles === 'public'
        ? { security: [] }
        : { description: `Roles: ${route.roles.join(', ')}.`, security: [{ apiKey: [] }] }),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: jsonSchemaOf(route.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'callgate API',
      version: SERVER_VERSION,
      description:
        'Decide every tool call an agent makes, bind approvals to the exact call, prove it afterwards. Errors are always {"error": {"kind", "message"}}.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'A callgate API key (cg_…)' },
      },
      schemas: { ErrorBody: jsonSchemaOf(errorBodySchema, 'input') },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}
