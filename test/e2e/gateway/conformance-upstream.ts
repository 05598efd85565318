// A test upstream MCP server implementing what the MCP conformance suite's server scenarios
// expect (@modelcontextprotocol/conformance 0.1.x: tools `test_*`, resources `test://...`,
// prompts `test_*_prompt`, completion, logging, subscriptions), served over Streamable HTTP on
// 127.0.0.1 with resumable streams. Built on the SDK's low-level Server, one per session.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type EventStore,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  isInitializeRequest,
  type JSONRPCMessage,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  type Tool,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

// A 1×1 red PNG and a tiny silent WAV.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';
const sleep = (ms: number) => new Promise((wake) => setTimeout(wake, ms));
const noArguments = { type: 'object', properties: {} } as const;
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

const TOOLS: Tool[] = [
  { name: 'test_simple_text', description: 'Returns simple text', inputSchema: noArguments },
  { name: 'test_image_content', description: 'Returns an image', inputSchema: noArguments },
  { name: 'test_audio_content', description: 'Returns audio', inputSchema: noArguments },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource', inputSchema: noArguments },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource',
    inputSchema: noArguments,
  },
  { name: 'test_tool_with_logging', description: 'Logs three messages', inputSchema: noArguments },
  { name: 'test_error_handling', description: 'Always fails', inputSchema: noArguments },
  { name: 'test_tool_with_progress', description: 'Reports progress', inputSchema: noArguments },
  {
    name: 'test_sampling',
    description: 'Asks the client for a completion',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for input',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation with defaults',
    inputSchema: noArguments,
  },
  { name: 'test_elicitation_sep1330_enums', description: 'Elicitation with enums', inputSchema: noArguments },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: {
        address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
      },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
  },
  { name: 'test_reconnection', description: 'Closes its SSE stream mid-call', inputSchema: noArguments },
];

const ELICIT_DEFAULTS = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
};

const ELICIT_ENUMS = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
    titledMulti: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
        ],
      },
    },
  },
};

/** How many event streams `test_reconnection` closed mid-call. */
let streamsClosed = 0;

/** Extra tools added while running (to exercise `notifications/tools/list_changed`). */
const extraTools: Tool[] = [];
const servers = new Set<Server>();

function createServer(): Server {
  const server = new Server(
    { name: 'conformance-upstream', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
      },
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...TOOLS, ...extraTools] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    const log = (data: string) =>
      extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
    switch (request.params.name) {
      case 'test_simple_text':
        return text('This is a simple text response for testing.');
      case 'test_image_content':
        return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return {
          content: [
            {
              type: 'resource',
              resource: {
                uri: 'test://embedded-resource',
                mimeType: 'text/plain',
                text: 'This is an embedded resource content.',
              },
            },
          ],
        };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: {
                uri: 'test://mixed-content-resource',
                mimeType: 'application/json',
                text: '{"test":"data","value":123}',
              },
            },
          ],
        };
      case 'test_tool_with_logging':
        await log('Tool execution started');
        await sleep(50);
        await log('Tool processing data');
        await sleep(50);
        await log('Tool execution completed');
        return text('Logging test completed');
      case 'test_error_handling':
        return { isError: true, ...text('This tool intentionally returns an error for testing') };
      case 'test_tool_with_progress': {
        const token = extra._meta?.progressToken;
        for (const progress of [0, 50, 100]) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress, total: 100 },
            });
          }
          if (progress < 100) await sleep(50);
        }
        return text('Progress test completed');
      }
      case 'test_sampling': {
        if (!server.getClientCapabilities()?.sampling)
          return { isError: true, ...text('the client does not support sampling') };
        const answer = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: {
              messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
              maxTokens: 100,
            },
          },
          CreateMessageResultSchema,
        );
        const content = answer.content as { type: string; text?: string };
        return text(`LLM response: ${content.type === 'text' ? content.text : JSON.stringify(content)}`);
      }
      case 'test_elicitation':
      case 'test_elicitation_sep1034_defaults':
      case 'test_elicitation_sep1330_enums': {
        if (!server.getClientCapabilities()?.elicitation)
          return { isError: true, ...text('the client does not support elicitation') };
        const schema =
          request.params.name === 'test_elicitation'
            ? {
                type: 'object',
                properties: {
                  username: { type: 'string', description: "User's response" },
                  email: { type: 'string', description: "User's email address" },
                },
                required: ['username', 'email'],
              }
            : request.params.name === 'test_elicitation_sep1034_defaults'
              ? ELICIT_DEFAULTS
              : ELICIT_ENUMS;
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { message: String(args.message ?? 'Please answer'), requestedSchema: schema as never },
          },
          ElicitResultSchema,
        );
        return text(
          `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`,
        );
      }
      case 'json_schema_2020_12_tool':
        return text(`Received ${JSON.stringify(args)}`);
      case 'test_reconnection':
        await sleep(50);
        if (extra.closeSSEStream) {
          streamsClosed++;
          extra.closeSSEStream();
        }
        await sleep(150);
        return text('Reconnection test completed');
      default: {
        const added = extraTools.find((tool) => tool.name === request.params.name);
        if (added) return text(`${added.name} ran`);
        return { isError: true, ...text(`Unknown tool ${request.params.name}`) };
      }
    }
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: [
      {
        uri: 'test://static-text',
        name: 'Static text',
        description: 'A text resource',
        mimeType: 'text/plain',
      },
      { uri: 'test://static-binary', name: 'Static binary', description: 'A PNG', mimeType: 'image/png' },
      {
        uri: 'test://watched-resource',
        name: 'Watched',
        description: 'A resource to subscribe to',
        mimeType: 'text/plain',
      },
    ],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'Template',
        description: 'Data by id',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (uri === 'test://static-text' || uri === 'test://watched-resource') {
      return {
        contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
      };
    }
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] };
    const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (match) {
      const id = match[1];
      return {
        contents: [
          {
            uri,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    }
    throw new Error(`Resource not found: ${uri}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [
      { name: 'test_simple_prompt', description: 'A simple prompt' },
      {
        name: 'test_prompt_with_arguments',
        description: 'A prompt with arguments',
        arguments: [
          { name: 'arg1', description: 'First argument', required: true },
          { name: 'arg2', description: 'Second argument', required: true },
        ],
      },
      {
        name: 'test_prompt_with_embedded_resource',
        description: 'A prompt with an embedded resource',
        arguments: [{ name: 'resourceUri', description: 'Resource to embed', required: true }],
      },
      { name: 'test_prompt_with_image', description: 'A prompt with an image' },
    ],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    const user = (content: Record<string, unknown>) => ({ role: 'user' as const, content: content as never });
    switch (request.params.name) {
      case 'test_simple_prompt':
        return { messages: [user({ type: 'text', text: 'This is a simple prompt for testing.' })] };
      case 'test_prompt_with_arguments':
        return {
          messages: [
            user({ type: 'text', text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` }),
          ],
        };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            user({
              type: 'resource',
              resource: {
                uri: args.resourceUri,
                mimeType: 'text/plain',
                text: 'Embedded resource content for testing.',
              },
            }),
            user({ type: 'text', text: 'Please process the embedded resource above.' }),
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            user({ type: 'image', data: PNG, mimeType: 'image/png' }),
            user({ type: 'text', text: 'Please analyze the image above.' }),
          ],
        };
      default:
        throw new Error(`Prompt not found: ${request.params.name}`);
    }
  });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const value = request.params.argument.value;
    const values = ['paris', 'park', 'party', 'test', 'testing'].filter((item) => item.startsWith(value));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

