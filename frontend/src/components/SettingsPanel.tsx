import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { BreakerParams, CaptureMode, Settings, SettingsPatch, Strategy } from '../api/types';
import { CaptureModes, Strategies, type SettingsRanges } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { BREAKER_FIELDS } from './EndpointForm';
import { BackupPanel } from './BackupPanel';
import { ClaudeCodePanel } from './ClaudeCodePanel';
import { CodexPanel } from './CodexPanel';
import { GeminiCLIPanel } from './GeminiCLIPanel';
import { PricesEditor } from './PricesEditor';
import { SyncPanel } from './SyncPanel';

const STRATEGIES: readonly Strategy[] = Strategies;
const CAPTURE_MODES: readonly CaptureMode[] = CaptureModes;
const NUMBERS = ['first_byte_timeout_ms', 'idle_timeout_ms', 'hedge_after_ms', 'max_body_bytes', 'log_retention_rows', 'log_retention_days', 'balance_refresh_minutes'] as const satisfies readonly NumberField[];
const CAPTURE_CAPS = ['capture_body_bytes', 'capture_total_bytes'] as const satisfies readonly NumberField[];
/** Every number setting has a range (app/settings.go, generated), so a new one needs a label here to compile. */
type NumberField = keyof typeof SettingsRanges;
const NUMBER_LABEL: Record<NumberField, string> = {
  first_byte_timeout_ms: 'settings.firstByte',
  idle_timeout_ms: 'settings.idle',
  hedge_after_ms: 'settings.hedge',
  max_body_bytes: 'settings.maxBody',
  log_retention_rows: 'settings.retentionRows',
  log_retention_days: 'settings.retentionDays',
  balance_refresh_minutes: 'settings.balanceRefresh',
  capture_body_bytes: 'settings.captureBody',
  capture_total_bytes: 'settings.captureTotal',
};

