import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { ExecutableCall, ToolSpec } from '@callgate/core';

/** The demo's tools: real file operations confined to one sandbox folder. */
export const DEMO_TOOLS: ToolSpec[] = [
  {
    name: 'list_files',
    description: 'List the files in a folder of the sandbox.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'read_file',
    description: 'Read a text file of the sandbox.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'write_file',
    description: 'Write a text file in the sandbox.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true, idempotentHint: true },
  },
  {
    name: 'delete_file',
    description: 'Delete a file.',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true },
  },
];

/**
 * Resolves `path` inside `sandbox`. The tools themselves also refuse a path that escapes the
 * sandbox: the policy is the first line, not the only one.
 */
function inside(sandbox: string, path: string): string {
  const full = resolve(sandbox, path);
  const rel = relative(sandbox, full);
  if (rel.startsWith('..') || isAbsolute(rel)) throw new Error(`${path} is outside the sandbox`);
  return full;
}

/** Runs one demo tool against the sandbox folder. */
export async function runDemoTool(sandbox: string, call: ExecutableCall): Promise<unknown> {
  const path = String(call.arguments.path);
  switch (call.tool) {
    case 'list_files': {
      const entries = await readdir(inside(sandbox, path), { withFileTypes: true });
      return entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort();
    }
    case 'read_file':
      return { path, content: await readFile(inside(sandbox, path), 'utf8') };
    case 'write_file': {
      const target = inside(sandbox, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, String(call.arguments.content));
      return { path, bytes: (await stat(target)).size };
    }
    case 'delete_file':
      await rm(inside(sandbox, path));
      return { path, deleted: true };
    default:
      throw new Error(`the demo has no tool ${call.tool}`);
  }
}
