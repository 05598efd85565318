// Which upstream a non-tool request goes to: resources by URI (listed resources, then
// templates, then the only upstream with resources), prompts by the name clients see
// (prefixed `<upstream>__<prompt>` only when two upstreams offer the same name), and which
// sessions follow which resource (subscriptions counted across sessions).
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { PREFIX_SEPARATOR } from './config.js';
import type { GatewaySession } from './session.js';
import type { Loose, Upstream } from './upstream.js';

function templateMatches(template: unknown, uri: string): boolean {
  if (typeof template !== 'string') return false;
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}

/**
 * The upstreams that may serve resource `uri`, best first: those that listed it, then those
 * whose templates match it, then (when none did) every upstream offering resources.
 */
export function upstreamsForResource(upstreams: readonly Upstream[], uri: string): Upstream[] {
  const offering = upstreams.filter((upstream) => upstream.capabilities.resources !== undefined);
  const listed = offering.filter((upstream) => upstream.resources.some((resource) => resource.uri === uri));
  if (listed.length > 0) return listed;
  const templated = offering.filter((upstream) =>
    upstream.templates.some((template) => templateMatches(template.uriTemplate, uri)),
  );
  return templated.length > 0 ? templated : offering;
}

/** A prompt as clients see it, and where it lives. */
export interface RoutedPrompt {
  name: string;
  upstream: Upstream;
  upstreamName: string;
  advertised: Loose;
}

/** Every upstream prompt under the name clients see, in configuration order. */
export function promptCatalog(upstreams: readonly Upstream[]): Map<string, RoutedPrompt> {
  const counts = new Map<string, number>();
  for (const upstream of upstreams) {
    for (const prompt of upstream.prompts)
      counts.set(String(prompt.name), (counts.get(String(prompt.name)) ?? 0) + 1);
  }
  const prompts = new Map<string, RoutedPrompt>();
  for (const upstream of upstreams) {
    for (const prompt of upstream.prompts) {
      const own = String(prompt.name);
      const prefixed = upstream.config.prefix === true || (counts.get(own) ?? 0) > 1;
      const name = prefixed ? `${upstream.name}${PREFIX_SEPARATOR}${own}` : own;
      if (!prompts.has(name))
        prompts.set(name, { name, upstream, upstreamName: own, advertised: { ...prompt, name } });
    }
  }
  return prompts;
}

/**
 * Resource subscriptions across sessions: an upstream is subscribed to a URI while at least
 * one session follows it, and its `notifications/resources/updated` reach exactly those sessions.
 */
export class Subscriptions {
  readonly #followers = new Map<string, Set<GatewaySession>>();
  readonly #upstreamOf = new Map<string, Upstream>();

  /** Adds `session` as a follower; true when it is the URI's first follower (subscribe upstream). */
  add(uri: string, session: GatewaySession, upstream: Upstream): boolean {
    let followers = this.#followers.get(uri);
    const first = !followers || followers.size === 0;
    if (!followers) {
      followers = new Set();
      this.#followers.set(uri, followers);
    }
    followers.add(session);
    session.subscriptions.add(uri);
    if (first) this.#upstreamOf.set(uri, upstream);
    return first;
  }

  /** Removes `session`; returns the upstream to unsubscribe when it was the URI's last follower. */
  remove(uri: string, session: GatewaySession): Upstream | undefined {
    session.subscriptions.delete(uri);
    const followers = this.#followers.get(uri);
    if (!followers?.delete(session) || followers.size > 0) return undefined;
    this.#followers.delete(uri);
    const upstream = this.#upstreamOf.get(uri);
    this.#upstreamOf.delete(uri);
    return upstream;
  }

  /** The sessions following `uri` at `upstream`. */
  followers(uri: string, upstream: Upstream): GatewaySession[] {
    if (this.#upstreamOf.get(uri) !== upstream) return [];
    return [...(this.#followers.get(uri) ?? [])];
  }
}
