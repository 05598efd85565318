// The server's defaults that its command line names in help and checks options against, in a
// module of their own (`@callgate/server/defaults`): reading them loads nothing else of the server.

/** Default longest wait for a request's head (request line and headers), ms. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Default longest wait for a whole request, head and body, ms. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** The profile a gateway session gets when neither the URL (`/mcp/<profile>`) nor a flag or `mcp.default_profile` names one. */
export const DEFAULT_MCP_PROFILE = 'full';

/** What a socket file's mode must be, as the command line and callgate.yaml say when one is not. */
export const SOCKET_MODE_RULE =
  'a file mode of three octal digits (a leading 0 allowed), e.g. 600 or 0660, that keeps read and write for the owner (6 or 7 first)';

/**
 * Reads a socket file's mode as `--socket-mode` and `socket_mode:` take it: three octal digits,
 * optionally after one `0` (`600`, `0660`), whose owner digit is 6 or 7, since the server's own
 * user must be able to connect (`000`, `0`, `0o600`, `400` are refused).
 *
 * @returns the mode bits (`0o600` for `"600"`), or `undefined` when `text` breaks the rule
 *   ({@link SOCKET_MODE_RULE} says it).
 */
export function parseSocketMode(text: string): number | undefined {
  const digits = /^0?([0-7]{3})$/.exec(text)?.[1];
  if (digits === undefined) return undefined;
  const mode = Number.parseInt(digits, 8);
  return (mode & 0o600) === 0o600 ? mode : undefined;
}

/**
 * The top-level keys of `callgate.yaml` that `callgate serve` reads, in the order its help lists
 * them (the config schema's own keys: config.test.ts holds them equal).
 */
export const CONFIG_KEYS = [
  'policy',
  'tools',
  'data',
  'store',
  'log_key',
  'host',
  'port',
  'socket',
  'socket_mode',
  'webhook',
  'vault',
  'synchronous',
  'upstreams',
  'witnesses',
  'mcp',
] as const;
