// Test support: a server app on an in-memory engine with keys of every role (`@callgate/testing/server`).
import { type Engine, loadPolicy, type ToolSpec } from '@callgate/core';
import { type AppOptions, createApiKey, createApp } from '@callgate/server';
import type { Hono } from 'hono';
import { memoryStoreEngine } from './engine.js';

/** A parsed JSON answer, read loosely by tests. */
// biome-ignore lint/suspicious/noExplicitAny: tests read answers' fields without declaring every shape
export type Json = any;

export const TOOLS: ToolSpec[] = [
  {
    name: 'read_file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'send_invoice',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' } },
      required: ['to', 'amount'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true },
  },
  {
    name: 'delete_file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    annotations: { destructiveHint: true },
  },
];

export const POLICY = `
version: 1
default: deny
approval: { ttl: 60s, wait: 30s, allow_edits: false }
rules:
  - id: reads
    match: { tools: ["read_*"] }
    effect: allow
  - id: small-invoices
    match: { tools: [send_invoice] }
    when: args.amount <= 1000
    effect: allow
  - id: large-invoices
    match: { tools: [send_invoice] }
    when: args.amount > 1000
    effect: ask
    reason: invoices over 1000 need a person
`;

/**
 * An engine on a MemoryStore with a fresh log key; `publicKey` is its verifier key. `vault` keeps
 * the committed values as openings (an export with `openings` then carries them).
 */
export async function memoryEngine(
  options: { policy?: string; clock?: () => number; vault?: boolean } = {},
): Promise<{
  engine: Engine;
  publicKey: string;
}> {
  const { engine, signer } = await memoryStoreEngine(
    'test.local/server',
    {
      policy: loadPolicy(options.policy ?? POLICY, { source: 'test-policy.yaml' }),
      tools: TOOLS,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.vault ? { vault: true } : {}),
    },
    options.clock,
  );
  return { engine, publicKey: signer.verifierKey };
}

/** An app with one key per role (named agent-1, agent-2, reviewer-1, admin-1). */
export async function testApp(options: Partial<AppOptions> & { policy?: string; vault?: boolean } = {}) {
  const { engine, publicKey } = await memoryEngine({
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.vault ? { vault: true } : {}),
  });
  const app: Hono = createApp({ engine, publicKey, ...options });
  const keys = {
    agent: (await createApiKey(engine.store, { role: 'agent', name: 'agent-1' })).key,
    otherAgent: (await createApiKey(engine.store, { role: 'agent', name: 'agent-2' })).key,
    reviewer: (await createApiKey(engine.store, { role: 'reviewer', name: 'reviewer-1' })).key,
    admin: (await createApiKey(engine.store, { role: 'admin', name: 'admin-1' })).key,
  };
  /** Calls the app: JSON body (or `raw` text or bytes, as given), Bearer key; resolves with status and parsed JSON. */
  async function call(
    method: string,
    path: string,
    options: {
      key?: string;
      body?: unknown;
      raw?: string | Uint8Array<ArrayBuffer>;
      headers?: Record<string, string>;
    } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | Uint8Array<ArrayBuffer> | undefined = options.raw;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await app.request(path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    let json: Json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, json, text, headers: response.headers };
  }
  return { app, engine, publicKey, keys, call };
}
