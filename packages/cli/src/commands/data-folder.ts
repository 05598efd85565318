// The data folder a command reads: one that holds callgate data, or a usage error naming it.
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { CallgateError } from '@callgate/protocol';

/**
 * Checks that `dataDir` holds callgate data (its `callgate.db`) the user may read and write, so
 * that a mistyped `--data` is refused instead of opening (or making) an empty log there.
 * @throws CallgateError `request-invalid` naming the folder, what is wrong (no callgate data, or no
 *   permission) and the option: the binary prints it and exits 2, as for any bad input.
 */
export function requireDataDir(dataDir: string): void {
  const database = join(dataDir, 'callgate.db');
  try {
    accessSync(database, constants.R_OK | constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM')
      throw new CallgateError(
        'request-invalid',
        `no permission to open ${database}; run as the user that owns the data folder (--data DIR)`,
      );
    throw new CallgateError(
      'request-invalid',
      `no callgate data in ${dataDir} (looked for callgate.db); pass --data DIR or set CALLGATE_DATA`,
    );
  }
}
