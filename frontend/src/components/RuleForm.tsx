import { useId, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { X } from 'lucide-react';
import type { Protocol, Strategy } from '../api/types';
import { PROTOCOLS } from '../routing';
import type { RuleDraft, RuleErrors } from '../rules';
import { clientLabel } from '../words';

export const STRATEGIES: Strategy[] = ['sticky', 'priority', 'round-robin', 'session', 'fastest', 'weighted'];

/** The paths of a rule the form has a control for; an error on any other shows at the top of the form. */
export const FORM_FIELDS = [
  'name', 'when.protocol', 'when.models', 'when.agent', 'when.thinking', 'when.input_tokens_over', 'when.tools',
  'when.images', 'when.header', 'when.header.name', 'when.header.pattern', 'then.endpoints', 'then.model_map',
  'then.strategy', 'then.fallback',
] as const;

interface Props {
  draft: RuleDraft;
  index: number;
  errors: RuleErrors;
  /** Endpoint names and `tag:x` values the picker offers. */
  choices: string[];
  onChange: (patch: Partial<RuleDraft>) => void;
}

/** One rule's `when` and `then`, every field of docs/BEHAVIOUR.md's routing rules; errors at the field they name. */
export function RuleForm({ draft: d, index, errors, choices, onChange }: Props) {
  const { t } = useTranslation();
  const uid = useId();
  const at = `rules[${index}]`;
  const known = new Set<string>(FORM_FIELDS.map((f) => `${at}.${f}`));
  const stray = Object.entries(errors).filter(([k]) => (k === at || k.startsWith(`${at}.`) || k.startsWith(`${at}[`)) && !known.has(k));

  const id = (f: string) => `${uid}-${f.replace(/\W/g, '-')}`;
  const err = (f: string) => errors[`${at}.${f}`];
  const aria = (f: string, hint?: boolean) => ({
    id: id(f),
    'aria-invalid': err(f) ? true : undefined,
    'aria-describedby': err(f) ? `${id(f)}-err` : hint ? `${id(f)}-hint` : undefined,
  });
  const errorOf = (f: string) =>
    err(f) ? <span className="error" id={`${id(f)}-err`} role="alert" data-testid={`rule-error-${f}`}>{err(f)}</span> : null;
  const field = (f: string, label: string, control: ReactNode, hint?: string) => (
    <div className={`field${err(f) ? ' field-error' : ''}`}>
      <label htmlFor={id(f)}>{label}</label>
      {control}
      {hint && <small id={`${id(f)}-hint`}>{hint}</small>}
      {errorOf(f)}
    </div>
  );

  const left = choices.filter((c) => !d.endpoints.includes(c));
  const move = (i: number) => {
    const next = [...d.endpoints];
    [next[i - 1], next[i]] = [next[i], next[i - 1]];
    onChange({ endpoints: next });
  };

  return (
    <div className="rule-form" data-testid="rule-form">
      {stray.map(([k, v]) => <p key={k} className="error" role="alert">{v}</p>)}
      {field('name', t('rules.name'), <input {...aria('name', true)} value={d.name} autoComplete="off" onChange={(e) => onChange({ name: e.target.value })} />, t('rules.nameHint'))}
      <fieldset>
        <legend>{t('rules.when')}</legend>
        <p className="muted small">{t('rules.whenHint')}</p>
        <div className="grid3">
          {field('when.protocol', t('rules.protocol'), (
            <select {...aria('when.protocol')} value={d.protocol} onChange={(e) => onChange({ protocol: e.target.value as '' | Protocol })}>
              <option value="">{t('rules.anyClient')}</option>
              {PROTOCOLS.map((p) => <option key={p} value={p}>{clientLabel(t, p)}</option>)}
            </select>
          ))}
          {field('when.models', t('rules.models'), (
            <input {...aria('when.models', true)} value={d.models} placeholder="claude-*" onChange={(e) => onChange({ models: e.target.value })} />
          ), t('rules.modelsHint'))}
          {field('when.agent', t('rules.agent'), (
            <select {...aria('when.agent')} value={d.agent} onChange={(e) => onChange({ agent: e.target.value as RuleDraft['agent'] })}>
              <option value="">{t('rules.agents.any')}</option>
              <option value="main">{t('rules.agents.main')}</option>
              <option value="subagent">{t('rules.agents.subagent')}</option>
            </select>
          ))}
          {field('when.thinking', t('rules.thinking'), (
            <select {...aria('when.thinking')} value={d.thinking} onChange={(e) => onChange({ thinking: e.target.value as RuleDraft['thinking'] })}>
              <option value="">{t('rules.thinkingEither')}</option>
              <option value="on">{t('rules.thinkingOn')}</option>
              <option value="off">{t('rules.thinkingOff')}</option>
            </select>
          ))}
          {field('when.images', t('rules.imagesLabel'), (
            <select {...aria('when.images')} value={d.images} onChange={(e) => onChange({ images: e.target.value as RuleDraft['images'] })}>
              <option value="">{t('rules.imagesEither')}</option>
              <option value="on">{t('rules.imagesOn')}</option>
              <option value="off">{t('rules.imagesOff')}</option>
            </select>
          ))}
          {field('when.input_tokens_over', t('rules.tokens'), (
            <input {...aria('when.input_tokens_over', true)} inputMode="numeric" value={d.input_tokens_over} placeholder="60000"
              onChange={(e) => onChange({ input_tokens_over: e.target.value })} />
          ), t('rules.tokensHint'))}
        </div>
        <div className="switches">
          <label className="check">
            <input type="checkbox" {...aria('when.tools')} checked={d.web_search} onChange={(e) => onChange({ web_search: e.target.checked })} /> {t('rules.webSearchLabel')}
          </label>
          {errorOf('when.tools')}
        </div>
        <div className="grid2">
          {field('when.header.name', t('rules.headerName'), (
            <input {...aria('when.header.name')} value={d.header_name} placeholder="x-team" autoComplete="off" onChange={(e) => onChange({ header_name: e.target.value })} />
          ))}
          {field('when.header.pattern', t('rules.headerPattern'), (
            <input {...aria('when.header.pattern', true)} value={d.header_pattern} placeholder="infra*" autoComplete="off" onChange={(e) => onChange({ header_pattern: e.target.value })} />
          ), t('rules.headerHint'))}
        </div>
        {errorOf('when.header')}
      </fieldset>
      <fieldset>
        <legend>{t('rules.then')}</legend>
        <div className={`field${err('then.endpoints') ? ' field-error' : ''}`}>
          <label htmlFor={id('then.endpoints')}>{t('rules.endpoints')}</label>
          <ol className="chips" aria-label={t('rules.chosen')} data-testid="rule-endpoints">
            {d.endpoints.map((e, i) => (
              <li key={e} className={`chip${choices.includes(e) ? '' : ' warn'}`}>
                <span className="mono">{e}</span>
                {i > 0 && (
                  <button type="button" className="icon" aria-label={t('rules.targetEarlier', { target: e })} onClick={() => move(i)}>↑</button>
                )}
                <button type="button" className="icon" aria-label={t('rules.removeTarget', { target: e })}
                  onClick={() => onChange({ endpoints: d.endpoints.filter((x) => x !== e) })}><X /></button>
              </li>
            ))}
          </ol>
          <select {...aria('then.endpoints', true)} value="" onChange={(e) => e.target.value && onChange({ endpoints: [...d.endpoints, e.target.value] })}>
            <option value="">{t('rules.addTarget')}</option>
            {left.map((c) => <option key={c} value={c}>{c}</option>)}
          </select>
          <small id={`${id('then.endpoints')}-hint`}>{d.endpoints.length ? t('rules.endpointsHint') : t('rules.pickEndpoint')}</small>
          {errorOf('then.endpoints')}
        </div>
        <div className="grid2">
          {field('then.model_map', t('rules.modelMap'), (
            <textarea {...aria('then.model_map', true)} rows={2} value={d.model_map} placeholder="claude-* = glm-4.6" onChange={(e) => onChange({ model_map: e.target.value })} />
          ), t('rules.modelMapHint'))}
          {field('then.strategy', t('rules.strategy'), (
            <select {...aria('then.strategy')} value={d.strategy} onChange={(e) => onChange({ strategy: e.target.value as RuleDraft['strategy'] })}>
              <option value="">{t('rules.strategyDefault')}</option>
              {STRATEGIES.map((s) => <option key={s} value={s}>{t(`settings.strategies.${s}`)}</option>)}
            </select>
          ))}
        </div>
        <label className="check">
          <input type="checkbox" {...aria('then.fallback', true)} checked={d.fallback} onChange={(e) => onChange({ fallback: e.target.checked })} /> {t('rules.fallback')}
        </label>
        <small className="muted" id={`${id('then.fallback')}-hint`}>{t('rules.fallbackHint')}</small>
        {errorOf('then.fallback')}
      </fieldset>
    </div>
  );
}
