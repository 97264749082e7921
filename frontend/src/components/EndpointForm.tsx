import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { AuthMode, BreakerOverrides, Connector, Endpoint, EndpointInput, EndpointKey, KeyReply, OnModelMismatch, Preset, Protocol, Template } from '../api/types';
import { AuthModes, BreakerNumberFields, EndpointPatchRanges, MismatchModes, Protocols } from '../api/types';
import { protocolLabel } from '../words';
import { EndpointServes } from './EndpointServes';

/** breaker.Overrides' number parameters in field order (generated); `disabled` is the switch below them. */
export const BREAKER_FIELDS = BreakerNumberFields;
type BreakerField = (typeof BREAKER_FIELDS)[number];

const PROTOCOLS: readonly Protocol[] = Protocols;
const AUTHS: readonly AuthMode[] = AuthModes;
/** The API's ranges of the numbers this form sends (store/types.go range tags, generated). */
const [HEDGE_MIN, HEDGE_MAX] = EndpointPatchRanges.hedge_after_ms;
const [WEIGHT_MIN, WEIGHT_MAX] = EndpointPatchRanges.weight;
/** A label for every on_model_mismatch the API takes (proxy.MismatchModes, generated). */
const MISMATCH_LABEL: Record<(typeof MismatchModes)[number], string> = { record: 'form.onMismatchRecord', fail: 'form.onMismatchFail' };

interface Draft {
  name: string;
  base_url: string;
  protocol: Protocol;
  auth: AuthMode;
  api_key: string;
  clear_key: boolean;
  /** More keys for the pool, one a line, `label: key` optional (docs/BEHAVIOUR.md#key-pools). */
  extra_keys: string;
  /** The stored pool, masked: kept by id when keys are added. */
  kept: KeyReply[];
  weight: string;
  models: string;
  model_map: string;
  /** Tags as typed, comma or space separated; rules pick endpoints by them (`tag:cheap`). */
  tags: string;
  tags_were: string[];
  enabled: boolean;
  fast: boolean;
  breaker: Record<BreakerField, string>;
  breaker_disabled: boolean;
  price_multiplier: string;
  hedge_after_ms: string;
  /** The endpoint's proxy; its password shows as *** and, sent back so, stays as stored. */
  proxy_url: string;
  on_model_mismatch: OnModelMismatch;
  mismatch_was: OnModelMismatch; // the endpoint's, when editing
  /** '' none, a template's name, or 'custom' (balance_custom, a JSON connector). */
  balance_template: string;
  balance_custom: string;
  balance_low: string;
}

/** A tag, as an endpoint's `tags` take it: 1-32 of A-Z a-z 0-9 . _ - */
const TAG_RE = /^[A-Za-z0-9._-]{1,32}$/;

/** The limits of an endpoint's price_multiplier (docs/BEHAVIOUR.md#endpoints). */
export const [MULTIPLIER_MIN, MULTIPLIER_MAX] = EndpointPatchRanges.price_multiplier;

/** A preset's id as an endpoint name no endpoint has yet: `deepseek`, else `deepseek-2`, `deepseek-3`, … */
export function uniqueName(id: string, taken: Iterable<string>): string {
  const names = new Set(taken);
  if (!names.has(id)) return id;
  for (let n = 2; ; n++) if (!names.has(`${id}-${n}`)) return `${id}-${n}`;
}

/** The form as a preset fills it, named `name`; the key is left to the user. */
export function draftOfPreset(p: Preset, name: string): Draft {
  const d = draftOf();
  return {
    ...d,
    name,
    base_url: p.base_url,
    protocol: (PROTOCOLS as readonly string[]).includes(p.protocol) ? (p.protocol as Protocol) : d.protocol,
    auth: (AUTHS as readonly string[]).includes(p.auth) ? (p.auth as AuthMode) : d.auth,
    models: (p.models ?? []).join('\n'),
    model_map: mapText(p.model_map ?? {}),
    balance_template: p.balance ?? '',
  };
}

function mapText(m: Record<string, string>): string {
  return Object.entries(m)
    .map(([k, v]) => `${k} = ${v}`)
    .join('\n');
}

