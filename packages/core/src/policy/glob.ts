// Tool name patterns: a tool name, or a glob where `*` matches any run of characters
// (including none). No other character is special, so a pattern reads as what it matches.

/** Letters, digits, `_ . - /` (the tool name alphabet of `toolSpecSchema`) and `*`. */
const TOOL_PATTERN = /^[A-Za-z0-9_.\-/*]{1,128}$/;

/** True when `pattern` is a valid tool name or glob. */
export function isToolPattern(pattern: string): boolean {
  return TOOL_PATTERN.test(pattern);
}

/** True when `pattern` contains the wildcard `*`. */
export function isGlob(pattern: string): boolean {
  return pattern.includes('*');
}

/** A predicate on tool names. */
export type ToolMatcher = (tool: string) => boolean;

/**
 * Compiles a list of tool names and globs into one predicate: exact names go into a set, each
 * glob into a matcher that runs in time linear in the name per segment (no regular expression,
 * so no catastrophic backtracking on a hostile name). An empty list matches nothing.
 */
export function compileToolPatterns(patterns: readonly string[]): ToolMatcher {
  const names = new Set<string>();
  const globs: ToolMatcher[] = [];
  for (const pattern of patterns) {
    if (pattern === '*') return () => true;
    if (isGlob(pattern)) globs.push(compileGlob(pattern));
    else names.add(pattern);
  }
  if (globs.length === 0) return (tool) => names.has(tool);
  return (tool) => names.has(tool) || globs.some((glob) => glob(tool));
}

/** `prefix*middle*...*suffix`: the prefix and suffix in place, the middles in order between. */
function compileGlob(glob: string): ToolMatcher {
  const parts = glob.split('*');
  const prefix = parts[0] ?? '';
  const suffix = parts[parts.length - 1] ?? '';
  const middles = parts.slice(1, -1).filter((part) => part !== '');
  const minimumLength = parts.reduce((total, part) => total + part.length, 0);
  return (tool) => {
    if (tool.length < minimumLength || !tool.startsWith(prefix) || !tool.endsWith(suffix)) return false;
    const end = tool.length - suffix.length;
    let position = prefix.length;
    for (const middle of middles) {
      // The leftmost occurrence leaves the most room for the rest, so it is the one to take.
      const found = tool.indexOf(middle, position);
      if (found < 0 || found + middle.length > end) return false;
      position = found + middle.length;
    }
    return true;
  };
}
