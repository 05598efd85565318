// What the first request pays to validate its body, with the request schemas compiled when the
// routes are mounted (createApp) and without (the schema's first parse builds its parsers).
// Each sample is a fresh process (the schemas are module singletons), cold and mounted
// interleaved, 5 rounds by default. Run: `npm run build --silent && node bench/schemas.mjs [rounds]`.
import { execFileSync } from 'node:child_process';
import { load } from './measure.mjs';

const STEP = {
  calls: [
    { id: 'c-1', tool: 'read_file', arguments: { path: '/a' }, consume: true },
    { id: 'c-2', tool: 'send_invoice', arguments: '{"to":"a","amount":5}' },
  ],
  message: { role: 'assistant', content: 'reading' },
  tools: [{ name: 'read_file', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }],
  consume: true,
  outcomes: [{ call_id: 'c-0', outcome: 'ok', result: { ok: true }, duration_ms: 2 }],
};

if (process.argv[2] === '--sample') {
  const mounted = process.argv[3] === 'mounted';
  const { decisionsBody } = await import('@callgate/protocol');
  if (mounted) {
    const core = await import('@callgate/core');
    const { createApp, DENY_ALL_POLICY_TEXT } = await import('@callgate/server');
    const store = new core.MemoryStore();
    const signer = core.logSignerFromPrivateKey(
      'bench.local/schemas',
      core.generateEd25519KeyPair().privateKey,
    );
    const ledger = await core.Ledger.open(store, { signer, origin: 'bench.local/schemas' });
    const policy = core.loadPolicy(DENY_ALL_POLICY_TEXT, { source: 'deny-all' });
    createApp({ engine: new core.Engine({ store, ledger, policy }), publicKey: signer.verifierKey });
  }
  const started = process.hrtime.bigint();
  const parsed = decisionsBody.safeParse(STEP);
  const first = Number(process.hrtime.bigint() - started) / 1e3;
  if (!parsed.success) throw new Error('the sample step does not validate');
  const rounds = 20_000;
  const steady = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) decisionsBody.safeParse(STEP);
  console.log(JSON.stringify({ first, steady: Number(process.hrtime.bigint() - steady) / 1e3 / rounds }));
  process.exit(0);
}

const rounds = Number(process.argv[2] ?? 5);
const samples = { cold: [], mounted: [] };
for (let round = 0; round < rounds; round++) {
  for (const mode of ['cold', 'mounted']) {
    const out = execFileSync(process.execPath, [import.meta.filename, '--sample', mode], {
      encoding: 'utf8',
    });
    samples[mode].push(JSON.parse(out.trim().split('\n').pop()));
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`decision request body (zod), ${rounds} rounds interleaved, load ${load()}`);
for (const mode of ['cold', 'mounted']) {
  const first = median(samples[mode].map((sample) => sample.first));
  const steady = median(samples[mode].map((sample) => sample.steady));
  console.log(
    `  ${mode.padEnd(8)} first parse ${first.toFixed(1).padStart(8)} µs   later parses ${steady.toFixed(1)} µs`,
  );
}
