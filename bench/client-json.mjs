// What writing a request body and reading an answer cost `@callgate/client`, JSON.stringify /
// JSON.parse (before) against the lossless `encodeBody` / `decodeAnswer` (after), side by side in
// one process (alternating rounds; the median of each): a step's decisions body, an outcome with
// a 4 KB result, and the decisions answer.
// Run after `npm run build`: `node bench/client-json.mjs [--rounds 15]`
import { loadavg } from 'node:os';
import { decodeAnswer, encodeBody } from '../packages/client/dist/json.js';

const roundsIndex = process.argv.indexOf('--rounds');
const rounds = roundsIndex > 0 ? Number(process.argv[roundsIndex + 1]) : 15;

const decisions = {
  calls: [
    { id: 'call_1', tool: 'send_invoice', arguments: { to: 'ACME GmbH', amount: 4200, lines: [1, 2, 3] } },
    { id: 'call_2', tool: 'read_file', arguments: '{"path":"/data/notes.txt"}' },
  ],
  message: { role: 'assistant', content: [{ type: 'text', text: 'Sending the invoice now.' }] },
  consume: true,
  outcomes: [{ call_id: 'call_0', outcome: 'ok', result: { ok: true, rows: 12 }, grant_consumed: true }],
};
const outcome = {
  call_id: 'call_1',
  outcome: 'ok',
  result: {
    content: [{ type: 'text', text: 'x'.repeat(4096) }],
    rows: Array.from({ length: 20 }, (_, i) => i),
  },
  duration_ms: 12.5,
  grant_consumed: true,
};
const answer = JSON.stringify({
  verdicts: [
    {
      call_id: 'call_1',
      minted: false,
      attempt: 1,
      tool: 'send_invoice',
      status: 'allowed',
      arguments: decisions.calls[0].arguments,
      arguments_digest: `sha256:${'a'.repeat(64)}`,
      decision: { effect: 'allow', rules: ['small-invoices'], reason: 'within limits' },
      grant: { v: 1, token: 'g'.repeat(43), expires_at: 1_800_000_000_000 },
      grant_consumed: true,
    },
  ],
  outcomes: [{ call_id: 'call_0', outcome: 'ok' }],
});

const cases = [
  ['write decisions body', () => JSON.stringify(decisions), () => encodeBody(decisions)],
  ['write outcome, 4 KB result', () => JSON.stringify(outcome), () => encodeBody(outcome)],
  ['read decisions answer', () => JSON.parse(answer), () => decodeAnswer(answer)],
];

function timeOne(work, iterations) {
  const start = process.hrtime.bigint();
  for (let index = 0; index < iterations; index++) work();
  return Number(process.hrtime.bigint() - start) / iterations / 1000; // µs per operation
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

console.log(
  `load average before: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
for (const [name, before, after] of cases) {
  for (let warm = 0; warm < 2000; warm++) {
    before();
    after();
  }
  const times = { before: [], after: [] };
  for (let round = 0; round < rounds; round++) {
    times.before.push(timeOne(before, 2000));
    times.after.push(timeOne(after, 2000));
  }
  const b = median(times.before);
  const a = median(times.after);
  console.log(
    `${name.padEnd(28)} before ${b.toFixed(2).padStart(7)} µs   after ${a.toFixed(2).padStart(7)} µs   after/before ${(a / b).toFixed(2)}`,
  );
}
console.log(
  `load average after:  ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);
