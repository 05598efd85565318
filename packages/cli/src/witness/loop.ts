// `callgate serve` with `witnesses:`: every new checkpoint (and, while a witness has not cosigned,
// every tick) goes to the witnesses. The timer never keeps the process alive.
import { type Logger, type Store, uuidv7 } from '@callgate/core';
import { type Ledger, type WitnessGap, Witnessing } from '@callgate/core/ledger';

/**
 * Records witness gaps in the log itself, in a run of their own (framework `witness`): a `gap`
 * record when a witness starts failing (from = to = then) and one spanning the outage when it
 * cosigns again. A silent skip would look like a witnessed log.
 */
function gapRecorder(
  ledger: Ledger,
): (gap: WitnessGap, phase: 'opened' | 'closed', now: number) => Promise<void> {
  let runId: string | undefined;
  return async (gap, phase, now) => {
    if (runId === undefined) {
      runId = uuidv7();
      await ledger.append(runId, {
        type: 'run-start',
        principal: 'callgate',
        framework: 'witness',
        labels: {},
      });
    }
    const reason =
      phase === 'opened'
        ? `witness ${gap.witness} did not cosign checkpoint ${gap.size}: ${gap.reason}`
        : `witness ${gap.witness} cosigns again (it missed checkpoints from size ${gap.size}: ${gap.reason})`;
    await ledger.append(runId, {
      type: 'gap',
      reason,
      from_ts: gap.since,
      to_ts: phase === 'opened' ? gap.since : now,
      calls: 0,
    });
  };
}

/** A running submission loop. */
export interface WitnessLoop {
  witnessing: Witnessing;
  stop(): Promise<void>;
}

/** Starts submitting `store`'s checkpoints every `intervalMs` (default 500). */
export function startWitnessLoop(options: {
  store: Store;
  /** Where gaps are recorded; without it they are only logged. */
  ledger?: Ledger;
  witnesses: { quorum?: number; servers: Array<{ url: string; key: string }> };
  logger: Logger;
  intervalMs?: number;
}): WitnessLoop {
  const witnessing = new Witnessing({
    store: options.store,
    witnesses: options.witnesses.servers,
    ...(options.witnesses.quorum !== undefined ? { quorum: options.witnesses.quorum } : {}),
    logger: options.logger,
    ...(options.ledger ? { onGap: gapRecorder(options.ledger) } : {}),
  });
  let submitted = -1;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let busy = false;
  const tick = () => {
    // One submission at a time: the witnesses see checkpoints in order.
    if (busy) return;
    busy = true;
    running = (async () => {
      const latest = await options.store.latestCheckpoint();
      if (!latest || (latest.size === submitted && witnessing.gaps.length === 0)) return;
      await witnessing.submitLatest();
      submitted = latest.size;
    })()
      .catch((error: unknown) => {
        if (!stopped) options.logger.warn({ error: (error as Error).message }, 'witness submission failed');
      })
      .finally(() => {
        busy = false;
      });
  };
  const timer = setInterval(tick, options.intervalMs ?? 500);
  timer.unref();
  return {
    witnessing,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
