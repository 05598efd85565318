// A witness (c2sp.org/tlog-witness `add-checkpoint`): for each log it knows (origin and verifier
// key), it keeps the latest checkpoint it cosigned and cosigns a new one only when a consistency
// proof shows the new tree extends it. It never cosigns a smaller tree, another tree of the same
// size, or a checkpoint the log's key did not sign. Transport-free: the HTTP side passes the
// request body in and sends the response out.

import { decodeBase64 } from '../base64.js';
import { emptyRoot, verifyConsistency } from '../merkle.js';
import { openCheckpoint } from '../signed-note.js';
import { cosign, type WitnessSigner } from './cosignature.js';

/** The latest checkpoint a witness cosigned for one log: its size and base64 root. */
export interface WitnessLogState {
  size: number;
  root: string;
}

/** Where a witness keeps its state. `set` must be durable when it resolves. */
export interface WitnessStateStore {
  get(origin: string): Promise<WitnessLogState | undefined>;
  set(origin: string, state: WitnessLogState): Promise<void>;
}

/** A state store in memory (tests; a witness that forgets on restart is no witness). */
export class MemoryWitnessState implements WitnessStateStore {
  readonly #states = new Map<string, WitnessLogState>();
  async get(origin: string) {
    return this.#states.get(origin);
  }
  async set(origin: string, state: WitnessLogState) {
    this.#states.set(origin, { ...state });
  }
}

/** Options of {@link Witness}. */
export interface WitnessOptions {
  signer: WitnessSigner;
  /** The logs it witnesses: origin → the log's verifier key (C2SP note key). */
  logs: ReadonlyMap<string, string> | Record<string, string>;
  state: WitnessStateStore;
  /** POSIX seconds. Default: now. */
  clock?: () => number;
}

/** An HTTP answer of `add-checkpoint`: status, body and its content type. */
export interface WitnessResponse {
  status: 200 | 400 | 403 | 404 | 409 | 422;
  body: string;
  contentType: string;
}

const MAX_PROOF_LINES = 63;
const text = (status: WitnessResponse['status'], body: string): WitnessResponse => ({
  status,
  body: body.endsWith('\n') ? body : `${body}\n`,
  contentType: 'text/plain; charset=utf-8',
});

/** The witness of c2sp.org/tlog-witness, one request at a time (check and persist are atomic). */
export class Witness {
  readonly #signer: WitnessSigner;
  readonly #logs: ReadonlyMap<string, string>;
  readonly #state: WitnessStateStore;
  readonly #clock: () => number;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: WitnessOptions) {
    this.#signer = options.signer;
    this.#logs = options.logs instanceof Map ? options.logs : new Map(Object.entries(options.logs));
    this.#state = options.state;
    this.#clock = options.clock ?? (() => Math.floor(Date.now() / 1000));
  }

  /** The witness's vkey. */
  get verifierKey(): string {
    return this.#signer.verifierKey;
  }

  /** The latest cosigned state of `origin`, if any. */
  latest(origin: string): Promise<WitnessLogState | undefined> {
    return this.#state.get(origin);
  }

  /**
   * Handles one `add-checkpoint` request body (`old <size>\n`, up to 63 base64 proof lines, an
   * empty line, the checkpoint note). 200 with the cosignature line; 400 malformed or old size
   * beyond the checkpoint's; 403 not signed by the log's key; 404 unknown origin; 409 old size is
   * not the latest cosigned size (body: that size, `text/x.tlog.size`); 422 proof does not verify.
   */
  addCheckpoint(body: string): Promise<WitnessResponse> {
    const run = this.#queue.then(() => this.#add(body));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #add(body: string): Promise<WitnessResponse> {
    const split = body.indexOf('\n\n');
    if (split < 0) return text(400, 'the request has no empty line before the checkpoint');
    const head = body.slice(0, split).split('\n');
    const note = body.slice(split + 2);
    const oldLine = /^old (0|[1-9][0-9]{0,15})$/.exec(head[0] ?? '');
    if (!oldLine) return text(400, 'the first line must be "old <size>"');
    const oldSize = Number(oldLine[1]);
    const proofLines = head.slice(1);
    if (proofLines.length > MAX_PROOF_LINES) return text(400, `more than ${MAX_PROOF_LINES} proof lines`);
    const proof: Uint8Array[] = [];
    for (const line of proofLines) {
      const hash = decodeBase64(line);
      if (hash === undefined || hash.length !== 32) return text(400, 'a proof line is not a base64 hash');
      proof.push(hash);
    }
    const origin = note.slice(0, note.indexOf('\n'));
    const logKey = this.#logs.get(origin);
    if (logKey === undefined) return text(404, `unknown log origin ${JSON.stringify(origin)}`);
    const opened = openCheckpoint(note, logKey);
    if (!opened.ok) return text(403, `the checkpoint is not signed by the log's key: ${opened.reason}`);
    const checkpoint = opened.value;
    if (checkpoint.origin !== origin) return text(403, 'the checkpoint origin does not match');
    if (oldSize > checkpoint.size)
      return text(400, `old size ${oldSize} is beyond the checkpoint size ${checkpoint.size}`);
    const latest = await this.#state.get(origin);
    const latestSize = latest?.size ?? 0;
    if (oldSize !== latestSize) {
      return { status: 409, body: `${latestSize}\n`, contentType: 'text/x.tlog.size' };
    }
    const root = Buffer.from(checkpoint.root);
    if (checkpoint.size === 0 && !root.equals(emptyRoot()))
      return text(422, 'a checkpoint of size 0 must have the empty root');
    if (oldSize === 0) {
      if (proof.length > 0) return text(422, 'a consistency proof from size 0 must be empty');
    } else {
      const latestRoot = decodeBase64(latest?.root ?? '') ?? new Uint8Array();
      if (!verifyConsistency(oldSize, checkpoint.size, proof, latestRoot, root)) {
        return text(
          422,
          oldSize === checkpoint.size
            ? `another tree of size ${oldSize} was cosigned`
            : `the consistency proof from size ${oldSize} does not verify`,
        );
      }
    }
    await this.#state.set(origin, { size: checkpoint.size, root: root.toString('base64') });
    const noteText = note.slice(0, note.lastIndexOf('\n\n') + 1);
    return {
      status: 200,
      body: cosign(noteText, this.#signer, this.#clock()),
      contentType: 'text/plain; charset=utf-8',
    };
  }
}

/** The `add-checkpoint` request body for a checkpoint note, from `oldSize` with its proof. */
export function addCheckpointBody(oldSize: number, proof: readonly Uint8Array[], note: string): string {
  return `old ${oldSize}\n${proof.map((hash) => `${Buffer.from(hash).toString('base64')}\n`).join('')}\n${note}`;
}
