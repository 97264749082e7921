import { lazy, Suspense, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { EndpointsPanel } from './components/EndpointsPanel';
import { FastQueuePanel } from './components/FastQueuePanel';
import { Header } from './components/Header';
import { LogsPanel } from './components/LogsPanel';
import { SettingsPanel } from './components/SettingsPanel';
import { useAppData } from './hooks/useAppData';
import { pickLanguage } from './i18n';

// The chart library is most of the bundle; load it when Stats is opened.
const StatsPanel = lazy(() => import('./components/StatsPanel').then((m) => ({ default: m.StatsPanel })));

const TABS = ['endpoints', 'queue', 'logs', 'stats', 'settings'] as const;
type Tab = (typeof TABS)[number];

function tabFromHash(): Tab {
  const h = window.location.hash.replace(/^#\/?/, '');
  return (TABS as readonly string[]).includes(h) ? (h as Tab) : 'endpoints';
}

export function App({ unauthorized }: { unauthorized: boolean }) {
  const { t, i18n } = useTranslation();
  const { settings, loadError, connected } = useAppData();
  const [tab, setTab] = useState<Tab>(tabFromHash);

  useEffect(() => {
    const on = () => setTab(tabFromHash());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);

  // The saved language wins over the browser's, once it is known.
  const saved = settings?.language;
  useEffect(() => {
    if (saved) void i18n.changeLanguage(pickLanguage(saved));
  }, [saved, i18n]);

  useEffect(() => {
    document.documentElement.lang = i18n.language;
  }, [i18n.language]);

  const go = (next: Tab) => {
    setTab(next);
    window.history.replaceState(null, '', `#/${next}`);
  };

  return (
    <div className="app">
      <Header />
      {unauthorized && <p className="banner error" role="alert">{t('app.unauthorized')}</p>}
      {!unauthorized && loadError && <p className="banner error" role="alert">{t('app.loadError', { message: loadError })}</p>}
      {!unauthorized && !loadError && !connected && <p className="banner muted" role="status">{t('app.offline')}</p>}
      <nav aria-label={t('app.nav')}>
        <div role="tablist" className="tabs">
          {TABS.map((id) => (
            <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls={`panel-${id}`} onClick={() => go(id)}>
              {t(`app.tabs.${id}`)}
            </button>
          ))}
        </div>
      </nav>
      <main id={`panel-${tab}`} role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'endpoints' && <EndpointsPanel />}
        {tab === 'queue' && <FastQueuePanel />}
        {tab === 'logs' && <LogsPanel />}
        {tab === 'stats' && (
          <Suspense fallback={<p>{t('common.loading')}</p>}>
            <StatsPanel />
          </Suspense>
        )}
        {tab === 'settings' && <SettingsPanel />}
      </main>
    </div>
  );
}
