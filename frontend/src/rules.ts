// Routing rules as the editor holds them (text fields as typed) and as the API takes them (docs/BEHAVIOUR.md:
// routing rules). Pure: the editor draws it, tests check it.
import type { TFunction } from 'i18next';
import type { Endpoint, Protocol, Rule, RuleWhen, Strategy } from './api/types';
import { parseModelMap, splitModels } from './components/EndpointForm';

export const RULE_NAME_MAX = 64;

/** A rule being edited; `key` keeps a row's identity while rules move. */
export interface RuleDraft {
  key: number;
  name: string;
  protocol: '' | Protocol;
  models: string;
  agent: '' | 'main' | 'subagent';
  /** '' either, 'on' thinking on, 'off' thinking off. */
  thinking: '' | 'on' | 'off';
  input_tokens_over: string;
  web_search: boolean;
  /** '' either, 'on' an image is present, 'off' none is. */
  images: '' | 'on' | 'off';
  header_name: string;
  header_pattern: string;
  endpoints: string[];
  model_map: string;
  strategy: '' | Strategy;
  fallback: boolean;
}

let nextKey = 1;

export function emptyDraft(): RuleDraft {
  return {
    key: nextKey++, name: '', protocol: '', models: '', agent: '', thinking: '', input_tokens_over: '', web_search: false,
    images: '', header_name: '', header_pattern: '', endpoints: [], model_map: '', strategy: '', fallback: true,
  };
}

export function draftOfRule(r: Rule): RuleDraft {
  const w = r.when ?? {};
  return {
    ...emptyDraft(),
    name: r.name,
    protocol: w.protocol ?? '',
    models: (w.models ?? []).join(', '),
    agent: w.agent ?? '',
    thinking: w.thinking === undefined || w.thinking === null ? '' : w.thinking ? 'on' : 'off',
    input_tokens_over: w.input_tokens_over ? String(w.input_tokens_over) : '',
    web_search: w.tools === 'web_search',
    images: w.images === undefined || w.images === null ? '' : w.images ? 'on' : 'off',
    header_name: w.header?.name ?? '',
    header_pattern: w.header?.pattern ?? '',
    endpoints: [...(r.then?.endpoints ?? [])],
    model_map: Object.entries(r.then?.model_map ?? {}).map(([k, v]) => `${k} = ${v}`).join('\n'),
    strategy: r.then?.strategy ?? '',
    fallback: r.then?.fallback ?? false,
  };
}

/** Field errors keyed by the API's path (`rules[1].then.endpoints`), so the server's and the editor's land alike. */
export type RuleErrors = Record<string, string>;

function ruleOf(d: RuleDraft, at: string, t: TFunction, errors: RuleErrors): Rule {
  const when: RuleWhen = {};
  if (d.protocol) when.protocol = d.protocol;
  const models = splitModels(d.models);
  if (models.length) when.models = models;
  if (d.agent) when.agent = d.agent;
  if (d.thinking) when.thinking = d.thinking === 'on';
  const tokens = d.input_tokens_over.trim();
  if (tokens) {
    const n = Number(tokens);
    if (!Number.isInteger(n) || n < 0) errors[`${at}.when.input_tokens_over`] = t('form.badNumber');
    else if (n > 0) when.input_tokens_over = n;
  }
  if (d.web_search) when.tools = 'web_search';
  if (d.images) when.images = d.images === 'on';
  const hName = d.header_name.trim();
  const hPattern = d.header_pattern.trim();
  if (hName || hPattern) {
    if (!hName) errors[`${at}.when.header.name`] = t('form.required');
    when.header = { name: hName, pattern: hPattern };
  }
  const { map, badLine } = parseModelMap(d.model_map);
  if (badLine) errors[`${at}.then.model_map`] = t('form.badModelMap', { line: badLine });
  if (!d.endpoints.length) errors[`${at}.then.endpoints`] = t('rules.needEndpoint');
  const rule: Rule = { name: d.name.trim(), when, then: { endpoints: [...d.endpoints], fallback: d.fallback } };
  if (Object.keys(map).length) rule.then.model_map = map;
  if (d.strategy) rule.then.strategy = d.strategy;
  return rule;
}

