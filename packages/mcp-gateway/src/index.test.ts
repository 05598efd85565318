import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/mcp-gateway public API', () => {
  it('exports exactly the pinned names', () => {
    expect(Object.keys(api).sort()).toMatchInlineSnapshot(`
      [
        "HttpClientTransport",
        "PREFIX_SEPARATOR",
        "RUN_HEADER",
        "createGateway",
        "parseUpstreams",
      ]
    `);
  });
});
