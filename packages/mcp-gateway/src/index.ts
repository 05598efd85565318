// @callgate/mcp-gateway: the public API. Anything exported here is public and pinned by
// index.test.ts; add names deliberately.

export type { HttpUpstream, StdioUpstream, UpstreamConfig, UpstreamTrust } from './config.js';
export { PREFIX_SEPARATOR, parseUpstreams } from './config.js';
export type { SessionContext } from './context.js';
export type { Gateway, GatewayOptions, StdioConnection, UpstreamState } from './gateway.js';
export { createGateway } from './gateway.js';
export type { HttpOptions } from './http.js';
export { HttpClientTransport } from './http-client.js';
export { RUN_HEADER } from './tool-call.js';
export type { UpstreamStatus } from './upstream.js';
