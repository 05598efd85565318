// Test support: the command run in-process on its parser, as the binary runs it. Not built into
// dist (tsconfig excludes it), not exported.
import { CommanderError } from 'commander';
import { exitCodeOfThrown } from './exit-codes.js';
import { buildProgram } from './program.js';

/**
 * Runs `callgate ARGS` in-process: the exit code (as bin.ts sets it), every line written (results
 * and errors, in order), and the lines of each channel alone: `output` the results (standard output
 * in bin.ts), `errors` the errors, refusals and warnings (standard error).
 */
export async function callgate(args: string[]): Promise<{
  code: number;
  lines: string[];
  output: string[];
  errors: string[];
}> {
  const lines: string[] = [];
  const output: string[] = [];
  const errors: string[] = [];
  let code = 0;
  const program = buildProgram(
    (line) => {
      lines.push(line);
      output.push(line);
    },
    (value) => {
      code = value;
    },
    (line) => {
      lines.push(line);
      errors.push(line);
    },
  );
  const capture = (command: typeof program) => {
    command.configureOutput({ writeOut: (text) => lines.push(text), writeErr: (text) => lines.push(text) });
    for (const sub of command.commands) capture(sub);
  };
  capture(program);
  try {
    await program.parseAsync(['node', 'callgate', ...args]);
  } catch (error) {
    // As bin.ts: commander has printed its usage errors; any other error is printed here.
    if (!(error instanceof CommanderError)) lines.push(`callgate: ${(error as Error).message}`);
    code = exitCodeOfThrown(error);
  }
  return { code, lines, output, errors };
}
