// The server's defaults that its command line names in help and checks options against, in a
// module of their own (`@callgate/server/defaults`): reading them loads nothing else of the server.

/** Default longest wait for a request's head (request line and headers), ms. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default longest wait for a whole request, head and body, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The profile a gateway session gets when neither the URL (`/mcp/<profile>`) nor a flag or `mcp.default_profile` names one. */
export const DEFAULT_MCP_PROFILE = 'full';