function draftOf(ep?: Endpoint): Draft {
  const o = ep?.breaker_overrides ?? {};
  const breaker = Object.fromEntries(
    BREAKER_FIELDS.map((f) => [f, o[f] === undefined || o[f] === null ? '' : String(o[f])]),
  ) as Record<BreakerField, string>;
  return {
    name: ep?.name ?? '',
    base_url: ep?.base_url ?? '',
    protocol: ep?.protocol ?? 'anthropic',
    auth: ep?.auth ?? 'auto',
    api_key: '', // a stored key is never sent to the page, so never prefilled
    clear_key: false,
    extra_keys: '',
    kept: ep?.keys ?? [],
    weight: String(ep?.weight ?? 1),
    models: (ep?.models ?? []).join('\n'),
    model_map: mapText(ep?.model_map ?? {}),
    tags: (ep?.tags ?? []).join(', '),
    tags_were: ep?.tags ?? [],
    enabled: ep?.enabled ?? true,
    fast: ep?.fast ?? false,
    breaker,
    breaker_disabled: o.disabled ?? false,
    price_multiplier: String(ep?.price_multiplier ?? 1),
    hedge_after_ms: ep && ep.hedge_after_ms >= 0 ? String(ep.hedge_after_ms) : '',
    proxy_url: ep?.proxy_url ?? '',
    on_model_mismatch: ep?.on_model_mismatch || 'record',
    mismatch_was: ep?.on_model_mismatch || 'record',
    ...balanceDraft(ep?.balance),
  };
}

/** The form's balance fields of a stored connector (docs/BEHAVIOUR.md#balance). */
function balanceDraft(c?: Connector | null): Pick<Draft, 'balance_template' | 'balance_custom' | 'balance_low'> {
  const low = c?.low_threshold === undefined || c?.low_threshold === null ? '' : String(c.low_threshold);
  if (!c || (!c.template && !c.url)) return { balance_template: '', balance_custom: '', balance_low: low };
  if (c.template) return { balance_template: c.template, balance_custom: '', balance_low: low };
  const custom: Connector = { ...c };
  delete custom.low_threshold;
  return { balance_template: 'custom', balance_custom: JSON.stringify(custom, null, 2), balance_low: low };
}

/** The connector the balance fields describe, or the field that is wrong. */
export function buildBalance(d: Draft, t: TFunction): { connector?: Connector; error?: [string, string] } {
  const low = d.balance_low.trim() === '' ? undefined : Number(d.balance_low.trim());
  if (low !== undefined && (!Number.isFinite(low) || low < 0)) return { error: ['balance.low_threshold', t('form.badNumber')] };
  let c: Connector = {};
  if (d.balance_template === 'custom') {
    try {
      const parsed: unknown = JSON.parse(d.balance_custom || '{}');
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      c = parsed as Connector;
    } catch {
      return { error: ['balance', t('form.badBalanceJSON')] };
    }
  } else if (d.balance_template) {
    c = { template: d.balance_template };
  }
  if (low !== undefined) c.low_threshold = low;
  return { connector: c };
}

type Errors = Record<string, string>;

/** The Models field as patterns: one per line or comma, blanks dropped. */
export function splitModels(text: string): string[] {
  return text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
}

/** The Model map field as pattern → target, and the number of its first line that is neither (0 = none). */
export function parseModelMap(text: string): { map: Record<string, string>; badLine: number } {
  const map: Record<string, string> = {};
  let badLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const m = line.match(/^(.+?)\s*(?:=>|→|=)\s*(.+)$/);
    if (!m) {
      badLine ||= i + 1;
      return;
    }
    map[m[1].trim()] = m[2].trim();
  });
  return { map, badLine };
}

/** The Tags field as tags, and the first that is not one (too long, a character outside A-Z a-z 0-9 . _ -) or repeats. */
export function parseTags(text: string): { tags: string[]; bad: string } {
  const tags = text.split(/[\s,]+/).filter(Boolean);
  const bad = tags.find((tag, i) => !TAG_RE.test(tag) || tags.indexOf(tag) !== i) ?? '';
  return { tags, bad };
}

