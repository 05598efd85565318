import { describe, expect, it } from 'vitest';
import { compileToolPatterns, isGlob, isToolPattern } from './glob.js';

describe('tool patterns', () => {
  it('accept the tool name alphabet and *', () => {
    expect(isToolPattern('mcp/github.create_issue-v2')).toBe(true);
    expect(isToolPattern('read_*')).toBe(true);
    expect(isToolPattern('read file')).toBe(false);
    expect(isToolPattern('read_?')).toBe(false);
    expect(isToolPattern('')).toBe(false);
    expect(isToolPattern('a'.repeat(129))).toBe(false);
    expect(isGlob('a*')).toBe(true);
    expect(isGlob('a.b')).toBe(false);
  });

  it('match names exactly and * as any run of characters', () => {
    const matches = compileToolPatterns(['exact.tool', 'read_*', '*_invoice', 'a*b*c']);
    expect(matches('exact.tool')).toBe(true);
    expect(matches('exactXtool')).toBe(false);
    expect(matches('read_')).toBe(true);
    expect(matches('read_file/x')).toBe(true);
    expect(matches('unread_file')).toBe(false);
    expect(matches('send_invoice')).toBe(true);
    expect(matches('abc')).toBe(true);
    expect(matches('a--b--c')).toBe(true);
    expect(matches('a--b--d')).toBe(false);
  });

  it('a lone * matches everything, an empty list nothing', () => {
    expect(compileToolPatterns(['x', '*'])('anything')).toBe(true);
    expect(compileToolPatterns([])('anything')).toBe(false);
  });

  it('stays fast on a hostile name', () => {
    const matches = compileToolPatterns(['a*a*a*a*a*a*a*b']);
    const started = performance.now();
    expect(matches('a'.repeat(100_000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
