import { useCallback, useEffect, useMemo, useState } from 'react';
import { BalanceTile } from './BalanceTile';
import { useTranslation } from 'react-i18next';
import { Plus } from 'lucide-react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApi } from '../api/context';
import type { Endpoint, Health, LogRow, StatBucket } from '../api/types';
import { formatCompact, formatNumber, formatPercent, formatSlot, formatTime, formatUSD } from '../format';
import { useAppData } from '../hooks/useAppData';
import { useLogRefresh } from '../hooks/useLogRefresh';
import { failovers, sparkline, successRate, sumBuckets, timeSlots, todayQuery, tokensIn, totalsPerSlot } from '../stats';
import { Countdown } from './Countdown';
import { Sparkline } from './Sparkline';
import { StatusBadge } from './StatusBadge';

/** How many recent log rows the failover list looks through, and how many failovers it shows. */
const RECENT_ROWS = 100;
const FAILOVERS_SHOWN = 5;

interface Props {
  /** Opens the Endpoints tab with the add form. */
  onAddEndpoint: () => void;
}

/** The first screen: traffic of the last hour, today's tokens and cost, every endpoint's state, the last failovers. */
export function Dashboard({ onAddEndpoint }: Props) {
  const { t } = useTranslation();
  const { info, endpoints } = useAppData();
  // The endpoint list arrives with info; until then an empty list means "not loaded", not "none".
  if (info && endpoints.length === 0) return <Welcome onAddEndpoint={onAddEndpoint} />;
  if (!info) return <p className="muted">{t('common.loading')}</p>;
  return <Overview />;
}

function Welcome({ onAddEndpoint }: Props) {
  const { t } = useTranslation();
  return (
    <section className="welcome" aria-labelledby="welcome-heading" data-testid="dashboard-welcome">
      <h2 id="welcome-heading">{t('dashboard.welcomeTitle')}</h2>
      <p>{t('dashboard.welcome')}</p>
      <button type="button" className="primary" onClick={onAddEndpoint}>
        <Plus />
        {t('dashboard.addEndpoint')}
      </button>
    </section>
  );
}