export function SettingsPanel() {
  const { t } = useTranslation();
  const api = useApi();
  const uid = useId();
  const { settings, info, setSettings, update, setUpdate } = useAppData();
  const [checking, setChecking] = useState(false);
  const [draft, setDraft] = useState<Settings | null>(settings);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [notice, setNotice] = useState('');
  const [general, setGeneral] = useState('');

  // New settings from the server (loaded, saved, or pushed live) replace the draft.
  const [draftOf, setDraftOf] = useState(settings);
  if (draftOf !== settings) {
    setDraftOf(settings);
    setDraft(settings);
  }

  if (!draft) return <p>{t('common.loading')}</p>;

  const setBreaker = (profile: 'claude' | 'openai', f: keyof BreakerParams, v: string) =>
    setDraft({
      ...draft,
      breaker: { ...draft.breaker, [profile]: { ...draft.breaker[profile], [f]: v === '' ? undefined : Number(v) } },
    });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setGeneral('');
    setNotice('');
    try {
      // The client leaves `prices` out: the Prices editor below saves them on its own; `rules` too, the Routing
      // tab's editor saves them, and a draft loaded before would put back rules changed since. `start_at_login` goes
      // only when toggled: the server writes or removes the login entry for it (docs/BEHAVIOUR.md#start-at-login).
      const body: SettingsPatch = { ...draft };
      delete body.rules;
      if (body.start_at_login === settings?.start_at_login) delete body.start_at_login;
      const saved: Settings & { warnings?: unknown } = await api.updateSettings(body);
      delete saved.warnings;
      setSettings(saved);
      setNotice(t('settings.saved'));
    } catch (err) {
      if (err instanceof ApiError && err.field) setErrors({ [err.field]: err.message });
      else setGeneral(err instanceof Error ? err.message : String(err));
    }
  };

  // The answer carries what the check found; the update event brings the same to every window.
  const checkNow = () => {
    setChecking(true);
    api.checkUpdate()
      .then(setUpdate)
      .catch((err: unknown) => setGeneral(err instanceof Error ? err.message : String(err)))
      .finally(() => setChecking(false));
  };

  const field = (name: string, label: string, control: (id: string) => ReactNode) => {
    const id = `${uid}-${name}`;
    return (
      <div className={`field${errors[name] ? ' field-error' : ''}`} key={name}>
        <label htmlFor={id}>{label}</label>
        {control(id)}
        {errors[name] && <span className="error" role="alert">{errors[name]}</span>}
      </div>
    );
  };

  const numberField = (n: NumberField) =>
    field(n, t(NUMBER_LABEL[n]), (id) => (
      <input id={id} inputMode="numeric" value={draft[n] ?? ''} onChange={(e) => setDraft({ ...draft, [n]: Number(e.target.value) })} />
    ));

  return (
    <section aria-labelledby="settings-heading">
      <h2 id="settings-heading">{t('settings.heading')}</h2>
      <form onSubmit={submit} className="settings-form" noValidate>
        {general && <p className="error" role="alert">{general}</p>}
        <div className="grid2">
          {field('listen', t('settings.listen'), (id) => (
            <input
              id={id}
              value={draft.listen ?? ''}
              placeholder={info?.listen ?? '127.0.0.1:3457'}
              onChange={(e) => setDraft({ ...draft, listen: e.target.value.trim() })}
            />
          ))}
          {field('data_dir', t('settings.dataDir'), (id) => <input id={id} value={info?.data_dir ?? ''} readOnly />)}
        </div>
        <p className="muted">{t('settings.listenHint', { running: info?.listen ?? '' })}</p>
        {field('strategy', t('settings.strategy'), (id) => (
          <select id={id} value={draft.strategy} onChange={(e) => setDraft({ ...draft, strategy: e.target.value as Strategy })}>
            {STRATEGIES.map((s) => (
              <option key={s} value={s}>{t(`settings.strategies.${s}`)}</option>
            ))}
          </select>
        ))}
        {draft.strategy && <p className="muted" data-testid="strategy-help">{t(`settings.strategyHelp.${draft.strategy}`)}</p>}
        <fieldset>
          <legend>{t('settings.breakerDefaults')}</legend>
          <div className="grid2">
            {(['claude', 'openai'] as const).map((profile) => (
              <fieldset key={profile}>
                <legend>{t(`settings.${profile}`)}</legend>
                <div className="grid2">
                  {BREAKER_FIELDS.map((f) =>
                    field(`breaker.${profile}.${f}`, t(`breaker.${f}`), (id) => (
                      <input id={id} inputMode="decimal" value={draft.breaker?.[profile]?.[f] ?? ''} onChange={(e) => setBreaker(profile, f, e.target.value)} />
                    )),
                  )}
                </div>
              </fieldset>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>{t('settings.timeouts')} · {t('settings.retention')}</legend>
          <div className="grid3">{NUMBERS.map(numberField)}</div>
        </fieldset>
        <p className="muted" data-testid="hedge-help">{t('settings.hedgeHelp')}</p>
        <p className="muted" data-testid="log-rows-lost">
          {t('settings.logRowsDropped', { n: info?.log_rows_dropped ?? 0 })} · {t('settings.logRowsFailed', { n: info?.log_rows_failed ?? 0 })}
        </p>
        {field('capture', t('settings.capture'), (id) => (
          <select id={id} value={draft.capture ?? 'off'} aria-describedby={`${id}-help`} onChange={(e) => setDraft({ ...draft, capture: e.target.value as CaptureMode })}>
            {CAPTURE_MODES.map((m) => (
              <option key={m} value={m}>{t(`settings.captureModes.${m}`)}</option>
            ))}
          </select>
        ))}
        <div className="grid2">{CAPTURE_CAPS.map(numberField)}</div>
        <p className="muted" id={`${uid}-capture-help`} data-testid="capture-help">
          {t(`settings.captureHelp.${draft.capture ?? 'off'}`, { defaultValue: '' })} {t('settings.captureKept')}
        </p>
        {field('client_token', t('settings.clientToken'), (id) => (
          <input id={id} type="password" autoComplete="off" value={draft.client_token ?? ''} onChange={(e) => setDraft({ ...draft, client_token: e.target.value })} />
        ))}
        <label className="check">
          <input type="checkbox" checked={!!draft.notifications} onChange={(e) => setDraft({ ...draft, notifications: e.target.checked })} /> {t('settings.notifications')}
        </label>
        <label className="check">
          <input type="checkbox" checked={!!draft.start_at_login} aria-describedby={`${uid}-login-help`} onChange={(e) => setDraft({ ...draft, start_at_login: e.target.checked })} />{' '}
          {t('settings.startAtLogin')}
        </label>
        <p className="muted" id={`${uid}-login-help`}>{t('settings.startAtLoginHelp')}</p>
        {errors.start_at_login && <p className="error" role="alert">{errors.start_at_login}</p>}
        <label className="check">
          <input type="checkbox" checked={!!draft.update_check} aria-describedby={`${uid}-update-help`} onChange={(e) => setDraft({ ...draft, update_check: e.target.checked })} />{' '}
          {t('settings.updateCheck')}
        </label>
        <p className="muted" id={`${uid}-update-help`}>{t('settings.updateCheckHelp')}</p>
        {field('update_feed_url', t('settings.updateFeed'), (id) => (
          <input id={id} type="url" value={draft.update_feed_url ?? ''} onChange={(e) => setDraft({ ...draft, update_feed_url: e.target.value })} />
        ))}
        {settings?.update_check && (
          <p data-testid="update-status">
            <button type="button" disabled={checking} onClick={checkNow}>{t('settings.updateCheckNow')}</button>{' '}
            {update?.error
              ? <span className="error">{update.error}</span>
              : update?.checked_at && (
                <span className="muted">
                  {update.available ? t('header.update', { version: update.latest }) : t('settings.updateNone', { latest: update.latest || '—', current: update.current })}
                </span>
              )}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary">{t('settings.save')}</button>
          {notice && <span className="notice" role="status">{notice}</span>}
        </div>
      </form>
      <PricesEditor />
      <ClaudeCodePanel />
      <CodexPanel />
      <GeminiCLIPanel />
      <BackupPanel />
      <SyncPanel />
    </section>
  );
}
