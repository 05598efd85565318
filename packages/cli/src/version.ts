// The command's version: the `version` of this package's package.json (next to `dist/` in the
// published package and in the repository alike), so it cannot drift from what was installed.
import { readFileSync } from 'node:fs';

/** `@callgate/cli`'s version, e.g. `0.1.0`. */
export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
