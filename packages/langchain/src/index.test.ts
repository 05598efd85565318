import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/langchain public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual(['callgateMiddleware', 'refusalText', 'toolSpecOf']);
  });
});
