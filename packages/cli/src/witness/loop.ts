// `callgate serve` with `witnesses:`: every new checkpoint (and, while a witness has not cosigned,
// every tick) goes to the witnesses. The timer never keeps the process alive.
import { type Logger, type Store, Witnessing } from '@callgate/core';

/** A running submission loop. */
export interface WitnessLoop {
  witnessing: Witnessing;
  stop(): Promise<void>;
}

/** Starts submitting `store`'s checkpoints every `intervalMs` (default 500). */
export function startWitnessLoop(options: {
  store: Store;
  witnesses: { quorum?: number; servers: Array<{ url: string; key: string }> };
  logger: Logger;
  intervalMs?: number;
}): WitnessLoop {
  const witnessing = new Witnessing({
    store: options.store,
    witnesses: options.witnesses.servers,
    ...(options.witnesses.quorum !== undefined ? { quorum: options.witnesses.quorum } : {}),
    logger: options.logger,
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
