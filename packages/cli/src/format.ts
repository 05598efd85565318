// How the CLI prints for people: aligned tables, plural forms. Durations come from
// `formatDuration` in @callgate/core, shared with the inbox.

/** `1 checkpoint`, `2 checkpoints`, `0 records`; `plural` for irregular forms. */
export function count(amount: number, singular: string, plural = `${singular}s`): string {
  return `${amount} ${amount === 1 ? singular : plural}`;
}

/**
 * Rows as a text table whose columns are as wide as their widest cell (two spaces between
 * columns, the last one not padded). Cells are never cut.
 *
 * @param rows the header row first, then one row per line; rows may be shorter than the header.
 */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, column) => {
      widths[column] = Math.max(widths[column] ?? 0, [...cell].length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, column) =>
          column === row.length - 1 ? cell : cell + ' '.repeat((widths[column] ?? 0) - [...cell].length),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
