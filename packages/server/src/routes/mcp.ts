// MCP Streamable HTTP at `/mcp` and `/mcp/<profile>`, served by the gateway. The API key is
// checked here, before the gateway sees the request, and only from its headers: the body is
// left unread for the gateway to parse.
import type { ApiKeyRow } from '@callgate/core';
import { type Gateway, RUN_HEADER } from '@callgate/mcp-gateway';
import type { Context, Hono } from 'hono';
import type { ServerContext } from '../server-context.js';
import { authorize, errorJson } from './define.js';

/** Who may open MCP sessions: the keys that may decide tool calls. */
const MCP_ACCESS = { roles: ['agent', 'admin'], summary: 'Use the MCP gateway' } as const;

/**
 * Mounts the gateway at `/mcp` (profile `defaultProfile`) and `/mcp/:profile`, every method.
 * Without a live key the answer is 401, with a reviewer key 403 — both the API's error JSON.
 * The session's principal is the key's name; `X-Callgate-Run` names a hook's run whose grants
 * the session may consume. An unknown profile is answered 404 by the gateway.
 */
export function mountMcp(app: Hono, server: ServerContext, gateway: Gateway, defaultProfile: string): void {
  const handle = async (c: Context) => {
    let key: ApiKeyRow;
    try {
      key = await authorize(server, MCP_ACCESS, c.req.header('authorization'));
    } catch (error) {
      return errorJson(c, server, error);
    }
    const runId = c.req.header(RUN_HEADER);
    return gateway.handleRequest(c.req.raw, {
      principal: key.name,
      profile: c.req.param('profile') ?? defaultProfile,
      ...(runId ? { runId } : {}),
    });
  };
  app.all('/mcp', handle);
  app.all('/mcp/:profile', handle);
}
