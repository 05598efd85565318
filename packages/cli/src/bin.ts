#!/usr/bin/env node
import { CommanderError } from 'commander';
import { buildProgram } from './program.js';

const program = buildProgram(
  (line) => process.stdout.write(`${line}\n`),
  (code) => {
    process.exitCode = code;
  },
);
try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // Help and version print and exit 0; any usage error has been printed by commander: exit 2.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`callgate: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
