#!/usr/bin/env node
import { CommanderError } from 'commander';
import { exitCodeOfThrown } from './exit-codes.js';
import { buildProgram } from './program.js';

// A reader that stops early (`callgate runs list --help | head`) closes the pipe: that is not
// an error of callgate's, so stop quietly instead of printing a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const program = buildProgram(
  (line) => process.stdout.write(`${line}\n`),
  (code) => {
    process.exitCode = code;
  },
  (line) => process.stderr.write(`${line}\n`),
);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Help and version print and exit 0; a usage error commander has printed. Anything else is
  // printed here; its code is the exit-code table's (docs/operations.md).
  if (!(error instanceof CommanderError)) process.stderr.write(`callgate: ${(error as Error).message}\n`);
  process.exitCode = exitCodeOfThrown(error);
}
// A command has finished (`serve` and `witness serve` once stopped, having closed what they
// opened). Should a library still hold a handle, end within a bounded time instead of waiting
// for a second signal; the timer does not itself keep the process alive.
setTimeout(() => process.exit(), 3_000).unref();
