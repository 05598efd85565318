/** The server's version, as reported by `GET /v1/health` and the OpenAPI document. */
export const SERVER_VERSION = '0.1.0';
