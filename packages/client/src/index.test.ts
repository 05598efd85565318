import { describe, expect, it } from 'vitest';
import * as client from './index.js';

describe('@callgate/client public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(client).sort()).toEqual([
      'CallgateClient',
      'CallgateError',
      'isCallgateError',
      'remoteGovernor',
    ]);
  });
});
