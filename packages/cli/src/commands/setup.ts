// What `callgate serve` and `callgate mcp --stdio` set up alike: the log lines, the policy, the
// default MCP profile and the gateway in front of the config's upstreams.
import { resolve } from 'node:path';
import { type Engine, type Logger, loadPolicy, type Policy } from '@callgate/core';
import { createGateway, type Gateway, type UpstreamState } from '@callgate/mcp-gateway';
import { CallgateError } from '@callgate/protocol';
import { DENY_ALL_POLICY_TEXT, readPolicyFile, type ServerConfig } from '@callgate/server';

export { lineLogger } from '../log.js';

/**
 * The policy to serve: the `--policy` file, else the config's, else deny everything (and
 * `warn` says so).
 * @returns the policy and where it came from (a path, `inline`, or the default), for banners.
 * @throws CallgateError `request-invalid` or `policy-invalid` for a policy file that does not load.
 */
export async function choosePolicy(
  config: ServerConfig,
  policyFlag: string | undefined,
  warn: (line: string) => void,
): Promise<{ policy: Policy; source: string }> {
  if (policyFlag) {
    const path = resolve(policyFlag);
    return { policy: await readPolicyFile(path), source: path };
  }
  if (config.policy) return { policy: config.policy, source: config.policySource ?? 'config' };
  warn('warning: no policy given (--policy FILE or policy: in --config): every tool call will be denied');
  return {
    policy: loadPolicy(DENY_ALL_POLICY_TEXT, { source: 'default policy' }),
    source: 'default (deny everything)',
  };
}

/**
 * Checks that `profile` is one the gateway can serve: `full` or one the policy defines.
 * @throws CallgateError `request-invalid` naming the profiles there are.
 */
export function checkProfile(policy: Policy, profile: string, what: string): void {
  if (profile === 'full' || Object.hasOwn(policy.profiles, profile)) return;
  const known = ['full', ...Object.keys(policy.profiles)].join(', ');
  throw new CallgateError(
    'request-invalid',
    `${what}: the policy has no profile ${profile} (it has ${known})`,
  );
}

/** True for a host that only this machine can reach: `localhost`, `127.x.x.x`, `::1`. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}

/**
 * Creates the gateway in front of `config.upstreams` on `engine` and starts it (upstreams that
 * cannot be reached are retried in the background). When `host` is a loopback address, only
 * loopback `Host` headers are accepted (MCP's DNS rebinding protection for local servers).
 */
export async function startGateway(options: {
  engine: Engine;
  config: ServerConfig;
  logger: Logger;
  host?: string;
  /** Receives the gateway before its upstreams are started (to close it should start be interrupted). */
  onCreated?: (gateway: Gateway) => void;
}): Promise<{ gateway: Gateway; upstreams: UpstreamState[] }> {
  let allowedHosts: string[] | undefined;
  if (options.host !== undefined && isLoopback(options.host)) {
    const bare = options.host.replace(/^\[|\]$/g, '');
    allowedHosts = [...new Set(['localhost', '127.0.0.1', '[::1]', bare.includes(':') ? `[${bare}]` : bare])];
  }
  const gateway = createGateway({
    engine: options.engine,
    upstreams: options.config.upstreams,
    logger: options.logger,
    ...(allowedHosts ? { allowedHosts } : {}),
  });
  options.onCreated?.(gateway);
  try {
    return { gateway, upstreams: await gateway.start() };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

/** One line per upstream for a banner: `files connected, 14 tools`. */
export function upstreamLines(states: readonly UpstreamState[]): string[] {
  if (states.length === 0) return ['none (list MCP servers under upstreams: in the config)'];
  return states.map((state) => {
    const tools = `${state.tools.length} tool${state.tools.length === 1 ? '' : 's'}`;
    const why = state.status === 'connected' ? '' : ` (retrying${state.error ? `: ${state.error}` : ''})`;
    return `${state.name} ${state.status}, ${tools}${why}`;
  });
}
