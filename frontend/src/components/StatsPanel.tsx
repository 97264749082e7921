import { useCallback, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { useApi } from '../api/context';
import type { StatBucket } from '../api/types';
import { useAppData } from '../hooks/useAppData';

const WINDOWS = [15, 60, 360, 1440];
const COLOURS = ['#2563eb', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#be185d', '#4d7c0f', '#a16207'];

type Row = Record<string, number | string>;

/** One chart row per minute with `<endpoint>:req` and `<endpoint>:err` columns. */
export function pivot(points: StatBucket[]): { rows: Row[]; endpoints: string[] } {
  const names = [...new Set(points.map((p) => p.key))].sort();
  const byMinute = new Map<string, Row>();
  for (const p of points) {
    const row = byMinute.get(p.start) ?? { minute: p.start };
    row[`${p.key}:req`] = (Number(row[`${p.key}:req`]) || 0) + p.requests;
    row[`${p.key}:err`] = (Number(row[`${p.key}:err`]) || 0) + p.errors;
    byMinute.set(p.start, row);
  }
  const rows = [...byMinute.values()].sort((a, b) => String(a.minute).localeCompare(String(b.minute)));
  for (const r of rows) for (const n of names) {
    r[`${n}:req`] ??= 0;
    r[`${n}:err`] ??= 0;
  }
  return { rows, endpoints: names };
}

function minuteLabel(v: string, lang: string): string {
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? v : d.toLocaleTimeString(lang, { hour: '2-digit', minute: '2-digit', hour12: false });
}

export function StatsPanel() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const { subscribeLogs } = useAppData();
  const [minutes, setMinutes] = useState(60);
  const [points, setPoints] = useState<StatBucket[]>([]);
  const [error, setError] = useState('');

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      api
        .stats(minutes)
        .then((r) => {
          setPoints(r.buckets ?? []);
          setError('');
        })
        .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err))),
    [api, minutes],
  );

  useEffect(() => {
    void load();
  }, [load]);

  // New traffic refreshes the chart, at most every few seconds.
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = subscribeLogs(() => {
      timer ??= setTimeout(() => {
        timer = undefined;
        void load();
      }, 3000);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [subscribeLogs, load]);

  const { rows, endpoints } = useMemo(() => pivot(points), [points]);

  return (
    <section aria-labelledby="stats-heading">
      <div className="panel-head">
        <h2 id="stats-heading">{t('stats.heading')}</h2>
        <label>
          {t('stats.minutes')}{' '}
          <select value={minutes} onChange={(e) => setMinutes(Number(e.target.value))}>
            {WINDOWS.map((n) => (
              <option key={n} value={n}>{t('stats.lastMinutes', { n })}</option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void load()}>{t('stats.refresh')}</button>
      </div>
      {error && <p className="error" role="alert">{error}</p>}
      {rows.length === 0 ? (
        <p className="empty">{t('stats.empty')}</p>
      ) : (
        <div className="chart" data-testid="stats-chart" role="img" aria-label={t('stats.heading')}>
          <ResponsiveContainer width="100%" height={340}>
            <LineChart data={rows} margin={{ top: 8, right: 16, bottom: 8, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" stroke="var(--border)" />
              <XAxis dataKey="minute" tickFormatter={(v: string) => minuteLabel(v, i18n.language)} stroke="var(--muted)" />
              <YAxis allowDecimals={false} stroke="var(--muted)" />
              <Tooltip labelFormatter={(v) => minuteLabel(String(v), i18n.language)} contentStyle={{ background: 'var(--surface)', border: '1px solid var(--border)' }} />
              <Legend />
              {endpoints.flatMap((n, i) => [
                <Line key={`${n}:req`} type="linear" dataKey={`${n}:req`} name={t('stats.requests', { name: n })} stroke={COLOURS[i % COLOURS.length]} dot={false} isAnimationActive={false} />,
                <Line key={`${n}:err`} type="linear" dataKey={`${n}:err`} name={t('stats.errors', { name: n })} stroke={COLOURS[i % COLOURS.length]} strokeDasharray="5 4" dot={false} isAnimationActive={false} />,
              ])}
            </LineChart>
          </ResponsiveContainer>
        </div>
      )}
    </section>
  );
}
