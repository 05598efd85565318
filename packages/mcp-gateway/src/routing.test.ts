import { describe, expect, it } from 'vitest';
import { InFlightRequests, type RequestExtra } from './context.js';
import { promptCatalog, Subscriptions, upstreamsForResource } from './routing.js';
import type { GatewaySession } from './session.js';
import type { Upstream } from './upstream.js';

function upstream(name: string, fields: Partial<Upstream>): Upstream {
  return {
    name,
    config: { name },
    capabilities: {},
    resources: [],
    templates: [],
    prompts: [],
    ...fields,
  } as unknown as Upstream;
}

const session = () => ({ subscriptions: new Set<string>() }) as unknown as GatewaySession;

describe('upstreamsForResource', () => {
  const a = upstream('a', { capabilities: { resources: {} }, resources: [{ uri: 'file:///x' }] });
  const b = upstream('b', {
    capabilities: { resources: {} },
    templates: [{ uriTemplate: 'db://{table}/{id}' }],
  });
  const c = upstream('c', {});

  it('prefers the upstream that listed the URI, then a matching template, then any with resources', () => {
    expect(upstreamsForResource([a, b, c], 'file:///x')).toEqual([a]);
    expect(upstreamsForResource([a, b, c], 'db://users/7')).toEqual([b]);
    expect(upstreamsForResource([a, b, c], 'other://thing')).toEqual([a, b]);
  });
});

describe('promptCatalog', () => {
  it('prefixes prompt names only when they collide', () => {
    const a = upstream('a', { prompts: [{ name: 'summarize' }, { name: 'greet' }] });
    const b = upstream('b', { prompts: [{ name: 'summarize' }] });
    const prompts = promptCatalog([a, b]);
    expect([...prompts.keys()]).toEqual(['a__summarize', 'greet', 'b__summarize']);
    expect(prompts.get('b__summarize')).toMatchObject({
      upstream: b,
      upstreamName: 'summarize',
      advertised: { name: 'b__summarize' },
    });
  });
});

describe('Subscriptions', () => {
  it('subscribes upstream for the first follower and unsubscribes after the last', () => {
    const up = upstream('a', {});
    const subscriptions = new Subscriptions();
    const one = session();
    const two = session();
    expect(subscriptions.add('r://1', one, up)).toBe(true);
    expect(subscriptions.add('r://1', two, up)).toBe(false);
    expect(subscriptions.followers('r://1', up)).toEqual([one, two]);
    expect(subscriptions.followers('r://1', upstream('b', {}))).toEqual([]);
    expect(subscriptions.remove('r://1', one)).toBeUndefined();
    expect(subscriptions.remove('r://1', two)).toBe(up);
    expect(subscriptions.followers('r://1', up)).toEqual([]);
  });
});

describe('InFlightRequests', () => {
  it('routes to the only session with requests in flight, never guesses between sessions', () => {
    const up = upstream('a', {});
    const inFlight = new InFlightRequests();
    const one = session();
    const extra = {} as RequestExtra;
    expect(inFlight.route(up)).toBe('none');
    const first = inFlight.track(up, { session: one, extra });
    const second = inFlight.track(up, { session: one, extra });
    expect(inFlight.route(up)).toMatchObject({ session: one });
    const other = inFlight.track(up, { session: session(), extra });
    expect(inFlight.route(up)).toBe('ambiguous');
    other();
    first();
    second();
    expect(inFlight.route(up)).toBe('none');
  });
});
