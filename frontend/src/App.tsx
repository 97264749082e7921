import { lazy, Suspense, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { KeyboardEvent } from 'react';
import { ChartLine, Gauge, ListOrdered, Route as RouteIcon, ScrollText, Server, Settings as SettingsIcon, type LucideIcon } from 'lucide-react';
import { EndpointsPanel } from './components/EndpointsPanel';
import { FastQueuePanel } from './components/FastQueuePanel';
import { Header } from './components/Header';
import { LogsPanel } from './components/LogsPanel';
import { RoutingPanel } from './components/RoutingPanel';
import { SettingsPanel } from './components/SettingsPanel';
import { useAppData } from './hooks/useAppData';
import { pickLanguage } from './i18n';

// The chart library is most of the bundle; it loads with the first screen that draws a chart.
const Dashboard = lazy(() => import('./components/Dashboard').then((m) => ({ default: m.Dashboard })));
const StatsPanel = lazy(() => import('./components/StatsPanel').then((m) => ({ default: m.StatsPanel })));

const TABS = ['dashboard', 'endpoints', 'queue', 'routing', 'logs', 'stats', 'settings'] as const;
type Tab = (typeof TABS)[number];

const TAB_ICONS: Record<Tab, LucideIcon> = {
  dashboard: Gauge,
  endpoints: Server,
  queue: ListOrdered,
  routing: RouteIcon,
  logs: ScrollText,
  stats: ChartLine,
  settings: SettingsIcon,
};

/** Where the page is: a tab and what in it, `#/logs/42` the timeline of request 42. */
interface Route {
  tab: Tab;
  arg: string;
}

function routeFromHash(): Route {
  const [tab = '', arg = ''] = window.location.hash.replace(/^#\/?/, '').split('/');
  return (TABS as readonly string[]).includes(tab) ? { tab: tab as Tab, arg } : { tab: 'dashboard', arg: '' };
}

export function App({ unauthorized }: { unauthorized: boolean }) {
  const { t, i18n } = useTranslation();
  const { settings, loadError, connected } = useAppData();
  const [route, setRoute] = useState<Route>(routeFromHash);
  const tab = route.tab;

  useEffect(() => {
    const on = () => setRoute(routeFromHash());
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

  const go = (next: Tab, arg = '') => {
    setRoute({ tab: next, arg });
    window.history.replaceState(null, '', `#/${next}`);
  };
  // The tab list is one stop for Tab; arrows, Home and End move between tabs (WAI-ARIA tabs pattern).
  const onTabKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const i = TABS.indexOf(tab);
    const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    const id = TABS[(next + TABS.length) % TABS.length];
    go(id);
    document.getElementById(`tab-${id}`)?.focus();
  };
  const openLog = route.tab === 'logs' && /^\d+$/.test(route.arg) ? Number(route.arg) : undefined;

  return (
    <div className="app">
      <Header />
      {unauthorized && <p className="banner error" role="alert">{t('app.unauthorized')}</p>}
      {!unauthorized && loadError && <p className="banner error" role="alert">{t('app.loadError', { message: loadError })}</p>}
      {!unauthorized && !loadError && !connected && <p className="banner muted" role="status">{t('app.offline')}</p>}
      <nav aria-label={t('app.nav')}>
        <div role="tablist" className="tabs" onKeyDown={onTabKey}>
          {TABS.map((id) => {
            const Icon = TAB_ICONS[id];
            return (
              <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={tab === id} aria-controls={`panel-${id}`} tabIndex={tab === id ? 0 : -1} onClick={() => go(id)}>
                <Icon />
                {t(`app.tabs.${id}`)}
              </button>
            );
          })}
        </div>
      </nav>
      <main id={`panel-${tab}`} role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'dashboard' && (
          <Suspense fallback={<p>{t('common.loading')}</p>}>
            <Dashboard onAddEndpoint={() => go('endpoints', 'add')} />
          </Suspense>
        )}
        {tab === 'endpoints' && <EndpointsPanel startAdding={route.arg === 'add'} />}
        {tab === 'queue' && <FastQueuePanel />}
        {tab === 'routing' && <RoutingPanel />}
        {tab === 'logs' && <LogsPanel openId={openLog} />}
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
