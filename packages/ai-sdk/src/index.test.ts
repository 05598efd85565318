import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/ai-sdk public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual(['AiSdkGate', 'createAiSdkGate', 'refusalText', 'toolSpecOf']);
  });
});
