import type { ErrorKind } from '@callgate/protocol';
import { recordable } from '../json/normalize.js';
import { commitValue, type GateContext } from './context.js';
import type { ModelMessage } from './decide.js';

/** An MCP request passed through to an upstream that is not a tool call (see `Engine.recordExchange`). */
export interface ExchangeReport {
  method: string;
  upstream: string;
  target?: string | null;
  params: unknown;
  result?: unknown;
  error_kind?: ErrorKind;
}

/**
 * Appends a `model-message` record for a message that asked for no tool calls; its content is
 * committed (kept in the vault when the vault is on), never stored in the ledger.
 */
export async function recordMessage(
  context: GateContext,
  runId: string,
  message: ModelMessage,
): Promise<void> {
  const writes: Promise<unknown>[] = [];
  const content = message.content === undefined ? undefined : recordable(message.content);
  writes.push(
    context.ledger.append(runId, {
      type: 'model-message',
      role: message.role,
      content_commitment: content === undefined ? null : commitValue(context, content.value, writes),
      ...(content && content.reasons.length > 0 ? { content_normalized: content.reasons } : {}),
      tool_calls: [],
    }),
  );
  await Promise.all(writes);
}

/** Appends an `mcp-exchange` record; parameters and result are committed, never stored. */
export async function recordExchange(
  context: GateContext,
  runId: string,
  exchange: ExchangeReport,
): Promise<void> {
  const writes: Promise<unknown>[] = [];
  writes.push(
    context.ledger.append(runId, {
      type: 'mcp-exchange',
      method: exchange.method,
      upstream: exchange.upstream,
      target: exchange.target ?? null,
      params_commitment: commitValue(context, recordable(exchange.params ?? null).value, writes),
      result_commitment:
        exchange.result === undefined
          ? null
          : commitValue(context, recordable(exchange.result).value, writes),
      ...(exchange.error_kind ? { error_kind: exchange.error_kind } : {}),
    }),
  );
  await Promise.all(writes);
}
