// The README's synopsis of the command is held to the program: every command and every option
// it has appears on the command's lines, so the synopsis cannot fall behind a new option.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from './program.js';

const README = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe("the README's synopsis of the command", () => {
  it('names every command and every option', () => {
    const block = /## The command[\s\S]*?```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
    // A command's lines: those starting `callgate <group>`, each with its indented continuations.
    const linesOf = (group: string) => {
      const found: string[] = [];
      let inside = false;
      for (const line of block.split('\n')) {
        if (line.startsWith('callgate '))
          inside = line.startsWith(`callgate ${group} `) || line === `callgate ${group}`;
        if (inside) found.push(line);
      }
      return found.join('\n');
    };
    const missing: string[] = [];
    const walk = (command: Command, path: string[]) => {
      for (const sub of command.commands) {
        const at = [...path, sub.name()];
        const text = linesOf(at[0] as string);
        if (!new RegExp(`(^|[\\s|])${sub.name()}(\\s|$)`).test(text)) missing.push(at.join(' '));
        for (const option of sub.options)
          if (!text.includes(option.long ?? '')) missing.push(`${at.join(' ')} ${option.long}`);
        walk(sub, at);
      }
    };
    walk(
      buildProgram(
        () => {},
        () => {},
      ),
      [],
    );
    expect(block).toContain('callgate --version');
    expect(missing).toEqual([]);
  });
});
