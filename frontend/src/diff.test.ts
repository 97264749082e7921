import { describe, expect, it } from 'vitest';
import { lineDiff } from './diff';

describe('line diff', () => {
  it('keeps the common lines and marks what is removed and added', () => {
    const before = 'model = "o3"\nmodel_provider = "openai"\n\n[tui]\nnotifications = true\n';
    const after = 'model = "o3"\nmodel_provider = "ccmesh"\n\n[tui]\nnotifications = true\n\n[model_providers.ccmesh]\nname = "ccmesh"\n';
    expect(lineDiff(before, after)).toEqual([
      { kind: 'same', text: 'model = "o3"' },
      { kind: 'removed', text: 'model_provider = "openai"' },
      { kind: 'added', text: 'model_provider = "ccmesh"' },
      { kind: 'same', text: '' },
      { kind: 'same', text: '[tui]' },
      { kind: 'same', text: 'notifications = true' },
      { kind: 'added', text: '' },
      { kind: 'added', text: '[model_providers.ccmesh]' },
      { kind: 'added', text: 'name = "ccmesh"' },
    ]);
  });

  it('shows a new file as all added, and no change as all kept', () => {
    expect(lineDiff('', 'a\nb\n')).toEqual([{ kind: 'added', text: 'a' }, { kind: 'added', text: 'b' }]);
    expect(lineDiff('a\r\nb', 'a\nb\n').every((l) => l.kind === 'same')).toBe(true);
  });
});
