import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import { LANGUAGES, pickLanguage } from '../i18n';
import { useAppData } from '../hooks/useAppData';
import { CopyButton } from './CopyButton';

export function Header() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const { info, health, endpoints, connected } = useAppData();
  const total = endpoints.length;
  const healthy = health.items.filter((h) => h.status === 'healthy').length;
  const lang = pickLanguage(i18n.language);

  const switchLanguage = (code: string) => {
    void i18n.changeLanguage(code);
    // Remember the choice for the desktop window and the next visit.
    void api.updateSettings({ language: code }).catch(() => undefined);
  };

  return (
    <header className="app-header">
      <h1>{t('app.title')}</h1>
      {info && (
        <div className="proxy">
          <span className="muted">{t('header.proxy')}</span>{' '}
          <code data-testid="proxy-url">{info.proxy_url}</code>{' '}
          <CopyButton text={info.proxy_url} label={t('header.copy')} />
          {info.paused && <span className="tag warn">{t('app.paused')}</span>}
        </div>
      )}
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