/** The rules the drafts describe, in order, or the fields that are wrong (the server checks the rest). */
export function buildRules(drafts: readonly RuleDraft[], t: TFunction): { rules?: Rule[]; errors: RuleErrors } {
  const errors: RuleErrors = {};
  const seen = new Set<string>();
  const rules = drafts.map((d, i) => {
    const at = `rules[${i}]`;
    const name = d.name.trim();
    if (!name) errors[`${at}.name`] = t('form.required');
    else if (name.length > RULE_NAME_MAX) errors[`${at}.name`] = t('rules.nameTooLong', { max: RULE_NAME_MAX });
    else if (seen.has(name)) errors[`${at}.name`] = t('rules.nameTaken');
    seen.add(name);
    return ruleOf(d, at, t, errors);
  });
  return Object.keys(errors).length ? { errors } : { rules, errors };
}

/** The rule index a field path names (`rules[2].then.endpoints[0]` → 2), or -1. */
export function ruleIndexOf(field: string): number {
  const m = /^rules\[(\d+)\]/.exec(field);
  return m ? Number(m[1]) : -1;
}

/**
 * The editor's field a server path lands on: `rules[1].then.endpoints[0]` → `rules[1].then.endpoints`, since the
 * editor has one control for the list; `rules[1].when.models[2]` likewise. The rest is the path as it came.
 */
export function editorField(field: string): string {
  return field.replace(/^(rules\[\d+\]\.(?:then\.endpoints|when\.models|then\.model_map))(?:\[.*|\..*)$/, '$1');
}

/** What the endpoint picker offers: every endpoint name, then `tag:x` for each tag any endpoint has (sorted). */
export function targetChoices(endpoints: readonly Pick<Endpoint, 'name' | 'tags'>[]): string[] {
  const tags = new Set<string>();
  for (const e of endpoints) for (const tag of e.tags ?? []) tags.add(tag);
  return [...endpoints.map((e) => e.name), ...[...tags].sort().map((tag) => `tag:${tag}`)];
}

export const TEMPLATES = ['subagents', 'long-context', 'thinking', 'web-search'] as const;
export type TemplateId = (typeof TEMPLATES)[number];

const TEMPLATE_WHEN: Record<TemplateId, Partial<RuleDraft>> = {
  subagents: { agent: 'subagent' },
  'long-context': { input_tokens_over: '60000' },
  thinking: { thinking: 'on' },
  'web-search': { web_search: true },
};

/**
 * A new rule from a template, named after it (`thinking`, else `thinking-2`, …) so it does not clash with the
 * rules there are; the endpoints are left for the user to pick.
 */
export function draftOfTemplate(id: TemplateId, taken: Iterable<string>): RuleDraft {
  const names = new Set(taken);
  let name: string = id;
  for (let n = 2; names.has(name); n++) name = `${id}-${n}`;
  return { ...emptyDraft(), ...TEMPLATE_WHEN[id], name, fallback: true };
}

/** A rule's conditions in words, for its row in the list: "subagent · over 60000 input tokens"; "any request". */
export function whenText(t: TFunction, d: RuleDraft): string {
  const parts: string[] = [];
  if (d.protocol) parts.push(t(`clients.${d.protocol}`));
  const models = splitModels(d.models);
  if (models.length) parts.push(models.join(', '));
  if (d.agent) parts.push(t(`rules.agents.${d.agent}`));
  if (d.thinking) parts.push(t(d.thinking === 'on' ? 'rules.thinkingOn' : 'rules.thinkingOff'));
  if (d.input_tokens_over.trim() && Number(d.input_tokens_over) > 0) parts.push(t('rules.tokensOver', { n: d.input_tokens_over.trim() }));
  if (d.web_search) parts.push(t('rules.webSearch'));
  if (d.images) parts.push(t(d.images === 'on' ? 'rules.imagesOn' : 'rules.imagesOff'));
  if (d.header_name.trim()) parts.push(`${d.header_name.trim()}: ${d.header_pattern.trim() || '*'}`);
  return parts.length ? parts.join(' · ') : t('rules.always');
}
