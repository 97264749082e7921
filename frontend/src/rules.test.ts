import { describe, expect, it } from 'vitest';
import type { Rule } from './api/types';
import { createI18n } from './i18n';
import { routeQuery } from './routing';
import { buildRules, draftOfRule, draftOfTemplate, editorField, ruleIndexOf, targetChoices } from './rules';

const t = createI18n('en').t;

describe('rules', () => {
  it('turns a rule into the editor’s draft and back unchanged', () => {
    const cases: Rule[] = [
      { name: 'any', when: {}, then: { endpoints: ['a'], fallback: false } },
      {
        name: 'all',
        when: {
          protocol: 'openai-chat', models: ['gpt-*', 'o3'], agent: 'subagent', thinking: false, input_tokens_over: 60000,
          tools: 'web_search', images: false, header: { name: 'x-team', pattern: 'infra*' },
        },
        then: { endpoints: ['tag:cheap', 'b'], model_map: { 'gpt-*': 'glm-4.6' }, strategy: 'weighted', fallback: true },
      },
    ];
    for (const r of cases) {
      const { rules, errors } = buildRules([draftOfRule(r)], t);
      expect(errors, r.name).toEqual({});
      expect(rules, r.name).toEqual([r]);
    }
  });

  it('names the fields that are wrong by their API path', () => {
    const ok = draftOfRule({ name: 'ok', when: {}, then: { endpoints: ['a'], fallback: true } });
    const { rules, errors } = buildRules([
      ok,
      { ...ok, key: -1 },
      { ...ok, key: -2, name: ' ', endpoints: [], input_tokens_over: '12k', model_map: 'nonsense', header_pattern: 'x*' },
    ], t);
    expect(rules).toBeUndefined();
    expect(errors).toEqual({
      'rules[1].name': 'Another rule has this name.',
      'rules[2].name': 'Required',
      'rules[2].then.endpoints': 'Pick at least one endpoint or tag.',
      'rules[2].when.input_tokens_over': 'Must be a number',
      'rules[2].then.model_map': 'Line 1: write “pattern = target”',
      'rules[2].when.header.name': 'Required',
    });
  });

  it('finds the rule and the editor field a server path names', () => {
    const cases: [string, number, string][] = [
      ['rules[1].then.endpoints[0]', 1, 'rules[1].then.endpoints'],
      ['rules[0].when.models[3]', 0, 'rules[0].when.models'],
      ['rules[12].then.model_map.claude-*', 12, 'rules[12].then.model_map'],
      ['rules[2].when.header.pattern', 2, 'rules[2].when.header.pattern'],
      ['rules[2]', 2, 'rules[2]'],
      ['rules', -1, 'rules'],
      ['strategy', -1, 'strategy'],
    ];
    for (const [field, index, editor] of cases) {
      expect(ruleIndexOf(field), field).toBe(index);
      expect(editorField(field), field).toBe(editor);
    }
  });

  it('offers endpoint names, then each tag once, sorted', () => {
    expect(targetChoices([{ name: 'b', tags: ['z', 'cheap'] }, { name: 'a', tags: ['cheap'] }, { name: 'c', tags: [] }])).toEqual(['b', 'a', 'c', 'tag:cheap', 'tag:z']);
  });

  it('fills a template’s conditions under a free name, endpoints left to pick', () => {
    const d = draftOfTemplate('subagents', ['subagents', 'subagents-2']);
    expect(d).toMatchObject({ name: 'subagents-3', agent: 'subagent', endpoints: [], fallback: true });
    expect(draftOfTemplate('web-search', [])).toMatchObject({ name: 'web-search', web_search: true });
    expect(draftOfTemplate('long-context', [])).toMatchObject({ input_tokens_over: '60000' });
    expect(draftOfTemplate('thinking', [])).toMatchObject({ thinking: 'on' });
  });

  it('asks the dry run with only the sample fields set', () => {
    expect(routeQuery('anthropic', 'claude-sonnet-4-5')).toBe('protocol=anthropic&model=claude-sonnet-4-5');
    expect(new URLSearchParams(routeQuery('openai-chat', 'gpt-5', {
      agent: 'subagent', thinking: true, input_tokens: 70000, web_search: true, images: true, headers: [' X-Team : infra-1 ', 'nocolon'],
    })).toString()).toBe('protocol=openai-chat&model=gpt-5&agent=subagent&thinking=1&input_tokens=70000&tools=web_search&images=1&header=X-Team%3Ainfra-1');
  });
});
