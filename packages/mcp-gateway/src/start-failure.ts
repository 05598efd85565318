// Why a stdio upstream could not start, in words a person can act on: which file was looked
// for, in which folder, and what was wrong with it.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { StdioUpstream } from './config.js';

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Explains a stdio upstream's failure to start when the cause is its command or folder (spawn's
 * bare `ENOENT` / `EACCES` names neither the folder nor the resolved path).
 *
 * @param stdio the upstream's settings as the gateway uses them (`cwd` already resolved).
 * @param path the `PATH` the child is started with (bare commands are looked up on it).
 * @returns a sentence such as `command ./bin/server resolves to /srv/x/bin/server, which does
 *   not exist (relative paths are resolved against /srv/x)`, or undefined when the command and
 *   folder look fine (the failure is the upstream's own: see its stderr).
 */
export function explainStartFailure(stdio: StdioUpstream, path: string | undefined): string | undefined {
  const folder = resolve(stdio.cwd ?? process.cwd());
  if (!exists(folder)) return `its folder (cwd) ${folder} does not exist`;
  const { command } = stdio;
  if (command.includes('/') || command.includes('\\')) {
    const resolved = isAbsolute(command) ? command : resolve(folder, command);
    const where = isAbsolute(command) ? '' : ` (relative paths are resolved against ${folder})`;
    if (!exists(resolved)) return `command ${command} resolves to ${resolved}, which does not exist${where}`;
    if (!executable(resolved))
      return `command ${command} resolves to ${resolved}, which is not an executable file${where}`;
    return undefined;
  }
  const directories = (path ?? '').split(delimiter).filter(Boolean);
  if (!directories.some((directory) => executable(join(directory, command))))
    return `command ${command} is not on PATH (${directories.join(delimiter) || 'empty'}), started in ${folder}`;
  return undefined;
}
