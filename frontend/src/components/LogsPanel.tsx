import { useCallback, useEffect, useRef, useState, type FormEvent, type MouseEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import type { LogDetail, LogQuery, LogRow } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { formatTime } from '../format';
import { LogCapture } from './LogCapture';
import { LogTimeline } from './LogTimeline';

const PAGE = 50;

type Filters = { endpoint: string; status: string; model: string };

/** Whether a live row belongs in the list under the current filters. */
function matches(row: LogRow, f: Filters): boolean {
  if (f.endpoint && row.endpoint !== f.endpoint) return false;
  if (f.status && String(row.status) !== f.status.trim()) return false;
  // The server matches the model by its own rule; a live row is kept only on a plain substring match.
  return !f.model || `${row.model_asked} ${row.model_forwarded}`.includes(f.model);
}

/** `openId` opens that request's timeline (the dashboard links to `#/logs/<id>`). */
export function LogsPanel({ openId }: { openId?: number } = {}) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const { endpoints, subscribeLogs } = useAppData();
  const [draft, setDraft] = useState<Filters>({ endpoint: '', status: '', model: '' });
  const [filters, setFilters] = useState<Filters>(draft);
  // Cursors of the pages above this one; empty = newest page.
  const [cursors, setCursors] = useState<Array<LogQuery['before']>>([]);
  const [page, setPage] = useState<{ items: LogRow[]; next: LogQuery['before'] }>({ items: [], next: null });
  const [error, setError] = useState('');
  const [open, setOpen] = useState<LogDetail | null>(null);
  const drawer = useRef<HTMLDivElement>(null);

  const before = cursors.length ? cursors[cursors.length - 1] : null;
  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      api
        .logs({ limit: PAGE, before, ...filters })
        .then((r) => {
          setPage({ items: r.items ?? [], next: r.next_before });
          setError('');
        })
        .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err))),
    [api, before, filters],
  );

  useEffect(() => {
    void load();
  }, [load]);

  // New rows arrive live on the newest page.
  useEffect(
    () =>
      subscribeLogs((row) => {
        if (cursors.length || !matches(row, filters)) return;
        setPage((p) => (p.items.some((x) => x.id === row.id) ? p : { ...p, items: [row, ...p.items].slice(0, PAGE) }));
      }),
    [subscribeLogs, cursors.length, filters],
  );

  useEffect(() => {
    if (!openId) return;
    let live = true;
    api
      .logDetail(openId)
      .then((d) => {
        if (live) setOpen(d);
      })
      .catch((err: unknown) => {
        if (live) setError(err instanceof Error ? err.message : String(err));
      });
    return () => {
      live = false;
    };
  }, [api, openId]);

  // A timeline opened below a long list is brought into view.
  useEffect(() => {
    if (open) drawer.current?.scrollIntoView?.({ block: 'nearest' });
  }, [open]);

  const openById = async (id: number) => {
    try {
      setOpen(await api.logDetail(id));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    }
  };
  const openRow = (row: LogRow) => openById(row.id);

  // A link in the timeline to another request (resent from, the resent request) opens it here, whatever the
  // address says: the page's hash may already name that request, and then following it would change nothing.
  const followLink = (e: MouseEvent) => {
    const href = e.target instanceof Element ? e.target.closest('a')?.getAttribute('href') : null;
    const m = href ? /^#\/logs\/(\d+)$/.exec(href) : null;
    if (!m || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    window.history.replaceState(null, '', href);
    void openById(Number(m[1]));
  };

  const apply = (e: FormEvent) => {
    e.preventDefault();
    setCursors([]);
    setFilters(draft);
  };

  return (
    <section aria-labelledby="logs-heading">
      <h2 id="logs-heading">{t('logs.heading')}</h2>
      <form className="filters" onSubmit={apply}>
        <label>
          {t('logs.endpoint')}
          <select value={draft.endpoint} onChange={(e) => setDraft({ ...draft, endpoint: e.target.value })}>
            <option value="">{t('logs.anyEndpoint')}</option>
            {endpoints.map((ep) => (
              <option key={ep.id} value={ep.name}>{ep.name}</option>
            ))}
          </select>
        </label>
        <label>
          {t('logs.status')}
          <input value={draft.status} inputMode="numeric" placeholder={t('logs.statusPlaceholder')} onChange={(e) => setDraft({ ...draft, status: e.target.value })} />
        </label>
        <label>
          {t('logs.model')}
          <input value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} />
        </label>
        <button type="submit">{t('logs.apply')}</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      <table className="logs">
        <thead>
          <tr>
            <th>{t('logs.time')}</th>
            <th>{t('logs.path')}</th>
            <th>{t('logs.model')}</th>
            <th>{t('logs.endpoint')}</th>
            <th>{t('logs.status')}</th>
            <th>{t('logs.attempts')}</th>
            <th>{t('logs.duration')}</th>
          </tr>
        </thead>
        <tbody>
          {page.items.map((row) => (
            <tr
              key={row.id}
              data-testid="log-row"
              className={row.status >= 400 || row.error ? 'row-error' : ''}
              tabIndex={0}
              role="button"
              aria-label={t('logs.details', { id: row.id })}
              onClick={() => void openRow(row)}
              onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && (e.preventDefault(), void openRow(row))}
            >
              <td>{formatTime(row.at, i18n.language)}</td>
              <td>
                <span className="mono">{row.path}</span>
                {row.resent_from ? (
                  <span className="tag resent" data-testid="row-resent-from">{t('logs.resentFrom', { id: row.resent_from })}</span>
                ) : null}
              </td>
              <td className="mono">
                {row.model_asked}
                {row.model_answered && (
                  <span className="tag warn" data-testid="row-other-model" title={t('otherModel.title')}>
                    {t('logs.answeredBy', { model: row.model_answered })}
                  </span>
                )}
              </td>
              <td className={row.endpoint ? undefined : 'muted'}>
                {row.endpoint || t('logs.noEndpoint')}
                {row.rule && <span className="tag" data-testid="row-rule" title={t('logs.ruleTitle')}>{t('logs.rule', { name: row.rule })}</span>}
              </td>
              <td className="mono">{row.status || '—'}</td>
              <td>{row.attempts}</td>
              <td>{row.duration_ms} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.items.length === 0 && !error && <p className="empty">{t('logs.empty')}</p>}
      <div className="actions">
        <button type="button" disabled={!cursors.length} onClick={() => setCursors([])}>{t('logs.newest')}</button>
        <button type="button" disabled={!page.next} onClick={() => setCursors([...cursors, page.next])}>
          {t('logs.older')}
        </button>
      </div>
      {open && (
        <div ref={drawer} className="drawer" role="dialog" aria-modal="false" onClick={followLink} aria-label={t('logs.details', { id: open.id })} data-testid="log-detail">
          <div className="panel-head">
            <h3>{t('logs.details', { id: open.id })}</h3>
            <button type="button" onClick={() => setOpen(null)}>{t('logs.close')}</button>
          </div>
          <LogTimeline log={open} endpoints={endpoints} />
          <LogCapture key={open.id} log={open} endpoints={endpoints} />
        </div>
      )}
    </section>
  );
}
