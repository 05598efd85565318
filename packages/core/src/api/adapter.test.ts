import { describe, expect, it } from 'vitest';
import * as api from './adapter.js';

describe('@callgate/core/adapter public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "GovernedCalls",
        "localGovernor",
        "localReviewer",
        "mintCallId",
        "refusalOf",
        "refusalText",
        "runArguments",
      ]
    `);
  });
});