/** The More keys field as keys (a line is a key, or `label: key`), and the number of the first line that repeats one (0 = none). */
export function parseKeys(text: string): { keys: { label: string; key: string }[]; dupLine: number } {
  const keys: { label: string; key: string }[] = [];
  const seen = new Set<string>();
  let dupLine = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const m = line.match(/^([^:]{1,64}):\s+(\S+)$/);
    const k = m ? { label: m[1].trim(), key: m[2] } : { label: '', key: line };
    if (seen.has(k.key)) {
      dupLine ||= i + 1;
      return;
    }
    seen.add(k.key);
    keys.push(k);
  });
  return { keys, dupLine };
}

/** The pool a draft with More keys asks for: the stored keys by id (unless removed), a new API key, then the pasted ones. */
function poolOf(d: Draft, extra: { label: string; key: string }[]): EndpointKey[] {
  const pool: EndpointKey[] = [];
  if (!d.clear_key) {
    const kept = d.api_key ? d.kept.slice(1) : d.kept; // a new API key replaces the first
    for (const k of kept) pool.push({ id: k.id, label: k.label, key: '', weight: k.weight, enabled: k.enabled });
  }
  if (d.api_key) pool.unshift({ id: 0, label: '', key: d.api_key, weight: 1, enabled: true });
  for (const k of extra) pool.push({ id: 0, label: k.label, key: k.key, weight: 1, enabled: true });
  return pool;
}

