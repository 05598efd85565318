// `callgate witness serve`: a witness (c2sp.org/tlog-witness) in its own process, with its own key
// and state folder, cosigning the checkpoints of the logs it is told to trust.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { parseVerifierKey, Witness, witnessSignerFromPrivateKey } from '@callgate/core/ledger';
import { CallgateError, type ErrorBody } from '@callgate/protocol';
import {
  answerClientErrors,
  bodyTooLarge,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  drainBeforeClose,
  methodNotAllowedResponse,
  requestTimeoutOptions,
} from '@callgate/server';
import { DEFAULT_WITNESS_NAME, FileWitnessState, loadOrCreateWitnessKey } from '../witness/files.js';

const MAX_BODY_BYTES = 64 * 1024;

/** Options of {@link startWitness}. */
export interface WitnessServeOptions {
  data: string;
  /** Verifier keys of the logs to witness; each key's name is the log's origin. */
  log: string[];
  name?: string;
  host?: string;
  port?: number;
  /** Longest wait for a request's headers, ms (default `DEFAULT_HEADERS_TIMEOUT_MS`, 10 s); then 408. */
  headersTimeout?: number;
  /** Longest wait for a whole request, ms (default `DEFAULT_REQUEST_TIMEOUT_MS`, 30 s); then 408. */
  requestTimeout?: number;
  /**
   * Where the cause of a request the witness failed to handle is written (one line; the CLI
   * writes it to standard error). The client gets a generic 500: the cause may name paths.
   */
  warn?: (line: string) => void;
}

/** A running witness: its vkey, URL and how to stop it. */
export interface RunningWitness {
  verifierKey: string;
  url: string;
  close(): Promise<void>;
}

/**
 * The body of `request` as UTF-8 text, or undefined when it is over {@link MAX_BODY_BYTES} (then
 * read no further: the 413 goes out at once, and `drainBeforeClose` reads the rest off the wire
 * before the connection closes).
 */
function readBody(request: IncomingMessage): Promise<string | undefined> {
  const declared = Number.parseInt(request.headers['content-length'] ?? '', 10);
  if (declared > MAX_BODY_BYTES) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      request.off('data', onData);
      request.off('end', onEnd);
      request.pause();
      resolve(undefined);
    };
    const onEnd = () => resolve(Buffer.concat(chunks).toString('utf8'));
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', reject);
  });
}

/**
 * Answers `response` with callgate's error JSON (`{"error": {"kind", "message", ...}}`), as
 * `callgate serve` and the 408/400/431 of {@link answerClientErrors} do.
 */
function answerError(
  response: ServerResponse,
  status: number,
  error: CallgateError | ErrorBody,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(error instanceof CallgateError ? error.toBody() : error);
  response
    .writeHead(status, {
      ...headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    })
    .end(body);
}

/**
 * Starts a witness over HTTP: `POST /add-checkpoint` (tlog-witness). Listens on 127.0.0.1 and an
 * ephemeral port unless told otherwise.
 * @throws CallgateError `request-invalid` for a log key that is not a verifier key.
 */
export async function startWitness(options: WitnessServeOptions): Promise<RunningWitness> {
  const folder = resolve(options.data);
  const logs = new Map<string, string>();
  for (const key of options.log) logs.set(parseVerifierKey(key).name, key);
  const signer = witnessSignerFromPrivateKey(
    options.name ?? DEFAULT_WITNESS_NAME,
    loadOrCreateWitnessKey(folder),
  );
  const witness = new Witness({ signer, logs, state: new FileWitnessState(folder) });
  // The limits `callgate serve` holds requests to: a client that sends half a request does not
  // hold a connection for as long as it likes.
  const timeouts = {
    headersTimeoutMs: options.headersTimeout ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
  };
  const server: Server = createServer(requestTimeoutOptions(timeouts), (request, response) => {
    if (request.url !== '/add-checkpoint') {
      const error = new CallgateError('not-found', `no route ${request.method} ${request.url}`);
      return answerError(response, 404, error);
    }
    if (request.method !== 'POST') {
      const { status, body, headers } = methodNotAllowedResponse(request.method ?? '', '/add-checkpoint', [
        'POST',
      ]);
      return answerError(response, status, body, headers);
    }
    readBody(request)
      .then(async (body) => {
        if (body === undefined) return answerError(response, 413, bodyTooLarge(MAX_BODY_BYTES));
        // The checkpoint's own answers (200, 403, 409, 422 ...) are tlog-witness's, as it writes them.
        const answer = await witness.addCheckpoint(body);
        response.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
      })
      .catch((error: unknown) => {
        // As `callgate serve` answers a failure: the cause is logged, never sent (it may hold
        // the state folder's paths); the client learns only that the witness failed.
        const cause = error instanceof Error ? (error.stack ?? error.message) : String(error);
        options.warn?.(`callgate witness serve: a checkpoint could not be handled: ${cause}`);
        answerError(
          response,
          500,
          new CallgateError('internal', 'the witness failed to handle the checkpoint (its log says why)'),
        );
      });
  });
  answerClientErrors(server, timeouts);
  // A 413 sent before the body was read reaches a client still writing it.
  drainBeforeClose(server, { timeoutMs: timeouts.requestTimeoutMs });
  await new Promise<void>((ready, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => ready());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    verifierKey: signer.verifierKey,
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
