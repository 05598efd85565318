// MCP servers on a governed agent. The SDK calls an MCP server's tools itself, past any function
// tool hook, so callgate cannot gate them from here; a server that is callgate's own MCP gateway
// (`<callgate>/mcp` or `<callgate>/mcp/<profile>`) gates every call itself, and is accepted.
import { CallgateError } from '@callgate/protocol';

/** The URL an MCP server object of the SDK connects to (Streamable HTTP or SSE), if it has one. */
export function mcpServerUrl(server: unknown): string | undefined {
  const candidate = server as {
    underlying?: { params?: { url?: unknown } };
    params?: { url?: unknown };
  };
  const url = candidate.underlying?.params?.url ?? candidate.params?.url;
  if (typeof url === 'string') return url;
  return url instanceof URL ? url.href : undefined;
}

/** True when `url` is the MCP gateway of the callgate server at `gatewayUrl`, any profile. */
export function isGatewayUrl(url: string, gatewayUrl: string): boolean {
  let target: URL;
  let gateway: URL;
  try {
    target = new URL(url);
    gateway = new URL(gatewayUrl);
  } catch {
    return false;
  }
  const base = gateway.pathname.replace(/\/+$/, '');
  const rest = target.pathname.startsWith(`${base}/mcp`) ? target.pathname.slice(base.length) : undefined;
  return target.origin === gateway.origin && rest !== undefined && /^\/mcp(\/[^/]+)?\/?$/.test(rest);
}

/**
 * Checks the MCP servers of agent `agentName`: each must be callgate's MCP gateway.
 * @throws CallgateError `request-invalid` naming the first server that is not (or every one
 *   when the gate was given no `gatewayUrl`).
 */
export function checkMcpServers(
  agentName: string,
  servers: readonly unknown[],
  gatewayUrl: string | undefined,
) {
  for (const server of servers) {
    const url = mcpServerUrl(server);
    if (gatewayUrl && url && isGatewayUrl(url, gatewayUrl)) continue;
    const name = (server as { name?: unknown }).name;
    throw new CallgateError(
      'request-invalid',
      `agent ${agentName} uses MCP server ${JSON.stringify(name ?? url ?? 'unnamed')}, whose tools callgate cannot gate here: put it behind the callgate MCP gateway (${gatewayUrl ? `${gatewayUrl.replace(/\/+$/, '')}/mcp/<profile>` : 'and give the gate its gatewayUrl'})`,
    );
  }
}
