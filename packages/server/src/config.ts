import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  compilePolicy,
  loadPolicy,
  type Policy,
  type ToolSpec,
  type WholeNumberBounds,
  wholeNumberProblem,
} from '@callgate/core';
import type { UpstreamConfig } from '@callgate/mcp-gateway';
import { CallgateError, formatPath, toolSpecSchema } from '@callgate/protocol';
import { z } from 'zod';
import {
  compileTools,
  holdWrittenNumbers,
  located,
  readUpstreams,
  readWitnesses,
  validateYaml,
} from './config-sections.js';
import { parseSocketMode, SOCKET_MODE_RULE } from './defaults.js';
import { parseYamlText, YamlNumberError, type YamlText } from './yaml-file.js';

/**
 * A whole number within `bounds`, held by core's one rule (`wholeNumberProblem`): a fraction, text
 * or a number past 2^53 − 1 is refused saying which.
 */
const wholeNumber = (bounds: WholeNumberBounds) =>
  z.custom<number>().superRefine((value, context) => {
    const problem = wholeNumberProblem(value, bounds);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

const webhookSchema = z
  .strictObject({
    url: z.url({ protocol: /^https?$/ }),
    /** The HMAC secret itself, or… */
    secret: z.string().min(16).optional(),
    /** …the name of the environment variable that holds it (keeps secrets out of the file). */
    secret_env: z.string().min(1).optional(),
  })
  .refine((value) => (value.secret === undefined) !== (value.secret_env === undefined), {
    message: 'give exactly one of secret and secret_env',
  });

/** The `callgate.yaml` file of `callgate serve`. Paths are relative to the file's folder. */
export const serverConfigSchema = z.strictObject({
  /** A policy file's path, or the policy inline (DESIGN §4). */
  policy: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  /** Tool specs inline, or the path of a YAML/JSON file holding a list of them. */
  tools: z.union([z.array(toolSpecSchema.strict()), z.string().min(1)]).optional(),
  data: z.string().min(1).optional(),
  /**
   * Where the server keeps its state: a `postgres://` URL (several replicas share one database),
   * or `{ url_env: NAME }` naming the environment variable that holds it. Default: SQLite in `data`.
   */
  store: z
    .union([
      z.string().regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL'),
      z.strictObject({ url_env: z.string().min(1) }),
    ])
    .optional(),
  /** The log key file every replica reads (with `store`); default: the key kept in the database. */
  log_key: z.string().min(1).optional(),
  host: z.string().min(1).optional(),
  port: wholeNumber({ minimum: 0, maximum: 65535 }).optional(),
  /** A Unix-domain socket's path to listen on instead of `host`/`port` (relative to the file's folder). */
  socket: z.string().min(1, 'a socket path must not be empty; leave socket out to listen on TCP').optional(),
  /**
   * The socket file's mode in octal, as a string (`"600"`, the default; `"660"` for a group), by
   * the rule of {@link parseSocketMode}.
   */
  socket_mode: z
    .string({ error: `${SOCKET_MODE_RULE}, written as a string, e.g. "600"` })
    .refine((text) => parseSocketMode(text) !== undefined, `${SOCKET_MODE_RULE}, written as a string`)
    .optional(),
  webhook: webhookSchema.optional(),
  /** Keep content (arguments, results, messages) beside the records. Default false. */
  vault: z.boolean().optional(),
  /**
   * SQLite durability of the embedded store: `NORMAL` (default; a power loss may undo the last
   * commits, never corrupt) or `FULL` (every commit reaches the disk before it is answered).
   * Bundles record the mode they were written under.
   */
  synchronous: z.enum(['NORMAL', 'FULL']).optional(),
  /** The MCP servers the gateway fronts; each entry is validated by `parseUpstreams`. */
  upstreams: z.unknown().optional(),
  /** Witnesses (c2sp.org/tlog-witness) every new checkpoint is submitted to; `quorum` of them must cosign. */
  witnesses: z
    .strictObject({
      quorum: wholeNumber({ minimum: 1 }).optional(),
      servers: z
        .array(z.strictObject({ url: z.url({ protocol: /^https?$/ }), key: z.string().min(1) }))
        .min(1),
    })
    .optional(),
  /** The MCP gateway's settings. */
  mcp: z
    .strictObject({
      /** The profile of `/mcp` (a path without one). Default `full`. */
      default_profile: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a profile name uses letters, digits, _ and - (at most 64)')
        .optional(),
    })
    .optional(),
});

/** A server configuration with every path resolved and the policy compiled. */
export interface ServerConfig {
  /** Undefined when the file names none (the caller picks the default). */
  policy?: Policy;
  /** Where the policy came from, for messages: a path or `inline`. */
  policySource?: string;
  tools: ToolSpec[];
  data?: string;
  /** The `postgres://` URL of a shared store (`store:`), resolved from the environment when named there. */
  store?: string;
  /** `log_key:`, resolved against the file's folder. */
  logKey?: string;
  host?: string;
  port?: number;
  /** `socket:`, resolved against the file's folder. */
  socket?: string;
  /** `socket_mode:`, as a number (0o600). */
  socketMode?: number;
  webhook?: { url: string; secret: string };
  vault?: boolean;
  /** SQLite durability (`synchronous:`); undefined when the file names none. */
  synchronous?: 'NORMAL' | 'FULL';
  /**
   * The MCP servers the gateway fronts (empty when the file lists none). A stdio upstream's
   * `cwd` is resolved against the file's folder, which is also its default.
   */
  upstreams: UpstreamConfig[];
  /** `mcp.default_profile`: the profile of `/mcp` and of `callgate mcp --stdio` without `--profile`. */
  defaultProfile?: string;
  /** What the file still says in a deprecated way (each names the key and what to write instead). */
  warnings?: string[];
  /** `witnesses:`: where checkpoints go to be cosigned, and how many must cosign (default all). */
  witnesses?: { quorum?: number; servers: Array<{ url: string; key: string }> };
}

/** The profile a gateway session gets when neither the URL nor a flag names one. */
export { DEFAULT_MCP_PROFILE } from './defaults.js';

/**
 * Reads and parses a YAML file of the config (`callgate.yaml`, its `tools:` file).
 * @throws CallgateError `request-invalid` (`policy-invalid` for a number of an inline policy), its
 *   message in the format of {@link located}: `FILE: cannot be read: …`, `FILE:L:C: not valid
 *   YAML: …`, `FILE:L:C: FIELD: the number … ` (a number a double does not hold).
 */
async function readYamlFile(path: string): Promise<YamlText> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CallgateError('request-invalid', `${path}: cannot be read: ${(error as Error).message}`, {
      file: path,
    });
  }
  try {
    return parseYamlText(text);
  } catch (error) {
    // A number of an inline policy is the policy's fault, as it would be in a policy file.
    if (error instanceof YamlNumberError)
      throw new CallgateError(
        error.path[0] === 'policy' ? 'policy-invalid' : 'request-invalid',
        ...located(path, formatPath(error.path), error.problem, error.position),
      );
    // The parser's message goes on with the offending text and a caret: its first line says it
    // all, once its place (`at line 1, column 7`) is taken to the front.
    const first = ((error as Error).message.split('\n')[0] ?? '').replace(/:$/, '');
    const place = (error as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    const problem = place ? first.replace(/ at line \d+, column \d+$/, '') : first;
    throw new CallgateError(
      'request-invalid',
      ...located(
        path,
        '',
        `not valid YAML: ${problem}`,
        place ? { line: place.line, column: place.col } : undefined,
      ),
    );
  }
}

/**
 * Reads a policy file (YAML, DESIGN §4).
 * @throws CallgateError `request-invalid` when unreadable, `policy-invalid` when it does not compile.
 */
export async function readPolicyFile(path: string): Promise<Policy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CallgateError('request-invalid', `policy: cannot read ${path}: ${(error as Error).message}`);
  }
  return loadPolicy(text, { source: path });
}

