import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/core public API', () => {
  it('exports exactly the pinned names (a change here is a change of public API)', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "CallbackApprovalPort",
        "CallgateError",
        "Engine",
        "MemoryStore",
        "QueueApprovalPort",
        "ToolRegistry",
        "YamlLocator",
        "compilePolicy",
        "executeStep",
        "firstInexactNumber",
        "formatDuration",
        "isCallgateError",
        "loadPolicy",
        "parseDuration",
        "parseJsonLossless",
        "readArguments",
        "readWholeNumber",
        "replayPolicy",
        "silentLogger",
        "truncateText",
        "uuidv7",
        "wholeNumberProblem",
      ]
    `);
  });
});
