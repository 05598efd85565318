import { describe, expect, it } from 'vitest';
import * as api from './index.js';

describe('@callgate/openai-agents public API', () => {
  it('exports exactly these names', () => {
    expect(Object.keys(api).sort()).toEqual([
      'AgentsGate',
      'callgateOf',
      'createAgentsGate',
      'isGoverned',
      'refusalText',
      'toolSpecOf',
    ]);
  });
});
