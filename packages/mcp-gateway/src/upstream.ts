// One upstream MCP server: its connection (stdio or Streamable HTTP, through the SDK's
// low-level `Client`), what it offers (tools, resources, templates, prompts) as it sent them,
// and the events the gateway follows (list changes, resource updates, log messages, and
// requests it makes of the client: sampling and elicitation).
import type { Logger } from '@callgate/core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type Progress,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ServerCapabilities,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { UpstreamConfig } from './config.js';
import { HttpClientTransport } from './http-client.js';
import { explainStartFailure } from './start-failure.js';
import { UpstreamReadBuffer } from './stdio-transport.js';

/** The gateway's name and version as an MCP client and server. */
export const GATEWAY_INFO = { name: 'callgate-gateway', version: '0.1.0' } as const;

/** A JSON object exactly as an upstream sent it (every field kept). */
export type Loose = Record<string, unknown>;

/** An MCP tool as the upstream listed it: name, input schema and whatever else it sent. */
export interface UpstreamTool extends Loose {
  name: string;
  description?: string;
  inputSchema: Loose;
  outputSchema?: Loose;
  annotations?: Loose;
}

/** What the gateway does with an upstream's events. */
export interface UpstreamEvents {
  changed(upstream: Upstream, what: 'tools' | 'resources' | 'prompts'): void;
  resourceUpdated(upstream: Upstream, params: Loose): void;
  log(upstream: Upstream, params: Loose): void;
  /** A request the upstream makes of the client (sampling, elicitation); resolves with the client's answer. */
  serverRequest(
    upstream: Upstream,
    request: { method: string; params?: Loose },
    signal: AbortSignal,
  ): Promise<Loose>;
}

export type UpstreamStatus = 'idle' | 'connecting' | 'connected' | 'disconnected' | 'closed';

const looseResult = z.looseObject({});
const page = (field: string) =>
  z.looseObject({ [field]: z.array(z.looseObject({})), nextCursor: z.string().optional() });
const toolSchema = z.looseObject({ name: z.string(), inputSchema: z.looseObject({}) });
const MAX_PAGES = 1_000;
const DEFAULT_TIMEOUT_MS = 300_000;
const RECONNECT_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

/**
 * One upstream MCP server. `connect()` starts it (or reaches it), initializes (MCP 2025-11-25)
 * and lists what it offers; the lists stay current through its list-changed notifications.
 * When the connection drops, it reconnects with a backoff and lists again.
 */
export class Upstream {
  readonly name: string;
  readonly config: UpstreamConfig;
  status: UpstreamStatus = 'idle';
  /** Why the last connection attempt failed, when it did. */
  error?: string;
  tools: UpstreamTool[] = [];
  resources: Loose[] = [];
  templates: Loose[] = [];
  prompts: Loose[] = [];
  capabilities: ServerCapabilities = {};
  instructions?: string;
  readonly #events: UpstreamEvents;
  readonly #logger: Logger;
  #client?: Client;
  /** The transport of `#client` when it is Streamable HTTP (see {@link request}). */
  #http?: HttpClientTransport;
  #starting?: Client;
  #attempt = 0;
  #reconnect?: ReturnType<typeof setTimeout>;
  #refreshing = new Map<string, Promise<void>>();

  constructor(config: UpstreamConfig, events: UpstreamEvents, logger: Logger) {
    this.name = config.name;
    this.config = config;
    this.#events = events;
    this.#logger = logger;
  }

