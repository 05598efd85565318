// A scrape of /metrics read by a strict parser of the Prometheus text exposition format 0.0.4:
// every sample belongs to a family declared by HELP and TYPE, names and labels are well formed,
// values are numbers, histogram buckets are cumulative and end at +Inf = _count.

import { type Json, testApp } from '@callgate/testing/server';
import { describe, expect, it } from 'vitest';

interface Family {
  name: string;
  type: string;
  help: string;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];

function parseValue(text: string, line: number): number {
  // As Prometheus reads values (Go's strconv.ParseFloat): NaN and Inf in any letter case.
  if (/^\+?inf$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(text))
    throw new Error(`line ${line}: bad value ${text}`);
  return Number(text);
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest.length > 0) {
    const match = /^([^=]+)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/.exec(rest);
    if (!match) throw new Error(`line ${line}: bad labels {${text}}`);
    const [whole, name = '', value = ''] = match;
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name ${name}`);
    if (Object.hasOwn(labels, name)) throw new Error(`line ${line}: repeated label ${name}`);
    labels[name] = value.replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char));
    rest = rest.slice(whole.length);
  }
  return labels;
}

/** Parses the text format strictly; throws naming the line of the first problem. */
function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const familyOf = (sample: string, type: string | undefined) => {
    for (const suffix of ['_bucket', '_sum', '_count', '']) {
      if (!sample.endsWith(suffix)) continue;
      const family = families.get(sample.slice(0, sample.length - suffix.length));
      if (family && (suffix === '' || type === undefined || ['histogram', 'summary'].includes(family.type)))
        return family;
    }
    return undefined;
  };
  text
    .slice(0, -1)
    .split('\n')
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw === '') return;
      const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
      if (meta) {
        const [, kind, name = '', rest = ''] = meta;
        if (!NAME.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
        const family = families.get(name) ?? { name, type: '', help: '', samples: [] };
        if (kind === 'TYPE') {
          if (!TYPES.includes(rest)) throw new Error(`line ${line}: bad type ${rest}`);
          if (family.type) throw new Error(`line ${line}: second TYPE for ${name}`);
          family.type = rest;
        } else family.help = rest;
        families.set(name, family);
        return;
      }
      if (raw.startsWith('#')) return;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)( -?\d+)?$/.exec(raw);
      if (!sample) throw new Error(`line ${line}: not a sample: ${raw}`);
      const [, name = '', labels = '', value = ''] = sample;
      const family = familyOf(name, 'any');
      if (!family?.type) throw new Error(`line ${line}: sample ${name} has no TYPE before it`);
      family.samples.push({ name, labels: parseLabels(labels, line), value: parseValue(value, line) });
    });
  for (const family of families.values()) {
    if (!family.type) throw new Error(`${family.name}: HELP without TYPE`);
    if (family.type !== 'histogram') continue;
    const series = new Map<string, number[]>();
    for (const sample of family.samples) {
      if (!sample.name.endsWith('_bucket')) continue;
      const { le, ...rest } = sample.labels;
      if (le === undefined) throw new Error(`${family.name}: bucket without le`);
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), sample.value]);
      if (le === '+Inf') {
        const count = family.samples.find(
          (other) => other.name === `${family.name}_count` && JSON.stringify(other.labels) === key,
        );
        if (count?.value !== sample.value) throw new Error(`${family.name}: +Inf bucket is not _count`);
      }
    }
    for (const values of series.values())
      values.forEach((value, index) => {
        if (index > 0 && value < (values[index - 1] as number))
          throw new Error(`${family.name}: buckets not cumulative`);
      });
  }
  return families;
}

const value = (families: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  [...families.values()]
    .flatMap((family) => family.samples)
    .find(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([label, wanted]) => sample.labels[label] === wanted),
    )?.value;

describe('GET /metrics', () => {
  it('counts the CPU the process used since it started, not since the first scrape', async () => {
    // Work done before /metrics is first read (as a server serves long before its first scrape).
    const start = process.cpuUsage();
    let spin = 0;
    while (process.cpuUsage(start).user < 200_000) spin += Math.sqrt(spin + 1);
    expect(spin).toBeGreaterThan(0);
    const { app } = await testApp();
    const before = process.cpuUsage();
    const families = parsePrometheusText(await (await app.request('/metrics')).text());
    expect(families.get('callgate_process_cpu_seconds_total')?.type).toBe('counter');
    expect(value(families, 'callgate_process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(
      before.user / 1e6,
    );
    expect(value(families, 'callgate_process_cpu_system_seconds_total')).toBeGreaterThanOrEqual(
      before.system / 1e6,
    );
    expect(value(families, 'callgate_process_cpu_seconds_total')).toBeGreaterThanOrEqual(
      (before.user + before.system) / 1e6,
    );
    const again = parsePrometheusText(await (await app.request('/metrics')).text());
    expect(value(again, 'callgate_process_cpu_seconds_total')).toBeGreaterThanOrEqual(
      value(families, 'callgate_process_cpu_seconds_total') as number,
    );
  });

  it('is Prometheus text whose figures follow the decisions, approvals, grants and requests made', async () => {
    const { call, keys, app } = await testApp();
    const run = await call('POST', '/v1/runs', { key: keys.agent, body: { framework: 'vitest' } });
    const runId = run.json.run_id;
    const decided = await call('POST', `/v1/runs/${runId}/decisions`, {
      key: keys.agent,
      body: {
        calls: [
          { id: 'r', tool: 'read_file', arguments: { path: 'a' } },
          { id: 'big', tool: 'send_invoice', arguments: { to: 'acme', amount: 5000 } },
          { id: 'other', tool: 'send_invoice', arguments: { to: 'beta', amount: 9000 } },
          { id: 'x', tool: 'delete_file', arguments: { path: 'b' } },
        ],
      },
    });
    const verdicts: Json[] = decided.json.verdicts;
    let families = parsePrometheusText(await (await app.request('/metrics')).text());
    expect(value(families, 'callgate_decisions_total', { effect: 'allow', rule: 'reads' })).toBe(1);
    expect(value(families, 'callgate_decisions_total', { effect: 'ask', rule: 'large-invoices' })).toBe(2);
    expect(value(families, 'callgate_decisions_total', { effect: 'deny', rule: '' })).toBe(1);
    expect(value(families, 'callgate_approvals_pending')).toBe(2);

    const approvalId = verdicts[1].approval.id;
    await call('POST', `/v1/approvals/${approvalId}/approve`, { key: keys.reviewer, body: { reason: 'ok' } });
    const grant = (await call('GET', `/v1/approvals/${approvalId}`, { key: keys.agent })).json.grant.token;
    const binding = {
      run_id: runId,
      call_id: 'big',
      tool: 'send_invoice',
      arguments: { to: 'acme', amount: 5000 },
    };
    expect(
      (await call('POST', '/v1/grants/consume', { key: keys.agent, body: { token: grant, ...binding } }))
        .status,
    ).toBe(200);
    const again = await call('POST', '/v1/grants/consume', {
      key: keys.agent,
      body: { token: grant, ...binding },
    });
    expect(again.status).toBe(409);
    await call('POST', `/v1/runs/${runId}/outcomes`, {
      key: keys.agent,
      body: { call_id: 'big', outcome: 'ok', result: { sent: true }, grant_consumed: true },
    });
    const text = await (await app.request('/metrics')).text();
    families = parsePrometheusText(text);
    expect(value(families, 'callgate_approvals_pending')).toBe(1);
    expect(value(families, 'callgate_approval_wait_seconds_count', { status: 'approved' })).toBe(1);
    expect(value(families, 'callgate_grant_consumes_total', { result: 'consumed' })).toBe(1);
    expect(value(families, 'callgate_grant_consumes_total', { result: 'refused' })).toBe(1);
    expect(value(families, 'callgate_ledger_append_seconds_count')).toBeGreaterThan(5);
    expect(value(families, 'callgate_ledger_records')).toBeGreaterThan(5);
    expect(families.get('callgate_checkpoint_lag_records')?.type).toBe('gauge');
    expect(
      value(families, 'callgate_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/runs/:id/decisions',
        status: '200',
      }),
    ).toBe(1);
    expect(families.get('callgate_process_cpu_user_seconds_total')?.type).toBe('counter');
  });

  it('rejects what is not the text format (the parser can fail)', () => {
    expect(() => parsePrometheusText('x 1\n')).toThrow('no TYPE');
    expect(() => parsePrometheusText('# TYPE x counter\nx{a="1} 1\n')).toThrow('bad labels');
    expect(() => parsePrometheusText('# TYPE x counter\nx one\n')).toThrow('bad value');
    expect(() =>
      parsePrometheusText(
        '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\nh_sum 1\n',
      ),
    ).toThrow('cumulative');
  });
});
