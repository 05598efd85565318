// What the gateway's parts share (internal, not exported from the package).
import type { Engine, Logger } from '@callgate/core';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ToolCatalog } from './catalog.js';
import type { Subscriptions } from './routing.js';
import type { GatewaySession } from './session.js';
import type { Upstream } from './upstream.js';

/** The `extra` the SDK hands a request handler of the gateway's server side. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Who is calling and through which profile: what the server knows of the HTTP request. */
export interface SessionContext {
  /** The authenticated principal (API key owner); every run and approval names it. */
  principal: string;
  /** The profile whose tools this session sees (`observe`, `execute`, `full`, ...). */
  profile: string;
  /**
   * The callgate run a hook already opened for this agent (header `X-Callgate-Run`): calls it
   * decided are honoured by consuming their outstanding grant instead of deciding again.
   */
  runId?: string;
}

/** A request forwarded to an upstream and not yet answered. */
export interface InFlight {
  session: GatewaySession;
  extra: RequestExtra;
}

/**
 * The requests in flight per upstream, so that what an upstream sends while serving one
 * (sampling and elicitation requests, log messages) reaches the client that asked.
 */
export class InFlightRequests {
  readonly #byUpstream = new Map<Upstream, Set<InFlight>>();

  /** Tracks `entry` until the returned function is called. */
  track(upstream: Upstream, entry: InFlight): () => void {
    let entries = this.#byUpstream.get(upstream);
    if (!entries) {
      entries = new Set();
      this.#byUpstream.set(upstream, entries);
    }
    entries.add(entry);
    return () => {
      entries.delete(entry);
    };
  }

  /**
   * The request an upstream's message belongs to: the latest one in flight when every request
   * in flight on that upstream comes from one session; `ambiguous` when several sessions have
   * one; `none` when nothing is in flight.
   */
  route(upstream: Upstream): InFlight | 'none' | 'ambiguous' {
    const entries = this.#byUpstream.get(upstream);
    if (!entries || entries.size === 0) return 'none';
    let latest: InFlight | undefined;
    for (const entry of entries) {
      if (latest && latest.session !== entry.session) return 'ambiguous';
      latest = entry;
    }
    return latest ?? 'none';
  }
}

/** The gateway as its sessions see it. */
export interface GatewayContext {
  readonly engine: Engine;
  readonly catalog: ToolCatalog;
  readonly upstreams: readonly Upstream[];
  readonly logger: Logger;
  /** Interval of progress notifications while a call waits for an approval, in ms. */
  readonly progressIntervalMs: number;
  /** Longest page of `tools/list`, `resources/list`, `prompts/list`. */
  readonly pageSize: number;
  readonly inFlight: InFlightRequests;
  readonly subscriptions: Subscriptions;
  /** Every open session (for log levels and resource subscriptions). */
  readonly sessions: ReadonlySet<GatewaySession>;
  /** Called when a session begins, so the gateway knows it. */
  sessionStarted(session: GatewaySession): void;
  /** Called when a session ends, so the gateway forgets it. */
  sessionEnded(session: GatewaySession): void;
}
