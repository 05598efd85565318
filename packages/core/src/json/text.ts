// Cutting text for previews and messages without splitting a character.

/**
 * `text` cut to at most `maxUnits` UTF-16 code units, never inside a surrogate pair (a cut that
 * would split one drops the whole pair), with `suffix` appended when anything was cut. The result,
 * suffix included, is at most `maxUnits + suffix.length` code units and is well-formed UTF-16
 * wherever `text` was.
 */
export function truncateText(text: string, maxUnits: number, suffix = ''): string {
  if (text.length <= maxUnits) return text;
  let end = Math.max(0, maxUnits);
  const last = text.charCodeAt(end - 1);
  const next = text.charCodeAt(end);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end--;
  return `${text.slice(0, end)}${suffix}`;
}