/** An in-memory event store so that closed SSE streams can be resumed (Last-Event-ID). */
function memoryEventStore(): EventStore {
  const events: Array<{ id: string; stream: string; message: JSONRPCMessage }> = [];
  return {
    async storeEvent(stream, message) {
      const id = `${stream}_${events.length}`;
      events.push({ id, stream, message });
      return id;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const index = events.findIndex((event) => event.id === lastEventId);
      const stream = events[index]?.stream ?? '';
      for (const event of events.slice(index + 1))
        if (event.stream === stream) await send(event.id, event.message);
      return stream;
    },
  };
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function localHost(host: string | null): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  return LOCAL_HOSTS.has(name ?? '');
}

/** The running conformance upstream. */
export interface ConformanceUpstream {
  url: string;
  /** Adds a tool and tells every session its tool list changed. */
  addTool(name: string): void;
  /** How many event streams `test_reconnection` closed mid-call so far. */
  streamsClosed(): number;
  /** Forgets every session, as a restarted server would. */
  forgetSessions(): void;
  close(): Promise<void>;
}

/** Starts the conformance upstream on 127.0.0.1 (a free port), at path `/mcp`. */
export async function startConformanceUpstream(): Promise<ConformanceUpstream> {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const http = serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request: Request) => {
      if (!localHost(request.headers.get('host'))) return new Response('forbidden host', { status: 403 });
      const origin = request.headers.get('origin');
      if (origin && !localHost(new URL(origin).host))
        return new Response('forbidden origin', { status: 403 });
      const id = request.headers.get('mcp-session-id');
      if (id) {
        const transport = sessions.get(id);
        return transport
          ? transport.handleRequest(request)
          : new Response('unknown session', { status: 404 });
      }
      const body: unknown =
        request.method === 'POST' ? await request.json().catch(() => undefined) : undefined;
      if (!isInitializeRequest(body)) return new Response('initialize first', { status: 400 });
      const server = createServer();
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: memoryEventStore(),
        retryInterval: 100,
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
        servers.delete(server);
      };
      servers.add(server);
      await server.connect(transport);
      return transport.handleRequest(request, { parsedBody: body });
    },
  });
  await new Promise<void>((ready) => http.once('listening', () => ready()));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    streamsClosed: () => streamsClosed,
    forgetSessions() {
      sessions.clear();
    },
    addTool(name) {
      extraTools.push({ name, description: `Added at run time: ${name}`, inputSchema: noArguments });
      for (const server of servers) server.sendToolListChanged().catch(() => {});
    },
    async close() {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      http.closeAllConnections?.();
      await new Promise<void>((done) => http.close(() => done()));
    },
  };
}