/** Turns the draft into an API body, or reports which fields are wrong. */
export function buildInput(d: Draft, t: TFunction): { input?: EndpointInput; errors: Errors } {
  const errors: Errors = {};
  if (!d.name.trim()) errors.name = t('form.required');
  if (!d.base_url.trim()) errors.base_url = t('form.required');

  const { map: model_map, badLine } = parseModelMap(d.model_map);
  if (badLine) errors.model_map = t('form.badModelMap', { line: badLine });

  const overrides: BreakerOverrides = {};
  for (const f of BREAKER_FIELDS) {
    const v = d.breaker[f].trim();
    if (!v) continue;
    const n = Number(v);
    if (!Number.isFinite(n)) errors[`breaker_overrides.${f}`] = t('form.badNumber');
    else overrides[f] = n;
  }
  if (d.breaker_disabled) overrides.disabled = true;

  const multiplier = d.price_multiplier.trim() === '' ? 1 : Number(d.price_multiplier.trim());
  if (!Number.isFinite(multiplier) || multiplier < MULTIPLIER_MIN || multiplier > MULTIPLIER_MAX) {
    errors.price_multiplier = t('form.badMultiplier');
  }

  // Empty is the setting's delay (-1); 0 never races this endpoint.
  const hedge = d.hedge_after_ms.trim() === '' ? -1 : Number(d.hedge_after_ms.trim());
  if (!Number.isInteger(hedge) || hedge < HEDGE_MIN || hedge > HEDGE_MAX) errors.hedge_after_ms = t('form.badHedge');
  const proxyUrl = d.proxy_url.trim();
  if (proxyUrl !== '' && !/^(https?|socks5h?):\/\/[^/?#]+\/?$/.test(proxyUrl)) errors.proxy_url = t('form.badProxyUrl');
  const bal = buildBalance(d, t);
  if (bal.error) errors[bal.error[0]] = bal.error[1];
  const { keys: extra, dupLine } = parseKeys(d.extra_keys);
  if (dupLine) errors.keys = t('form.duplicateKey', { line: dupLine });
  const { tags, bad: badTag } = parseTags(d.tags);
  if (badTag) errors.tags = t('form.badTag', { tag: badTag });
  const weight = d.weight.trim() === '' ? 1 : Number(d.weight.trim());
  if (!Number.isInteger(weight) || weight < WEIGHT_MIN || weight > WEIGHT_MAX) errors.weight = t('form.badNumber');

  if (Object.keys(errors).length) return { errors };
  const input: EndpointInput = {
    name: d.name.trim(),
    base_url: d.base_url.trim(),
    protocol: d.protocol,
    auth: d.auth,
    models: splitModels(d.models),
    model_map,
    enabled: d.enabled,
    fast: d.fast,
    breaker_overrides: overrides,
    price_multiplier: multiplier,
    hedge_after_ms: hedge,
    proxy_url: proxyUrl,
    balance: bal.connector,
    weight,
  };
  // Sent only when it is not the default, or to go back to it.
  if (d.on_model_mismatch !== 'record' || d.mismatch_was !== 'record') input.on_model_mismatch = d.on_model_mismatch;
  if (tags.length || d.tags_were.length) input.tags = tags;
  if (extra.length) input.keys = poolOf(d, extra);
  else if (d.api_key) input.api_key = d.api_key;
  else if (d.clear_key) input.api_key = '';
  return { input, errors };
}

interface Props {
  endpoint?: Endpoint;
  /** A new endpoint started from this preset, named `name`. */
  preset?: { preset: Preset; name: string };
  onSaved: (ep: Endpoint) => void;
  onCancel: () => void;
}

export function EndpointForm({ endpoint, preset, onSaved, onCancel }: Props) {
  const { t } = useTranslation();
  const api = useApi();
  const uid = useId();
  const [d, setD] = useState<Draft>(() => (preset && !endpoint ? draftOfPreset(preset.preset, preset.name) : draftOf(endpoint)));
  const [errors, setErrors] = useState<Errors>({});
  const [general, setGeneral] = useState('');
  const [busy, setBusy] = useState(false);

  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((prev) => ({ ...prev, [k]: v }));
  const [templates, setTemplates] = useState<Template[]>([]);
  useEffect(() => {
    let live = true;
    api.balanceTemplates().then((r) => live && setTemplates(r.templates), () => {});
    return () => {
      live = false;
    };
  }, [api]);
  // A connector's error from the server names a field inside it; it is shown under the connector.
  const balanceErr = Object.entries(errors).find(([k]) => (k === 'balance' || k.startsWith('balance.')) && k !== 'balance.low_threshold')?.[1];

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setGeneral('');
    const { input, errors: local } = buildInput(d, t);
    setErrors(local);
    if (!input) return;
    setBusy(true);
    try {
      const saved = endpoint ? await api.updateEndpoint(endpoint.id, input) : await api.createEndpoint(input);
      setD((prev) => ({ ...prev, api_key: '', clear_key: false, extra_keys: '', kept: saved.keys }));
      onSaved(saved);
    } catch (err) {
      // `tags[2]` is shown at the one Tags field.
      const f = err instanceof ApiError ? err.field.replace(/^tags\[\d+\]$/, 'tags') : '';
      if (err instanceof ApiError && f && fieldKnown(f)) setErrors({ [f]: err.message });
      else setGeneral(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const id = (f: string) => `${uid}-${f}`;
  const field = (f: string, label: string, control: ReactNode, hint?: string) => {
    const err = errors[f];
    return (
      <div className={`field${err ? ' field-error' : ''}`}>
        <label htmlFor={id(f)}>{label}</label>
        {control}
        {hint && <small id={`${id(f)}-hint`}>{hint}</small>}
        {err && (
          <span className="error" id={`${id(f)}-err`} role="alert">
            {err}
          </span>
        )}
      </div>
    );
  };
  // The error, when there is one, replaces the hint as the field's description.
  const aria = (f: string, hint?: string) => ({
    id: id(f),
    'aria-invalid': errors[f] ? true : undefined,
    'aria-describedby': errors[f] ? `${id(f)}-err` : hint ? `${id(f)}-hint` : undefined,
  });

  const keyHint = endpoint?.has_key
    ? t('form.apiKeyKeep', { masked: endpoint.api_key_masked })
    : endpoint
      ? t('form.apiKeyNone')
      : preset?.preset.key_hint || undefined;

  return (
    <form className="endpoint-form" onSubmit={submit} aria-label={endpoint ? t('form.editTitle', { name: endpoint.name }) : t('form.addTitle')} noValidate>
      <h3>{endpoint ? t('form.editTitle', { name: endpoint.name }) : t('form.addTitle')}</h3>
      {preset && !endpoint && (
        <p className="muted" data-testid="form-preset">
          {t('form.fromPreset', { name: preset.preset.name })}
        </p>
      )}
      {general && (
        <p className="error" role="alert">
          {general}
        </p>
      )}
      <div className="grid2">
        {field('name', t('form.name'), <input {...aria('name', t('form.nameHint'))} value={d.name} onChange={(e) => set('name', e.target.value)} autoComplete="off" />, t('form.nameHint'))}
        {field('base_url', t('form.baseUrl'), <input {...aria('base_url')} type="url" value={d.base_url} placeholder="https://api.anthropic.com" onChange={(e) => set('base_url', e.target.value)} autoComplete="off" />)}
        {field('protocol', t('form.protocol'), (
          <select {...aria('protocol')} value={d.protocol} onChange={(e) => set('protocol', e.target.value as Protocol)}>
            {PROTOCOLS.map((p) => <option key={p} value={p}>{protocolLabel(t, p)}</option>)}
          </select>
        ))}
        {field('auth', t('form.auth'), (
          <select {...aria('auth')} value={d.auth} onChange={(e) => set('auth', e.target.value as AuthMode)}>
            {AUTHS.map((a) => <option key={a} value={a}>{a === 'auto' ? t('form.authAuto') : a === 'bearer' ? t('form.authBearer') : a}</option>)}
          </select>
        ))}
      </div>
      {field('api_key', t('form.apiKey'), (
        <input {...aria('api_key', keyHint)} type="password" value={d.api_key} onChange={(e) => set('api_key', e.target.value)} autoComplete="new-password" placeholder={endpoint?.has_key ? endpoint.api_key_masked : ''} />
      ), keyHint)}
      {endpoint?.has_key && (
        <label className="check">
          <input type="checkbox" checked={d.clear_key} onChange={(e) => set('clear_key', e.target.checked)} /> {t('form.clearKey')}
        </label>
      )}
      {field('keys', t('form.moreKeys'), (
        <textarea {...aria('keys', t('form.moreKeysHint'))} rows={3} value={d.extra_keys} onChange={(e) => set('extra_keys', e.target.value)} autoComplete="off" spellCheck={false} />
      ), t('form.moreKeysHint'))}
      {field('weight', t('form.weight'), (
        <input {...aria('weight')} type="number" min={WEIGHT_MIN} max={WEIGHT_MAX} step={1} className="narrow" value={d.weight} onChange={(e) => set('weight', e.target.value)} />
      ))}
      <div className="grid2">
        {field('models', t('form.models'), <textarea {...aria('models')} rows={3} value={d.models} onChange={(e) => set('models', e.target.value)} />)}
        {field('model_map', t('form.modelMap'), <textarea {...aria('model_map')} rows={3} value={d.model_map} placeholder="claude-3-5-haiku* = glm-4.5-air" onChange={(e) => set('model_map', e.target.value)} />)}
      </div>
      {field('tags', t('form.tags'), (
        <input {...aria('tags', t('form.tagsHint'))} value={d.tags} placeholder="cheap, long-context" autoComplete="off" spellCheck={false} onChange={(e) => set('tags', e.target.value)} />
      ), t('form.tagsHint'))}
      <EndpointServes protocol={d.protocol} models={splitModels(d.models)} mapKeys={Object.keys(parseModelMap(d.model_map).map)} />
      {field('price_multiplier', t('form.priceMultiplier'), (
        <input
          {...aria('price_multiplier', t('form.priceMultiplierHint'))}
          type="number"
          min={MULTIPLIER_MIN}
          max={MULTIPLIER_MAX}
          step="any"
          inputMode="decimal"
          className="narrow"
          value={d.price_multiplier}
          onChange={(e) => set('price_multiplier', e.target.value)}
        />
      ), t('form.priceMultiplierHint'))}
      {field('hedge_after_ms', t('form.hedgeAfter'), (
        <input
          {...aria('hedge_after_ms', t('form.hedgeAfterHint'))}
          inputMode="numeric"
          className="narrow"
          value={d.hedge_after_ms}
          placeholder={t('form.hedgeAfterDefault')}
          onChange={(e) => set('hedge_after_ms', e.target.value)}
        />
      ), t('form.hedgeAfterHint'))}
      {field('proxy_url', t('form.proxyUrl'), (
        <input
          {...aria('proxy_url', t('form.proxyUrlHint'))}
          value={d.proxy_url}
          placeholder={t('form.proxyUrlPlaceholder')}
          autoComplete="off"
          spellCheck={false}
          onChange={(e) => set('proxy_url', e.target.value)}
        />
      ), t('form.proxyUrlHint'))}
      {field('on_model_mismatch', t('form.onMismatch'), (
        <select {...aria('on_model_mismatch', t('form.onMismatchHint'))} value={d.on_model_mismatch}
          onChange={(e) => set('on_model_mismatch', e.target.value as OnModelMismatch)}>
          {MismatchModes.map((m) => <option key={m} value={m}>{t(MISMATCH_LABEL[m])}</option>)}
        </select>
      ), t('form.onMismatchHint'))}
      <div className={`field${balanceErr ? ' field-error' : ''}`}>
        <label htmlFor={id('balance')}>{t('form.balance')}</label>
        <select id={id('balance')} data-testid="balance-template" value={d.balance_template} aria-invalid={balanceErr ? true : undefined}
          onChange={(e) => set('balance_template', e.target.value)}>
          <option value="">{t('form.balanceNone')}</option>
          {templates.map((tp) => <option key={tp.name} value={tp.name}>{tp.title}</option>)}
          {d.balance_template && d.balance_template !== 'custom' && !templates.some((tp) => tp.name === d.balance_template) && (
            <option value={d.balance_template}>{d.balance_template}</option>
          )}
          <option value="custom">{t('form.balanceCustom')}</option>
        </select>
        <small>{t('form.balanceHint')}</small>
        {d.balance_template === 'custom' && (
          <textarea aria-label={t('form.balanceCustom')} rows={6} className="mono" value={d.balance_custom}
            placeholder={'{"url":"{{origin}}/api/balance","headers":{"Authorization":"Bearer {{key}}"},"paths":{"remaining":"data.left"},"unit":"USD"}'}
            onChange={(e) => set('balance_custom', e.target.value)} />
        )}
        {balanceErr && <span className="error" role="alert">{balanceErr}</span>}
      </div>
      {d.balance_template && field('balance.low_threshold', t('form.balanceLow'), (
        <input {...aria('balance.low_threshold', t('form.balanceLowHint'))} inputMode="decimal" className="narrow" value={d.balance_low}
          onChange={(e) => set('balance_low', e.target.value)} />
      ), t('form.balanceLowHint'))}
      <div className="switches">
        <label className="check">
          <input type="checkbox" role="switch" checked={d.enabled} onChange={(e) => set('enabled', e.target.checked)} /> {t('form.enabled')}
        </label>
        <label className="check">
          <input type="checkbox" role="switch" checked={d.fast} onChange={(e) => set('fast', e.target.checked)} /> {t('form.fast')}
        </label>
      </div>
      <details open={Object.keys(errors).some((k) => k.startsWith('breaker_overrides')) || undefined}>
        <summary>{t('form.breaker')}</summary>
        {errors.breaker_overrides && <span className="error" role="alert">{errors.breaker_overrides}</span>}
        <div className="grid4">
          {BREAKER_FIELDS.map((f) =>
            <div key={f}>
              {field(`breaker_overrides.${f}`, t(`breaker.${f}`), (
                <input {...aria(`breaker_overrides.${f}`)} inputMode="decimal" value={d.breaker[f]} onChange={(e) => set('breaker', { ...d.breaker, [f]: e.target.value })} />
              ))}
            </div>,
          )}
        </div>
        <label className="check">
          <input type="checkbox" checked={d.breaker_disabled} onChange={(e) => set('breaker_disabled', e.target.checked)} /> {t('form.breakerDisabled')}
        </label>
      </details>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>{busy ? t('form.saving') : t('form.save')}</button>
        <button type="button" onClick={onCancel}>{t('form.cancel')}</button>
      </div>
    </form>
  );
}

const KNOWN = new Set(['name', 'base_url', 'protocol', 'auth', 'api_key', 'keys', 'weight', 'models', 'model_map', 'price_multiplier', 'hedge_after_ms', 'proxy_url', 'on_model_mismatch', 'breaker_overrides', ...BREAKER_FIELDS.map((f) => `breaker_overrides.${f}`)]);

function fieldKnown(f: string): boolean {
  return KNOWN.has(f) || f === 'balance' || f.startsWith('balance.') || f === 'tags';
}