/**
 * Reads `callgate.yaml`: validates every key (unknown keys are refused), resolves paths against
 * the file's folder, compiles the policy, reads the tool specs and validates the upstreams.
 *
 * @param env where `webhook.secret_env` is looked up (pass `process.env`).
 * @throws CallgateError `request-invalid` naming the offending key path, `policy-invalid` for a
 *   policy that does not compile.
 */
export async function readServerConfig(
  path: string,
  env: Record<string, string | undefined> = {},
): Promise<ServerConfig> {
  const file = resolve(path);
  const base = dirname(file);
  const source = await readYamlFile(file);
  holdWrittenNumbers(source, file);
  const parsed = validateYaml(serverConfigSchema, source, source.value ?? {}, file);
  const warnings: string[] = [];
  const config: ServerConfig = {
    tools: [],
    upstreams: readUpstreams(parsed.upstreams, source, file, base, warnings),
  };
  if (warnings.length > 0) config.warnings = warnings;
  if (typeof parsed.policy === 'string') {
    const policyPath = resolve(base, parsed.policy);
    config.policy = await readPolicyFile(policyPath);
    config.policySource = policyPath;
  } else if (parsed.policy) {
    config.policy = compilePolicy(parsed.policy, {
      source: file,
      locator: source.locatorWithin(['policy']),
      within: ['policy'],
    });
    config.policySource = 'inline';
  }
  if (typeof parsed.tools === 'string') {
    const toolsPath = resolve(base, parsed.tools);
    const tools = await readYamlFile(toolsPath);
    config.tools = compileTools(
      validateYaml(z.array(toolSpecSchema.strict()), tools, tools.value, toolsPath),
      tools,
      toolsPath,
      [],
    );
  } else if (parsed.tools) {
    config.tools = compileTools(parsed.tools, source, file, ['tools']);
  }
  if (parsed.data) config.data = resolve(base, parsed.data);
  if (typeof parsed.store === 'string') config.store = parsed.store;
  else if (parsed.store) {
    const url = env[parsed.store.url_env];
    if (!url) {
      throw new CallgateError(
        'request-invalid',
        ...located(
          file,
          'store.url_env',
          `the variable ${parsed.store.url_env} is not set`,
          source.positionOf(['store', 'url_env']),
        ),
      );
    }
    config.store = url;
  }
  if (parsed.log_key) config.logKey = resolve(base, parsed.log_key);
  if (parsed.host) config.host = parsed.host;
  if (parsed.port !== undefined) config.port = parsed.port;
  if ((parsed.host !== undefined || parsed.port !== undefined) && parsed.socket !== undefined)
    throw new CallgateError(
      'request-invalid',
      ...located(
        file,
        'socket',
        'give socket (a Unix-domain socket) or host and port (TCP), not both',
        source.positionOf(['socket']),
      ),
    );
  if (parsed.socket_mode !== undefined && parsed.socket === undefined)
    throw new CallgateError(
      'request-invalid',
      ...located(
        file,
        'socket_mode',
        'is the mode of the socket file: give socket: too',
        source.positionOf(['socket_mode']),
      ),
    );
  if (parsed.socket) config.socket = resolve(base, parsed.socket);
  if (parsed.socket_mode !== undefined) config.socketMode = parseSocketMode(parsed.socket_mode);
  if (parsed.vault !== undefined) config.vault = parsed.vault;
  if (parsed.synchronous !== undefined) config.synchronous = parsed.synchronous;
  if (parsed.mcp?.default_profile) config.defaultProfile = parsed.mcp.default_profile;
  if (parsed.witnesses) config.witnesses = readWitnesses(parsed.witnesses, source, file);
  if (parsed.webhook) {
    const secret = parsed.webhook.secret ?? env[parsed.webhook.secret_env ?? ''];
    if (!secret) {
      throw new CallgateError(
        'request-invalid',
        ...located(
          file,
          'webhook.secret_env',
          `the variable ${parsed.webhook.secret_env} is not set`,
          source.positionOf(['webhook', 'secret_env']),
        ),
      );
    }
    config.webhook = { url: parsed.webhook.url, secret };
  }
  return config;
}

/** The policy `callgate serve` uses when none is given: every call is denied. */
export const DENY_ALL_POLICY_TEXT = 'version: 1\ndefault: deny\nrules: []\n';