function Overview() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const { endpoints, health, subscribeLogs } = useAppData();
  const [hour, setHour] = useState<StatBucket[] | null>(null);
  const [today, setToday] = useState<StatBucket[] | null>(null);
  // The minute the charts end at: the time of the last load.
  const [at, setAt] = useState(() => new Date());
  const [recent, setRecent] = useState<LogRow[]>([]);
  const [error, setError] = useState('');

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(() => {
    const now = new Date();
    return Promise.all([api.stats({ minutes: 60 }), api.stats(todayQuery(now))])
      .then(([h, d]) => {
        setHour(h.buckets ?? []);
        setToday(d.buckets ?? []);
        setAt(now);
        setError('');
      })
      .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)));
  }, [api]);

  useEffect(() => {
    void load();
  }, [load]);
  const reload = useCallback(() => void load(), [load]);
  useLogRefresh(reload, 1000);

  // The latest log rows, kept current by the stream, for the failover list.
  useEffect(() => {
    let live = true;
    api
      .logs({ limit: RECENT_ROWS })
      .then((p) => {
        if (live) setRecent((prev) => merge(prev, p.items ?? []));
      })
      .catch(() => undefined);
    const off = subscribeLogs((row) => setRecent((prev) => merge(prev, [row])));
    return () => {
      live = false;
      off();
    };
  }, [api, subscribeLogs]);

  const slots = useMemo(() => timeSlots('hour', at), [at]);
  const hourTotals = useMemo(() => sumBuckets(hour ?? []), [hour]);
  const todayTotals = useMemo(() => sumBuckets(today ?? []), [today]);
  const perMinute = useMemo(
    // Client requests, not attempts: one that failed over and was answered is one success.
    () => totalsPerSlot(hour ?? [], slots).map((r) => ({ t: r.t, ok: r.succeeded, failed: r.requests - r.succeeded })),
    [hour, slots],
  );
  const rate = successRate(hourTotals);
  const lang = i18n.language;
  const shownFailovers = failovers(recent, FAILOVERS_SHOWN);
  const healthById = new Map(health.items.map((h) => [h.id, h]));

  return (
    <section aria-labelledby="dashboard-heading">
      <h2 id="dashboard-heading" className="visually-hidden">{t('dashboard.heading')}</h2>
      {error && <p className="error" role="alert">{error}</p>}
      <div className="tiles">
        <div className="tile" data-testid="tile-requests">
          <div className="tile-label">{t('dashboard.requests')}</div>
          <div className="tile-value" data-testid="dash-requests">{hour ? formatNumber(hourTotals.requests, lang) : '…'}</div>
          <div className="tile-sub muted">
            {hourTotals.requests
              ? `${t('dashboard.perMinute', { n: formatNumber(Math.round((hourTotals.requests / 60) * 10) / 10, lang) })} · ${t('dashboard.attemptsN', { count: hourTotals.attempts })}`
              : t('dashboard.noRequests')}
          </div>
        </div>
        <div className="tile" data-testid="tile-success">
          <div className="tile-label">{t('dashboard.successRate')}</div>
          <div className="tile-value" data-testid="dash-success">{rate === null ? '—' : formatPercent(rate)}</div>
          <div className="tile-sub muted">
            {hourTotals.requests
              ? t('dashboard.errorsOf', { failed: formatNumber(hourTotals.requests - hourTotals.succeeded, lang), requests: formatNumber(hourTotals.requests, lang) })
              : t('dashboard.noRequests')}
          </div>
        </div>
        <div className="tile" data-testid="tile-tokens">
          <div className="tile-label">{t('dashboard.tokensToday')}</div>
          <div className="tile-value">
            <span data-testid="dash-tokens-in">{t('dashboard.tokensIn', { n: formatCompact(tokensIn(todayTotals), lang) })}</span>
            {' · '}
            <span data-testid="dash-tokens-out">{t('dashboard.tokensOut', { n: formatCompact(todayTotals.output, lang) })}</span>
          </div>
          {(todayTotals.cache_read > 0 || todayTotals.cache_write > 0) && (
            <div className="tile-sub muted">
              {t('dashboard.cacheDetail', { read: formatCompact(todayTotals.cache_read, lang), write: formatCompact(todayTotals.cache_write, lang) })}
            </div>
          )}
        </div>
        <div className="tile" data-testid="tile-cost">
          <div className="tile-label">{t('dashboard.costToday')}</div>
          <div className="tile-value" data-testid="dash-cost">
            {/* Nothing priced but something unpriced: the cost is unknown, not $0. */}
            {todayTotals.cost_usd === 0 && todayTotals.unpriced > 0 ? t('dashboard.costUnknown') : formatUSD(todayTotals.cost_usd, lang)}
          </div>
          {todayTotals.unpriced > 0 && (
            <div className="tile-sub warn-text" data-testid="dash-unpriced">
              {t('dashboard.unpriced', { count: todayTotals.unpriced })}
            </div>
          )}
        </div>
        <BalanceTile refreshAt={Math.max(0, ...Object.values(health.at))} />
      </div>

      <h3>{t('dashboard.chart')}</h3>
      {hourTotals.requests === 0 ? (
        <p className="empty">{t('dashboard.noTraffic')}</p>
      ) : (
        <div className="chart" data-testid="dash-chart" role="img" aria-label={t('dashboard.chart')}>
          <ResponsiveContainer width="100%" height={180}>
            <BarChart data={perMinute} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />
              <XAxis dataKey="t" tickFormatter={(v: number) => formatSlot(v, 'minute', lang)} stroke="var(--muted)" minTickGap={24} />
              <YAxis allowDecimals={false} stroke="var(--muted)" width={40} />
              <Tooltip labelFormatter={(v) => formatSlot(Number(v), 'minute', lang)} contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)' }} />
              <Legend />
              <Bar dataKey="ok" stackId="r" name={t('dashboard.succeeded')} fill="var(--accent)" isAnimationActive={false} />
              <Bar dataKey="failed" stackId="r" name={t('dashboard.failed')} fill="var(--bad)" isAnimationActive={false} />
            </BarChart>
          </ResponsiveContainer>
        </div>
      )}

      <h3>{t('dashboard.endpoints')}</h3>
      <ul className="dash-endpoints plain" data-testid="dash-endpoints">
        {endpoints.map((ep) => (
          <EndpointLine key={ep.id} ep={ep} health={healthById.get(ep.id)} healthAt={health.at[ep.id] ?? 0} buckets={hour ?? []} slots={slots} />
        ))}
      </ul>

      <h3>{t('dashboard.failovers')}</h3>
      {shownFailovers.length === 0 ? (
        <p className="empty">{t('dashboard.noFailovers')}</p>
      ) : (
        <ul className="plain failovers" data-testid="dash-failovers">
          {shownFailovers.map((row) => (
            <li key={row.id} data-testid="failover">
              <span className="muted">{formatTime(row.at, lang)}</span> <span className="mono">{row.model_asked || '—'}</span>{' '}
              {row.status > 0 && row.status < 400
                ? t('dashboard.failoverAnswered', { attempts: row.attempts, endpoint: row.endpoint || '—', status: row.status })
                : t('dashboard.failoverFailed', { attempts: row.attempts, status: row.status || '—' })}{' '}
              <a href={`#/logs/${row.id}`}>{t('dashboard.showTimeline')}</a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** One endpoint's state, its attempts and errors per minute of the last hour and, when Open, its countdown. */
function EndpointLine({ ep, health, healthAt, buckets, slots }: { ep: Endpoint; health?: Health; healthAt: number; buckets: StatBucket[]; slots: number[] }) {
  const { t } = useTranslation();
  const status = health?.status ?? (ep.enabled ? 'healthy' : 'disabled');
  const open = health?.state === 'open';
  const line = useMemo(() => sparkline(buckets, slots, ep.name), [buckets, slots, ep.name]);
  const attempts = line.attempts.reduce((a, b) => a + b, 0);
  const errors = line.errors.reduce((a, b) => a + b, 0);
  return (
    <li className={`dash-endpoint status-${status}`} data-testid={`dash-endpoint-${ep.name}`}>
      <strong className="name">{ep.name}</strong>
      <StatusBadge status={status} />
      {open && health?.reason && <span className="reason">{t(`reason.${health.reason}`)}</span>}
      {open && (health?.retry_in_ms ?? 0) > 0 ? (
        <Countdown retryInMs={health!.retry_in_ms} receivedAt={healthAt} />
      ) : (
        open && health?.reason === 'manual' && <span className="countdown muted">{t('countdown.held')}</span>
      )}
      <span className="spacer" />
      <Sparkline requests={line.attempts} errors={line.errors} label={t('dashboard.sparkLabel', { name: ep.name })} />
      <span className="muted figures-line">
        {t('dashboard.endpointFigures', { attempts: t('dashboard.attemptsN', { count: attempts }), errors: t('dashboard.errorsN', { count: errors }) })}
      </span>
      {(health?.other_model_24h ?? 0) > 0 && (
        <span className="tag warn" data-testid="other-model" title={t('otherModel.title')}>
          {t('otherModel.count', { count: health!.other_model_24h })}
        </span>
      )}
    </li>
  );
}

/** Rows by id, newest first, without duplicates, at most RECENT_ROWS. */
function merge(prev: LogRow[], rows: LogRow[]): LogRow[] {
  const byId = new Map(prev.map((r) => [r.id, r]));
  for (const r of rows) byId.set(r.id, r);
  return [...byId.values()].sort((a, b) => b.id - a.id).slice(0, RECENT_ROWS);
}
