import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { compilePolicy, loadPolicy, type Policy, type ToolSpec } from '@callgate/core';
import { CallgateError, toolSpecSchema } from '@callgate/protocol';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseWith } from './http/validation.js';

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
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  webhook: webhookSchema.optional(),
  /** Keep content (arguments, results, messages) beside the records. Default false. */
  vault: z.boolean().optional(),
});

/** A server configuration with every path resolved and the policy compiled. */
export interface ServerConfig {
  /** Undefined when the file names none (the caller picks the default). */
  policy?: Policy;
  /** Where the policy came from, for messages: a path or `inline`. */
  policySource?: string;
  tools: ToolSpec[];
  data?: string;
  host?: string;
  port?: number;
  webhook?: { url: string; secret: string };
  vault?: boolean;
}

async function readYamlFile(path: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CallgateError('request-invalid', `${what}: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return parseYaml(text);
  } catch (error) {
    throw new CallgateError(
      'request-invalid',
      `${what}: ${path} is not valid YAML: ${(error as Error).message}`,
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
 * the file's folder, compiles the policy and reads the tool specs.
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
  const raw = (await readYamlFile(file, 'config')) ?? {};
  const parsed = parseWith(serverConfigSchema, raw, file);
  const config: ServerConfig = { tools: [] };
  if (typeof parsed.policy === 'string') {
    const policyPath = resolve(base, parsed.policy);
    config.policy = await readPolicyFile(policyPath);
    config.policySource = policyPath;
  } else if (parsed.policy) {
    config.policy = compilePolicy(parsed.policy, { source: `${file}: policy` });
    config.policySource = 'inline';
  }
  if (typeof parsed.tools === 'string') {
    const toolsPath = resolve(base, parsed.tools);
    config.tools = parseWith(
      z.array(toolSpecSchema.strict()),
      await readYamlFile(toolsPath, 'tools'),
      toolsPath,
    );
  } else if (parsed.tools) {
    config.tools = parsed.tools;
  }
  if (parsed.data) config.data = resolve(base, parsed.data);
  if (parsed.host) config.host = parsed.host;
  if (parsed.port !== undefined) config.port = parsed.port;
  if (parsed.vault !== undefined) config.vault = parsed.vault;
  if (parsed.webhook) {
    const secret = parsed.webhook.secret ?? env[parsed.webhook.secret_env ?? ''];
    if (!secret) {
      throw new CallgateError(
        'request-invalid',
        `${file}.webhook.secret_env: the variable ${parsed.webhook.secret_env} is not set`,
      );
    }
    config.webhook = { url: parsed.webhook.url, secret };
  }
  return config;
}

/** The policy `callgate serve` uses when none is given: every call is denied. */
export const DENY_ALL_POLICY_TEXT = 'version: 1\ndefault: deny\nrules: []\n';
