// A witness's own folder: its Ed25519 key (`witness-key.json`, mode 0600) and the latest checkpoint
// it cosigned per log (`witness-state.json`), each written to a temporary file, fsync'd and renamed
// into place, so a crash leaves the old state or the new one, never a torn one.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from '@callgate/core/crypto';
import type { WitnessLogState, WitnessStateStore } from '@callgate/core/ledger';
import { CallgateError } from '@callgate/protocol';

/** Default key name of a witness (the first part of its vkey). */
export const DEFAULT_WITNESS_NAME = 'callgate.local/witness';

function writeAtomically(path: string, text: string, mode: number): void {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const descriptor = openSync(temporary, 'wx', mode);
  try {
    writeSync(descriptor, text);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  renameSync(temporary, path);
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CallgateError('internal', `${path} is unreadable: ${(error as Error).message}`, { path });
  }
}

/** The witness's 32-byte seed, made on first use. */
export function loadOrCreateWitnessKey(folder: string): Uint8Array {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, 'witness-key.json');
  const existing = readJson(path) as { v?: unknown; private_key?: unknown } | undefined;
  if (existing !== undefined) {
    const seed =
      typeof existing.private_key === 'string' ? Buffer.from(existing.private_key, 'base64url') : undefined;
    if (existing.v !== 1 || seed?.length !== 32) {
      throw new CallgateError('internal', `${path} is not {"v":1,"private_key":"<base64url seed>"}`, {
        path,
      });
    }
    return new Uint8Array(seed);
  }
  const seed = randomBytes(32);
  writeAtomically(path, `${JSON.stringify({ v: 1, private_key: seed.toString('base64url') })}\n`, 0o600);
  return new Uint8Array(seed);
}

/** The witness's state in `<folder>/witness-state.json` (`{"v":1,"logs":{origin:{size,root}}}`). */
export class FileWitnessState implements WitnessStateStore {
  readonly #path: string;
  readonly #logs: Record<string, WitnessLogState>;

  constructor(folder: string) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    this.#path = join(folder, 'witness-state.json');
    const stored = readJson(this.#path) as
      | { v?: unknown; logs?: Record<string, WitnessLogState> }
      | undefined;
    if (stored !== undefined && (stored.v !== 1 || typeof stored.logs !== 'object')) {
      throw new CallgateError('internal', `${this.#path} is not a witness state file`, { path: this.#path });
    }
    this.#logs = { ...(stored?.logs ?? {}) };
  }

  async get(origin: string): Promise<WitnessLogState | undefined> {
    return this.#logs[origin];
  }

  async set(origin: string, state: WitnessLogState): Promise<void> {
    this.#logs[origin] = { ...state };
    writeAtomically(this.#path, `${JSON.stringify({ v: 1, logs: this.#logs })}\n`, 0o600);
  }
}
