// Newline-delimited JSON-RPC (MCP stdio transport) read line by line within a size limit: a line
// over the limit is never held whole — its bytes are dropped as they arrive until its newline,
// keeping only a few hundred bytes of its start and end, from which the id of the request it
// answers may be read. Buffers are joined once per line (no copy per chunk).
import { standIn } from './exact-json.js';

/** Bytes kept of the start and of the end of a line over the limit. */
const KEPT_BYTES = 256;

/** `line` without the `\r` of a `\r\n` line end. */
const withoutReturn = (line: string): string => (line.endsWith('\r') ? line.slice(0, -1) : line);

/** One line read: its text, or a line over the limit (its start and end only). */
export type LineRead = { line: string } | { overLimit: { head: string; tail: string } };

/**
 * Splits a byte stream into lines (UTF-8, without `\n` / `\r\n`), at most `maxBytes` bytes
 * each; see the file's head for lines over the limit.
 */
export class LineSplitter {
  #parts: Buffer[] = [];
  #size = 0;
  #discarding = false;
  #head = '';
  #tail: Buffer = Buffer.alloc(0);

  /** @param maxBytes the largest line, in bytes (a positive integer or Infinity). */
  constructor(readonly maxBytes: number) {
    if (!(maxBytes > 0)) throw new RangeError(`maxBytes must be positive, got ${maxBytes}`);
  }

  /** The lines `chunk` completes, in order; the rest of it is kept for the next chunk. */
  push(chunk: Buffer): LineRead[] {
    const reads: LineRead[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(10, start);
      if (newline >= 0 && this.#size === 0 && !this.#discarding && newline - start <= this.maxBytes) {
        // A whole line within this chunk (the usual case): decoded in place, no copy.
        reads.push({ line: withoutReturn(chunk.toString('utf8', start, newline)) });
        start = newline + 1;
        continue;
      }
      const end = newline < 0 ? chunk.length : newline;
      this.#take(chunk.subarray(start, end));
      if (newline < 0) break;
      reads.push(this.#endLine());
      start = newline + 1;
    }
    return reads;
  }

  /** The last line when the stream ended without a newline after it (none when empty). */
  end(): LineRead[] {
    if (!this.#discarding && this.#size === 0) return [];
    return [this.#endLine()];
  }

  /** Forgets what is held. */
  clear(): void {
    this.#parts = [];
    this.#size = 0;
    this.#discarding = false;
    this.#head = '';
    this.#tail = Buffer.alloc(0);
  }

  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.#discarding) {
      this.#keepTail(piece);
      return;
    }
    if (this.#size + piece.length <= this.maxBytes) {
      this.#parts.push(piece);
      this.#size += piece.length;
      return;
    }
    const held = [...this.#parts, piece];
    this.#head = Buffer.concat(held, Math.min(KEPT_BYTES, this.#size + piece.length)).toString('utf8');
    this.#tail = Buffer.alloc(0);
    for (const part of held.slice(-2)) this.#keepTail(part);
    this.#parts = [];
    this.#size = 0;
    this.#discarding = true;
  }

  #keepTail(piece: Buffer): void {
    const joined =
      piece.length >= KEPT_BYTES
        ? piece.subarray(piece.length - KEPT_BYTES)
        : Buffer.concat([this.#tail, piece]);
    this.#tail = Buffer.from(joined.subarray(Math.max(0, joined.length - KEPT_BYTES)));
  }

  #endLine(): LineRead {
    if (this.#discarding) {
      const read = { overLimit: { head: this.#head, tail: this.#tail.toString('utf8') } };
      this.clear();
      return read;
    }
    const line = Buffer.concat(this.#parts, this.#size).toString('utf8');
    this.#parts = [];
    this.#size = 0;
    return { line: withoutReturn(line) };
  }
}

/** A JSON-RPC id token: an integer or a string literal. */
const ID = String.raw`(-?(?:0|[1-9][0-9]*)|"(?:[^"\\]|\\.)*")`;
/** Members that may come before a top-level `id`: `jsonrpc`, `method` (string values). */
const LEADING = String.raw`(?:\s*"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,)*`;
const ID_FIRST = new RegExp(String.raw`^\s*\{${LEADING}\s*"id"\s*:\s*${ID}\s*[,}]`);
const ID_LAST = new RegExp(String.raw`,\s*"id"\s*:\s*${ID}\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`);

/**
 * The top-level id of a JSON-RPC message seen only by its start and end (a line over the
 * limit), when it is written among its first members or as its last: a string, a safe
 * integer, or the stand-in of a larger integer's digits (exact-json.ts). Undefined otherwise.
 */
export function idOfCutMessage(head: string, tail: string): string | number | undefined {
  const token = ID_FIRST.exec(head)?.[1] ?? ID_LAST.exec(tail)?.[1];
  if (token === undefined) return undefined;
  if (token.startsWith('"')) {
    try {
      return JSON.parse(token) as string;
    } catch {
      return undefined;
    }
  }
  const number = Number(token);
  return Number.isSafeInteger(number) ? number : standIn(token);
}

/** The message naming the limit a line went over: `a message over the limit of N bytes`. */
export const overLimitMessage = (what: string, maxBytes: number): string =>
  `${what} over the limit of ${maxBytes} bytes (discarded unread)`;
