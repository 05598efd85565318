// Changing the policy of a running server (SIGHUP, `POST /v1/admin/policy`): the new policy is
// validated first, recorded in the ledger, then put in force for the next decision. A policy that
// does not load is refused (rule id and line:column in the error) and the old one stays.
import { loadPolicy, type Policy } from '@callgate/core';
import { putPolicyDocument } from '@callgate/core/ledger';
import { CallgateError, isCallgateError } from '@callgate/protocol';
import { policyReloadSchema, policyStateSchema, reloadPolicyBody } from './http/schemas.js';
import { defineRoute, type Route } from './routes/define.js';
import type { ServerContext } from './server-context.js';

/** Reads the policy again from where the server got it (a file, or the config's `policy:`). */
export type PolicySourceReader = () => Promise<{ policy: Policy; source: string }>;

/** What a reload did. */
export interface PolicyReload {
  /** False when the new policy has the digest of the one in force (nothing recorded). */
  changed: boolean;
  policy_digest: string;
  previous_digest: string;
  source: string;
  /**
   * The run that records the change: `run-start` (principal: who reloaded; labels `event:
   * policy-reload`, `source`, `previous_digest`), `policy-snapshot`, `run-end`.
   */
  run_id?: string;
}

/**
 * Puts new policies in force on a server's engine, one at a time. Each change is recorded as a
 * short run of its own, so the ledger says which policy was in force from when, and who changed
 * it; every run records the snapshot again before its next decision (as at start).
 */
export class PolicyReloader {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly server: ServerContext,
    private readonly options: { read?: PolicySourceReader; defaultProfile: string },
  ) {}

  /** True when the server knows where to read its policy again (SIGHUP can reload). */
  get canReread(): boolean {
    return this.options.read !== undefined;
  }

  /**
   * Reloads: from `text` (policy YAML), or, without it, from where the server read its policy.
   *
   * @param by who asks (an API key's name, or `SIGHUP`); the recording run's principal.
   * @throws CallgateError `policy-invalid` for a policy that does not load (message
   *   `<source>:<line>:<column>: rule "<id>": …`, details `{ rule, line, column, path }`),
   *   `request-invalid` when there is no text and nowhere to read from, or when the policy lacks
   *   the MCP gateway's default profile. The policy in force is then unchanged.
   */
  reload(request: { text?: string; source?: string; by: string }): Promise<PolicyReload> {
    const next = this.#queue.then(() => this.#reload(request));
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #reload(request: { text?: string; source?: string; by: string }): Promise<PolicyReload> {
    const { engine } = this.server;
    let loaded: { policy: Policy; source: string };
    if (request.text !== undefined) {
      const source = request.source ?? 'policy';
      loaded = { policy: loadPolicy(request.text, { source }), source };
    } else if (this.options.read) {
      loaded = await this.options.read();
    } else {
      throw new CallgateError(
        'request-invalid',
        'this server was started without a policy file: send the policy YAML as body.policy',
        { path: 'body.policy' },
      );
    }
    const { policy, source } = loaded;
    const profile = this.options.defaultProfile;
    if (profile !== 'full' && !Object.hasOwn(policy.profiles, profile))
      throw new CallgateError(
        'request-invalid',
        `the new policy has no profile ${profile}, which /mcp serves (mcp.default_profile); the policy in force is unchanged`,
      );
    const previous = engine.policy.digest;
    if (policy.digest === previous) {
      // Logged too, so that an operator who sent SIGHUP sees the signal arrived and was read.
      this.server.logger.info(
        { policy_digest: policy.digest, source, by: request.by },
        'policy reloaded unchanged: same digest as the policy in force',
      );
      return { changed: false, policy_digest: policy.digest, previous_digest: previous, source };
    }
    await putPolicyDocument(engine.store, policy.document);
    const run = await engine.startRun({
      principal: request.by,
      framework: 'callgate',
      labels: { event: 'policy-reload', source: source.slice(0, 200), previous_digest: previous },
    });
    await engine.ledger.append(run.run_id, { type: 'policy-snapshot', policy_digest: policy.digest });
    await engine.endRun(run.run_id, 'completed');
    engine.setPolicy(policy);
    this.server.logger.info(
      { policy_digest: policy.digest, previous_digest: previous, source, by: request.by },
      'policy reloaded',
    );
    return {
      changed: true,
      policy_digest: policy.digest,
      previous_digest: previous,
      source,
      run_id: run.run_id,
    };
  }

  /**
   * Reloads on `signal` (SIGHUP) from where the server read its policy; failures are logged with
   * their line:column and the old policy stays. Returns the function that removes the handler.
   */
  onSignal(signal: NodeJS.Signals = 'SIGHUP'): () => void {
    if (!this.canReread) return () => {};
    const handler = () => {
      this.reload({ by: signal }).catch((error: unknown) => {
        this.server.logger.error(
          {
            error: isCallgateError(error) ? error.message : String(error),
            ...(isCallgateError(error) ? { kind: error.kind, details: error.details } : {}),
          },
          'policy reload refused; the policy in force is unchanged',
        );
      });
    };
    process.on(signal, handler);
    return () => process.removeListener(signal, handler);
  }
}

/** `GET /v1/admin/policy` (the policy in force) and `POST /v1/admin/policy` (reload), admin only. */
export function policyRoutes(server: ServerContext, reloader: PolicyReloader): Route[] {
  return [
    defineRoute({
      method: 'get',
      path: '/admin/policy',
      operationId: 'getPolicy',
      summary: 'The policy in force: its digest and normalized document',
      roles: ['admin'],
      response: policyStateSchema,
      async handler() {
        const policy = server.engine.policy;
        return { policy_digest: policy.digest, policy: policy.document, reloadable: reloader.canReread };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/admin/policy',
      operationId: 'reloadPolicy',
      summary: 'Put a new policy in force (validated, then recorded in the ledger)',
      roles: ['admin'],
      body: reloadPolicyBody,
      response: policyReloadSchema,
      async handler({ body, key }) {
        return reloader.reload({
          ...(body.policy !== undefined ? { text: body.policy } : {}),
          ...(body.source !== undefined ? { source: body.source } : {}),
          by: key.name,
        });
      },
    }),
  ];
}
