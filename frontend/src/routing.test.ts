import { describe, expect, it } from 'vitest';
import { knownModels, serves, servesMatrix } from './routing';
import { endpoint } from './test/utils';

describe('which clients an endpoint serves (docs/BEHAVIOUR.md#candidates)', () => {
  it('serves its own protocol every model, or the models its list matches', () => {
    expect(serves(endpoint({ id: 1, name: 'a' }), 'anthropic')).toEqual({ kind: 'all' });
    expect(serves(endpoint({ id: 1, name: 'a', models: ['claude-*'] }), 'anthropic')).toEqual({ kind: 'own', models: ['claude-*'] });
  });

  it('serves another protocol, translated, only the models its list or model map names', () => {
    const chat = endpoint({ id: 2, name: 'glm', protocol: 'openai-chat', models: ['glm-4.5'], model_map: { 'claude-*': 'glm-4.5', 'glm-4.5': 'glm-4.5' } });
    expect(serves(chat, 'anthropic')).toEqual({ kind: 'translated', models: ['glm-4.5', 'claude-*'] });
    expect(serves(chat, 'openai-responses')).toEqual({ kind: 'translated', models: ['glm-4.5', 'claude-*'] });
    expect(serves(chat, 'openai-chat')).toEqual({ kind: 'own', models: ['glm-4.5'] });
    // Nothing named: only its own protocol's clients, so nobody's Claude Code lands there by accident.
    const bare = endpoint({ id: 3, name: 'gpt', protocol: 'openai-responses' });
    expect(serves(bare, 'anthropic')).toEqual({ kind: 'none' });
    expect(serves(bare, 'openai-chat')).toEqual({ kind: 'none' });
    expect(serves(bare, 'openai-responses')).toEqual({ kind: 'all' });
  });

  it('makes a row per enabled endpoint in list order, marking those the fast queue leaves out', () => {
    const rows = servesMatrix([
      endpoint({ id: 1, name: 'second', sort_order: 2 }),
      endpoint({ id: 2, name: 'first', sort_order: 1, fast: true }),
      endpoint({ id: 3, name: 'off', enabled: false }),
      endpoint({ id: 4, name: 'codex', sort_order: 3, protocol: 'openai-responses', model_map: { 'claude-haiku*': 'gpt-5-mini' } }),
    ]);
    expect(rows.map((r) => r.endpoint.name)).toEqual(['first', 'second', 'codex']);
    const cell = (name: string, p: 'anthropic' | 'openai-chat' | 'openai-responses') => rows.find((r) => r.endpoint.name === name)!.cells[p];
    expect(cell('first', 'anthropic')).toEqual({ serve: { kind: 'all' }, outsideFastQueue: false });
    // A fast endpoint serves Claude clients, so the rest of that list is left out of it…
    expect(cell('second', 'anthropic').outsideFastQueue).toBe(true);
    expect(cell('codex', 'anthropic')).toEqual({ serve: { kind: 'translated', models: ['claude-haiku*'] }, outsideFastQueue: true });
    // …but Codex clients have no fast endpoint, so their full list stays.
    expect(cell('codex', 'openai-responses')).toEqual({ serve: { kind: 'all' }, outsideFastQueue: false });
    expect(cell('first', 'openai-chat')).toEqual({ serve: { kind: 'none' }, outsideFastQueue: false });
  });

  it('suggests the exact model names the endpoints name', () => {
    expect(knownModels([endpoint({ id: 1, name: 'a', models: ['claude-*', 'gpt-5'], model_map: { 'glm-4.5': 'x' } }), endpoint({ id: 2, name: 'b', models: ['gpt-5'] })])).toEqual(['glm-4.5', 'gpt-5']);
  });
});