  /** Longest time one forwarded request may take, in ms. */
  get timeoutMs(): number {
    return this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  #transport(): Transport {
    const { stdio, http } = this.config;
    if (stdio) {
      const transport = new StdioClientTransport({
        command: stdio.command,
        args: stdio.args ?? [],
        env: { ...getDefaultEnvironment(), ...stdio.env },
        ...(stdio.cwd ? { cwd: stdio.cwd } : {}),
        stderr: 'pipe',
      });
      // Answers that are not valid JSON end their request at once (see UpstreamReadBuffer).
      (transport as unknown as { _readBuffer: UpstreamReadBuffer })._readBuffer = new UpstreamReadBuffer();
      transport.stderr?.on('data', (chunk: Buffer) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line.trim()) this.#logger.debug({ upstream: this.name, stderr: line }, 'upstream stderr');
        }
      });
      return sequenced(transport);
    }
    if (!http) throw new Error(`upstream ${this.name} has neither stdio nor http`);
    return new HttpClientTransport(new URL(http.url), { ...http.headers });
  }

  /**
   * Connects and lists the upstream's tools, resources, templates and prompts.
   * @throws Error when the upstream cannot be started, reached or initialized.
   */
  async connect(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'connecting';
    const client = new Client(GATEWAY_INFO, {
      // Roots are not offered: one client's roots must never reconfigure a shared upstream.
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} } },
    });
    this.#listen(client);
    // Owned while it starts too: close() stops a process whose initialize has not answered yet.
    this.#starting = client;
    let transport: Transport | undefined;
    try {
      transport = this.#transport();
      await client.connect(transport, { timeout: 30_000 });
    } catch (error) {
      this.status = 'disconnected';
      this.error = error instanceof Error ? error.message : String(error);
      const stdio = this.config.stdio;
      const path = { ...getDefaultEnvironment(), ...stdio?.env }.PATH;
      const why = stdio ? explainStartFailure(stdio, path) : undefined;
      await client.close().catch(() => {});
      if (why) {
        this.error = `cannot start upstream ${this.name}: ${why}`;
        throw new Error(this.error, { cause: error });
      }
      throw error;
    } finally {
      if (this.#starting === client) this.#starting = undefined;
    }
    if (this.status !== 'connecting') {
      await client.close().catch(() => {});
      return;
    }
    this.#client = client;
    this.#http = transport instanceof HttpClientTransport ? transport : undefined;
    this.capabilities = client.getServerCapabilities() ?? {};
    const instructions = client.getInstructions();
    if (instructions) this.instructions = instructions;
    client.onclose = () => this.#closed(client);
    try {
      await Promise.all([this.#refresh('tools'), this.#refresh('resources'), this.#refresh('prompts')]);
    } catch (error) {
      // A connection that cannot list is no connection: stop its process before the next attempt
      // starts another one.
      this.#client = undefined;
      this.#http = undefined;
      if (this.status === 'connecting') this.status = 'disconnected';
      this.error = error instanceof Error ? error.message : String(error);
      await client.close().catch(() => {});
      throw error;
    }
    if (this.status !== 'connecting') {
      // Closed while listing.
      this.#client = undefined;
      this.#http = undefined;
      await client.close().catch(() => {});
      return;
    }
    this.status = 'connected';
    this.error = undefined;
    this.#attempt = 0;
  }

  #listen(client: Client): void {
    client.onerror = (error) =>
      this.#logger.debug({ upstream: this.name, error: error.message }, 'upstream transport error');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#changed('tools'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.#changed('resources'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.#changed('prompts'));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) =>
      this.#events.resourceUpdated(this, notification.params as Loose),
    );
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) =>
      this.#events.log(this, notification.params as Loose),
    );
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      // biome-ignore lint/suspicious/noExplicitAny: the client's answer is passed back as it came (the SDK validates it).
      return (await this.#events.serverRequest(this, request as never, extra.signal)) as any;
    });
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      // biome-ignore lint/suspicious/noExplicitAny: as above.
      return (await this.#events.serverRequest(this, request as never, extra.signal)) as any;
    });
  }

  #changed(what: 'tools' | 'resources' | 'prompts'): void {
    this.#refresh(what).then(
      () => this.#events.changed(this, what),
      (error) =>
        this.#logger.warn(
          { upstream: this.name, what, error: String(error) },
          'upstream list refresh failed',
        ),
    );
  }

  /** Lists `what` again from the upstream (a failure keeps the previous list and is logged). */
  async refresh(what: 'tools' | 'resources' | 'prompts'): Promise<void> {
    if (this.status !== 'connected') return;
    await this.#refresh(what).catch((error) =>
      this.#logger.warn({ upstream: this.name, what, error: String(error) }, 'upstream list refresh failed'),
    );
  }

  /** Lists one kind again; concurrent refreshes of one kind run one after the other. */
  #refresh(what: 'tools' | 'resources' | 'prompts'): Promise<void> {
    const previous = this.#refreshing.get(what) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(() => this.#list(what));
    this.#refreshing.set(what, next);
    return next;
  }

  async #list(what: 'tools' | 'resources' | 'prompts'): Promise<void> {
    if (what === 'tools') {
      if (!this.capabilities.tools) return;
      const tools = await this.#all('tools/list', 'tools');
      this.tools = tools.filter((tool): tool is UpstreamTool => {
        const ok = toolSchema.safeParse(tool).success;
        if (!ok)
          this.#logger.warn(
            { upstream: this.name, tool: tool.name },
            'upstream tool without a name or input schema skipped',
          );
        return ok;
      });
    } else if (what === 'resources') {
      if (!this.capabilities.resources) return;
      const [resources, templates] = await Promise.all([
        this.#all('resources/list', 'resources'),
        this.#all('resources/templates/list', 'resourceTemplates').catch(() => []),
      ]);
      this.resources = resources;
      this.templates = templates;
    } else {
      if (!this.capabilities.prompts) return;
      this.prompts = await this.#all('prompts/list', 'prompts');
    }
  }

  async #all(method: string, field: string): Promise<Loose[]> {
    const items: Loose[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let index = 0; index < MAX_PAGES; index++) {
      const result = (await this.request(method, cursor ? { cursor } : {}, {}, page(field))) as Loose;
      items.push(...((result[field] as Loose[] | undefined) ?? []));
      cursor = result.nextCursor as string | undefined;
      if (!cursor || seen.has(cursor)) break;
      seen.add(cursor);
    }
    return items;
  }

  /**
   * Sends one request to the upstream and resolves with its result exactly as sent (every
   * field kept). `signal` cancels it upstream (`notifications/cancelled`); `onprogress`
   * receives the upstream's progress notifications, which also reset the time-out. A request
   * without progress to a Streamable HTTP upstream goes straight through its transport
   * (`HttpClientTransport.call`), with the same results and errors.
   *
   * @throws McpError the upstream's error response, or a time-out or connection error.
   */
  request(
    method: string,
    params: Loose,
    options: { signal?: AbortSignal; onprogress?: (progress: Progress) => void },
    schema: z.ZodType = looseResult,
  ): Promise<Loose> {
    const client = this.#client;
    if (!client || (this.status !== 'connected' && this.status !== 'connecting')) {
      return Promise.reject(new UpstreamUnavailableError(this));
    }
    if (this.#http && !options.onprogress && schema === looseResult)
      return this.#http.call(method, params, {
        timeoutMs: this.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    return client.request({ method, params } as never, schema as never, {
      timeout: this.timeoutMs,
      resetTimeoutOnProgress: true,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
    }) as Promise<Loose>;
  }

  /** Sets the upstream's log level when it offers logging (MCP `logging/setLevel`). */
  async setLogLevel(level: string): Promise<void> {
    if (!this.capabilities.logging) return;
    await this.request('logging/setLevel', { level }, {});
  }

  #closed(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#http = undefined;
    if (this.status === 'closed') return;
    this.status = 'disconnected';
    this.#logger.warn({ upstream: this.name }, 'upstream connection closed; reconnecting');
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.status === 'closed' || this.#reconnect) return;
    const delay = RECONNECT_MS[Math.min(this.#attempt, RECONNECT_MS.length - 1)] as number;
    this.#attempt++;
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      this.connect().then(
        () => {
          for (const what of ['tools', 'resources', 'prompts'] as const) this.#events.changed(this, what);
        },
        (error) => {
          this.#logger.warn({ upstream: this.name, error: String(error) }, 'upstream reconnect failed');
          this.#scheduleReconnect();
        },
      );
    }, delay);
    this.#reconnect.unref?.();
  }

  /** Connects in the background, retrying with a backoff (used after a failed first attempt). */
  retryLater(): void {
    this.#scheduleReconnect();
  }

  /** Closes the connection (a stdio upstream's process is stopped); no reconnect follows. */
  async close(): Promise<void> {
    this.status = 'closed';
    if (this.#reconnect) clearTimeout(this.#reconnect);
    this.#reconnect = undefined;
    const clients = [this.#client, this.#starting];
    this.#client = undefined;
    this.#http = undefined;
    this.#starting = undefined;
    await Promise.all(clients.map((client) => client?.close().catch(() => {})));
  }
}

/**
 * `inner` with each received message handed on in its own microtask, after the ones before it.
 * The SDK's client handles a notification a microtask late but a response at once, so a progress
 * notification read in the same chunk as its request's response would find its handler gone.
 */
function sequenced(inner: Transport): Transport {
  let queue: Promise<unknown> = Promise.resolve();
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version),
  };
  inner.onmessage = (message, extra) => {
    queue = queue.then(() => outer.onmessage?.(message, extra));
  };
  inner.onerror = (error) => outer.onerror?.(error);
  inner.onclose = () => {
    queue = queue.then(() => outer.onclose?.());
  };
  return outer;
}

/** The upstream a request was meant for is not connected (starting, reconnecting or closed). */
export class UpstreamUnavailableError extends Error {
  constructor(upstream: Upstream) {
    super(
      `upstream ${upstream.name} is not connected (${upstream.status}${upstream.error ? `: ${upstream.error}` : ''})`,
    );
    this.name = 'UpstreamUnavailableError';
  }
}
