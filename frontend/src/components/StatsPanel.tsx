import { useCallback, useEffect, useMemo, useState, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { saveBlob } from '../download';
import { RefreshCw } from 'lucide-react';
import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApi } from '../api/context';
import type { StatBucket } from '../api/types';
import { formatCompact, formatNumber, formatPercent, formatSlot, formatUSD, formatUSDShort } from '../format';
import { useLogRefresh } from '../hooks/useLogRefresh';
import {
  bucketOf,
  errorRate,
  keysOf,
  perKeyPerSlot,
  RANGES,
  rangeQuery,
  successRate,
  sumBuckets,
  timeSlots,
  tokensIn,
  totalsByKey,
  totalsPerSlot,
  type KeyRow,
  GROUPS,
  NO_RULE_KEY,
  type StatsGroup,
  type StatsQuery,
  type StatsRange,
} from '../stats';

const COLOURS = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f', '#a16207'];
const KIND_COLOURS = { input: '#2563eb', cache_read: '#0891b2', cache_write: '#9333ea', output: '#ea580c' } as const;
const KINDS = ['input', 'cache_read', 'cache_write', 'output'] as const;

const tooltipStyle = { background: 'var(--surface)', border: '1px solid var(--border)' };

export function StatsPanel() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [range, setRange] = useState<StatsRange>('hour');
  const [group, setGroup] = useState<StatsGroup>('endpoint');
  const [data, setData] = useState<{ buckets: StatBucket[]; query: StatsQuery; at: Date } | null>(null);
  const [error, setError] = useState('');
  const [downloading, setDownloading] = useState(false);

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(() => {
    const at = new Date();
    const query = rangeQuery(range, group, at);
    return api
      .stats(query)
      .then((r) => {
        setData({ buckets: r.buckets ?? [], query, at });
        setError('');
      })
      .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err)));
  }, [api, range, group]);

  useEffect(() => {
    void load();
  }, [load]);
  const reload = useCallback(() => void load(), [load]);
  useLogRefresh(reload, 2000);

  const lang = i18n.language;
  const bucket = bucketOf(range);
  const buckets = useMemo(() => data?.buckets ?? [], [data]);
  const slots = useMemo(() => (data ? timeSlots(range, data.at) : []), [data, range]);
  const keys = useMemo(() => keysOf(buckets), [buckets]);
  // The server names the requests no rule matched `(no rule)`; said in the reader's language like the other blanks.
  const keyName = useCallback((k: string) => (!k || (group === 'rule' && k === NO_RULE_KEY) ? t(`stats.noKey.${group}`) : k), [t, group]);
  const perKey = useMemo(() => totalsByKey(buckets), [buckets]);
  const total = useMemo(() => sumBuckets(buckets), [buckets]);
  const requestRows = useMemo(() => {
    // Columns by position: a key may hold a '.', which the chart would read as a path.
    // Attempts, not requests: a key's errors are of its attempts.
    const req = perKeyPerSlot(buckets, slots, keys, (b) => b.attempts);
    const err = perKeyPerSlot(buckets, slots, keys, (b) => b.errors);
    return req.map((r, i) => {
      const row: Record<string, number> = { t: r.t };
      keys.forEach((k, j) => {
        row[`r${j}`] = r[k];
        row[`e${j}`] = err[i][k];
      });
      return row;
    });
  }, [buckets, slots, keys]);
  const tokenRows = useMemo(() => totalsPerSlot(buckets, slots), [buckets, slots]);
  const costKeys = useMemo(() => perKey.filter((k) => k.cost_usd > 0).map((k) => k.key), [perKey]);
  const costRows = useMemo(() => perKeyPerSlot(buckets, slots, costKeys, (b) => b.cost_usd), [buckets, slots, costKeys]);
  const rateRows = useMemo(
    () => perKey.filter((k) => k.attempts > 0).map((k) => ({ key: keyName(k.key), rate: Math.round((errorRate(k) ?? 0) * 1000) / 10 })),
    [perKey, keyName],
  );

  const csvHref = api.statsCsvPath(data?.query ?? rangeQuery(range, group, new Date()));
  const download = async (e: MouseEvent<HTMLAnchorElement>) => {
    // Fetched by the client (the admin cookie, or the desktop window's own handler) and saved from memory,
    // so the file is the same rows the charts show; the href is there for "copy link" and middle-click.
    e.preventDefault();
    setDownloading(true);
    try {
      saveBlob(await api.statsCsv(data?.query ?? rangeQuery(range, group, new Date())), `ccmesh-stats-${range}-${group}.csv`);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setDownloading(false);
    }
  };

  const slotLabel = (v: unknown) => formatSlot(Number(v), bucket, lang);
  const xAxis = <XAxis dataKey="t" tickFormatter={slotLabel} stroke="var(--muted)" minTickGap={24} />;
  const grid = <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" vertical={false} />;
  const colour = (i: number) => COLOURS[i % COLOURS.length];

  return (
    <section aria-labelledby="stats-heading">
      <div className="panel-head">
        <h2 id="stats-heading">{t('stats.heading')}</h2>
        <div className="filters">
          <label>
            {t('stats.range')}
            <select value={range} onChange={(e) => setRange(e.target.value as StatsRange)}>
              {RANGES.map((r) => (
                <option key={r} value={r}>{t(`stats.ranges.${r}`)}</option>
              ))}
            </select>
          </label>
          <label>
            {t('stats.group')}
            <select value={group} onChange={(e) => setGroup(e.target.value as StatsGroup)}>
              {GROUPS.map((g) => (
                <option key={g} value={g}>{t(`stats.groups.${g}`)}</option>
              ))}
            </select>
          </label>
          <button type="button" onClick={() => void load()}><RefreshCw />{t('stats.refresh')}</button>
          <a className="button-link" href={csvHref} download="ccmesh-stats.csv" data-testid="stats-csv" aria-busy={downloading} onClick={(e) => void download(e)}>
            {downloading ? t('stats.downloading') : t('stats.download')}
          </a>
        </div>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {data && buckets.length === 0 && <p className="empty" data-testid="stats-empty">{t('stats.empty')}</p>}
      {!data && !error && <p className="muted">{t('common.loading')}</p>}
      {buckets.length > 0 && (
        <>
          <div className="chart-grid">
            <figure className="chart" data-testid="stats-chart">
              <figcaption>{t('stats.requestsChart')}</figcaption>
              <ResponsiveContainer width="100%" height={260}>
                <LineChart data={requestRows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
                  {grid}
                  {xAxis}
                  <YAxis allowDecimals={false} stroke="var(--muted)" width={44} />
                  <Tooltip labelFormatter={slotLabel} contentStyle={tooltipStyle} />
                  <Legend />
                  {keys.flatMap((k, i) => [
                    <Line key={`r${i}`} type="linear" dataKey={`r${i}`} name={t('stats.attempts', { name: keyName(k) })} stroke={colour(i)} dot={false} isAnimationActive={false} />,
                    <Line key={`e${i}`} type="linear" dataKey={`e${i}`} name={t('stats.errors', { name: keyName(k) })} stroke={colour(i)} strokeDasharray="5 4" dot={false} isAnimationActive={false} />,
                  ])}
                </LineChart>
              </ResponsiveContainer>
            </figure>
            <figure className="chart" data-testid="stats-tokens">
              <figcaption>{t('stats.tokensChart')}</figcaption>
              <ResponsiveContainer width="100%" height={260}>
                <BarChart data={tokenRows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
                  {grid}
                  {xAxis}
                  <YAxis stroke="var(--muted)" width={52} tickFormatter={(v: number) => formatCompact(v, lang)} />
                  <Tooltip labelFormatter={slotLabel} formatter={(v) => formatNumber(Number(v), lang)} contentStyle={tooltipStyle} />
                  <Legend />
                  {KINDS.map((k) => (
                    <Bar key={k} dataKey={k} stackId="tokens" name={t(`stats.kinds.${k}`)} fill={KIND_COLOURS[k]} isAnimationActive={false} />
                  ))}
                </BarChart>
              </ResponsiveContainer>
            </figure>
            <figure className="chart" data-testid="stats-cost">
              <figcaption>{t(`stats.costChart.${group}`)}</figcaption>
              {costKeys.length === 0 ? (
                <p className="empty">{t('stats.noCost')}</p>
              ) : (
                <ResponsiveContainer width="100%" height={260}>
                  <BarChart data={costRows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
                    {grid}
                    {xAxis}
                    <YAxis stroke="var(--muted)" width={84} tickFormatter={(v: number) => formatUSDShort(v, lang)} />
                    <Tooltip labelFormatter={slotLabel} formatter={(v) => formatUSD(Number(v), lang)} contentStyle={tooltipStyle} />
                    <Legend />
                    {costKeys.map((k) => (
                      <Bar key={k} dataKey={(row: KeyRow) => row[k]} stackId="cost" name={keyName(k)} fill={colour(keys.indexOf(k))} isAnimationActive={false} />
                    ))}
                  </BarChart>
                </ResponsiveContainer>
              )}
              {total.unpriced > 0 && (
                <p className="warn-text" data-testid="stats-unpriced">{t('stats.unpricedNote', { count: total.unpriced })}</p>
              )}
            </figure>
            <figure className="chart" data-testid="stats-error-rate">
              <figcaption>{t(`stats.errorRateChart.${group}`)}</figcaption>
              <ResponsiveContainer width="100%" height={260}>
                <BarChart data={rateRows} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
                  {grid}
                  <XAxis dataKey="key" stroke="var(--muted)" interval={0} />
                  <YAxis stroke="var(--muted)" width={56} domain={[0, 100]} tickFormatter={(v: number) => `${v}%`} />
                  <Tooltip formatter={(v) => `${Number(v)}%`} contentStyle={tooltipStyle} />
                  <Bar dataKey="rate" name={t('stats.errorRate')} fill="var(--bad)" isAnimationActive={false} />
                </BarChart>
              </ResponsiveContainer>
            </figure>
          </div>
          <h3>{t('stats.totals')}</h3>
          <div className="table-wrap">
            <table className="logs totals" data-testid="stats-totals">
              <thead>
                <tr>
                  <th>{t(`stats.groups.${group}`)}</th>
                  <th className="num">{t('stats.col.requests')}</th>
                  <th className="num">{t('stats.col.successRate')}</th>
                  <th className="num">{t('stats.col.attempts')}</th>
                  <th className="num">{t('stats.col.errors')}</th>
                  <th className="num">{t('stats.col.errorRate')}</th>
                  <th className="num">{t('stats.col.tokensIn')}</th>
                  <th className="num">{t('stats.col.cacheRead')}</th>
                  <th className="num">{t('stats.col.cacheWrite')}</th>
                  <th className="num">{t('stats.col.output')}</th>
                  <th className="num">{t('stats.col.cost')}</th>
                  <th className="num">{t('stats.col.unpriced')}</th>
                </tr>
              </thead>
              <tbody>
                {[...perKey.map((k) => ({ ...k, label: keyName(k.key), total: false })), { ...total, key: '\u0000total', label: t('stats.total'), total: true }].map((r) => (
                  <tr key={r.key} className={r.total ? 'total' : ''} data-testid={r.total ? 'stats-total-row' : 'stats-key-row'}>
                    {r.total ? <th scope="row">{r.label}</th> : <td className="mono">{r.label}</td>}
                    <td className="num">{formatNumber(r.requests, lang)}</td>
                    <td className="num">{formatPercent(successRate(r)) || '—'}</td>
                    <td className="num">{formatNumber(r.attempts, lang)}</td>
                    <td className="num">{formatNumber(r.errors, lang)}</td>
                    <td className="num">{formatPercent(errorRate(r)) || '—'}</td>
                    <td className="num">{formatNumber(tokensIn(r), lang)}</td>
                    <td className="num">{formatNumber(r.cache_read, lang)}</td>
                    <td className="num">{formatNumber(r.cache_write, lang)}</td>
                    <td className="num">{formatNumber(r.output, lang)}</td>
                    <td className="num">{r.cost_usd === 0 && r.unpriced > 0 ? '—' : formatUSD(r.cost_usd, lang)}</td>
                    <td className="num">{r.unpriced ? formatNumber(r.unpriced, lang) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
