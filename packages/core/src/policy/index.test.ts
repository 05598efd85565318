import { describe, expect, it } from 'vitest';
import * as policyModule from './index.js';

describe('policy module exports', () => {
  it('exports exactly the pinned runtime names', () => {
    expect(Object.keys(policyModule).sort()).toEqual([
      'compilePolicy',
      'loadPolicy',
      'parseDuration',
      'replayPolicy',
    ]);
  });
});
