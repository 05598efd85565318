// Which parts of a request body the gate commits rather than records: there a string with a lone
// surrogate is accepted (the gate refuses it in tool arguments, call by call, and commits results
// and message content under callgate-normalize/1); anywhere else it would have to be written into
// a record as it is, which no canonical form allows, so it is refused with the request.
import { CallgateError } from '@callgate/protocol';

/**
 * Paths of body values that are committed (or checked call by call), never written into a record:
 * a message's content, an outcome's result and arguments — alone, or in the `outcomes` list that
 * `/outcomes`, `/decisions` and `/end` carry, each with every check a single outcome gets — and a
 * call's arguments.
 */
const COMMITTED =
  /^body(?:\.message\.content|\.content|\.result|\.arguments|\.calls\[\d+\]\.arguments|\.outcomes\[\d+\]\.(?:result|arguments))$/;

const keyPath = (path: string, key: string) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;

const wellFormed = (text: string) => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * Refuses a lone UTF-16 surrogate in `body` outside the committed values (see `COMMITTED`).
 * @throws CallgateError `request-invalid` naming the path.
 */
export function refuseLoneSurrogates(body: unknown, path = 'body'): void {
  if (typeof body === 'string') {
    if (!wellFormed(body))
      throw new CallgateError('request-invalid', `${path}: the string holds a lone UTF-16 surrogate`, {
        path,
      });
    return;
  }
  if (Array.isArray(body)) {
    body.forEach((item, index) => {
      refuseLoneSurrogates(item, `${path}[${index}]`);
    });
    return;
  }
  if (body === null || typeof body !== 'object') return;
  for (const [key, value] of Object.entries(body)) {
    const at = keyPath(path, key);
    if (!wellFormed(key))
      throw new CallgateError('request-invalid', `${at}: a key holds a lone UTF-16 surrogate`, { path: at });
    if (!COMMITTED.test(at)) refuseLoneSurrogates(value, at);
  }
}
