import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Pause, Play } from 'lucide-react';
import { useApi } from '../api/context';
import { LANGUAGES, pickLanguage } from '../i18n';
import { useAppData } from '../hooks/useAppData';
import { CopyButton } from './CopyButton';

export function Header() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const { info, health, endpoints, connected, update } = useAppData();
  const [pauseError, setPauseError] = useState('');
  const total = endpoints.length;
  const healthy = health.items.filter((h) => h.status === 'healthy').length;
  const lang = pickLanguage(i18n.language);

  const switchLanguage = (code: string) => {
    void i18n.changeLanguage(code);
    // Remember the choice for the desktop window and the next visit.
    void api.updateSettings({ language: code }).catch(() => undefined);
  };

  // The answer and the info event both carry the new state; the event reaches every window, the tray's too.
  const pauseOrResume = (pause: boolean) => {
    setPauseError('');
    (pause ? api.pause(15) : api.resume()).catch((err: unknown) => setPauseError(err instanceof Error ? err.message : String(err)));
  };
  const until = info?.paused_until ? new Date(info.paused_until).toLocaleTimeString(lang, { hour: '2-digit', minute: '2-digit', hour12: false }) : '';

  return (
    <header className="app-header">
      <h1>{t('app.title')}</h1>
      {info && (
        <div className="proxy">
          <span className="muted">{t('header.proxy')}</span>{' '}
          <code data-testid="proxy-url">{info.proxy_url}</code>{' '}
          <CopyButton text={info.proxy_url} label={t('header.copy')} />
          {info.paused && (
            <span className="tag warn" data-testid="paused" role="status">
              <Pause />
              {until ? t('app.pausedUntil', { time: until }) : t('app.paused')}
            </span>
          )}{' '}
          {info.paused ? (
            <button type="button" onClick={() => pauseOrResume(false)}><Play />{t('header.resume')}</button>
          ) : (
            <button type="button" title={t('header.pauseHint')} onClick={() => pauseOrResume(true)}><Pause />{t('header.pause15')}</button>
          )}
          {pauseError && <span className="error" role="alert">{pauseError}</span>}
        </div>
      )}
      {update?.available && <UpdateLine version={update.latest} notes={update.notes} url={update.url} />}
      <div className="health-count" data-testid="health-count" aria-live="polite">
        {t('header.healthyCount', { healthy, total })}
      </div>
      {!connected && <span className="dot-offline" title={t('app.offline')} aria-label={t('app.offline')} />}
      <label className="lang">
        <span className="visually-hidden">{t('header.language')}</span>
        <select aria-label={t('header.language')} value={lang} onChange={(e) => switchLanguage(e.target.value)}>
          {LANGUAGES.map((l) => (
            <option key={l.code} value={l.code}>{l.label}</option>
          ))}
        </select>
      </label>
    </header>
  );
}

/** "Update available: v1.4.0 — notes", a link to the release page (docs/BEHAVIOUR.md#update-check): nothing is downloaded. */
function UpdateLine({ version, notes, url }: { version: string; notes: string; url: string }) {
  const { t } = useTranslation();
  const text = notes ? t('header.updateNotes', { version, notes }) : t('header.update', { version });
  return url ? (
    <a className="tag" data-testid="update" href={url} target="_blank" rel="noopener noreferrer" title={t('header.updateHint')}>{text}</a>
  ) : (
    <span className="tag" data-testid="update">{text}</span>
  );
}
