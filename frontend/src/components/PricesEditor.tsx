import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { PriceRow, PriceRowReply } from '../api/types';

// Price rows (docs/BEHAVIOUR.md#cost): yours are edited here and saved whole with PUT /api/prices; the shipped
// ones are shown read-only with the page they were read from.

const PRICE_FIELDS = ['input', 'output', 'cache_read', 'cache_write'] as const;
type PriceField = (typeof PRICE_FIELDS)[number];
type Field = 'model' | PriceField | 'source' | 'date';

interface RowDraft extends Record<Field, string> {
  /** A stable React key: rows move up when one above is removed. */
  key: number;
}

type Errors = Record<string, string>;

/** The API's name for a row's field: rows[0].model (the field a 422 names). */
const at = (i: number, f?: string) => `rows[${i}]${f ? `.${f}` : ''}`;

const num = (v: number | undefined) => (v === undefined || v === null ? '' : String(v));

let lastKey = 0;

/** A row as the editor holds it: every cell as typed. */
function draftOf(r: Partial<PriceRow> = {}): RowDraft {
  return {
    key: ++lastKey,
    model: r.model ?? '',
    input: num(r.input),
    output: num(r.output),
    cache_read: num(r.cache_read),
    cache_write: num(r.cache_write),
    source: r.source ?? '',
    date: r.date ?? '',
  };
}

/** Turns the drafts into rows for PUT /api/prices, or says which cells are wrong (keyed like the API's fields). */
export function buildRows(drafts: RowDraft[], t: TFunction): { rows?: PriceRow[]; errors: Errors } {
  const errors: Errors = {};
  const rows = drafts.map((d, i) => {
    const row: PriceRow = { model: d.model.trim(), input: 0, output: 0 };
    if (!row.model) errors[at(i, 'model')] = t('form.required');
    for (const f of PRICE_FIELDS) {
      const v = d[f].trim();
      if (!v) {
        if (f === 'input' || f === 'output') errors[at(i, f)] = t('form.required');
        continue;
      }
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) errors[at(i, f)] = t('prices.badPrice');
      else row[f] = n;
    }
    if (d.source.trim()) row.source = d.source.trim();
    if (d.date.trim()) row.date = d.date.trim();
    return row;
  });
  return Object.keys(errors).length ? { errors } : { rows, errors };
}

/** The columns of both price tables. */
function PriceHead() {
  const { t } = useTranslation();
  return (
    <thead>
      <tr>
        <th>{t('prices.col.model')}</th>
        {PRICE_FIELDS.map((f) => <th key={f} className="num">{t(`prices.col.${f}`)}</th>)}
        <th>{t('prices.col.source')}</th>
        <th>{t('prices.col.date')}</th>
        <th><span className="visually-hidden">{t('prices.actions')}</span></th>
      </tr>
    </thead>
  );
}

export function PricesEditor() {
  const { t } = useTranslation();
  const api = useApi();
  const uid = useId();
  const [drafts, setDrafts] = useState<RowDraft[] | null>(null);
  const [shipped, setShipped] = useState<PriceRowReply[]>([]);
  const [errors, setErrors] = useState<Errors>({});
  const [general, setGeneral] = useState('');
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);

  const show = useCallback((rows: PriceRowReply[]) => {
    setDrafts(rows.filter((r) => !r.shipped).map((r) => draftOf(r)));
    setShipped(rows.filter((r) => r.shipped));
  }, []);

  // State is set in the promise callbacks, never synchronously in the effect.
  useEffect(() => {
    let live = true;
    api
      .prices()
      .then((r) => live && show(r.rows ?? []))
      .catch((err: unknown) => {
        if (!live) return;
        setDrafts([]);
        setGeneral(err instanceof Error ? err.message : String(err));
      });
    return () => {
      live = false;
    };
  }, [api, show]);

  if (!drafts) {
    return (
      <section aria-labelledby="prices-heading" className="prices">
        <h2 id="prices-heading">{t('prices.heading')}</h2>
        <p className="muted">{t('common.loading')}</p>
      </section>
    );
  }

  const change = (i: number, f: Field, v: string) => {
    setDrafts(drafts.map((d, j) => (j === i ? { ...d, [f]: v } : d)));
    setNotice('');
  };
  const add = (from?: PriceRow) => {
    setDrafts([...drafts, draftOf(from)]);
    setNotice('');
  };
  const remove = (i: number) => {
    setDrafts(drafts.filter((_, j) => j !== i));
    setErrors({});
    setNotice('');
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setGeneral('');
    setNotice('');
    const { rows, errors: local } = buildRows(drafts, t);
    setErrors(local);
    if (!rows) return;
    setBusy(true);
    try {
      show((await api.putPrices(rows)).rows ?? []);
      setNotice(t('prices.saved'));
    } catch (err) {
      const m = err instanceof ApiError ? /^rows\[(\d+)\](?:\.(\w+))?$/.exec(err.field) : null;
      if (err instanceof ApiError && m) setErrors({ [at(Number(m[1]), m[2] ?? 'model')]: err.message });
      else setGeneral(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const cell = (i: number, f: Field, props: { inputMode?: 'decimal'; placeholder?: string; type?: string } = {}) => {
    const name = at(i, f);
    const err = errors[name];
    const id = `${uid}-${i}-${f}`;
    return (
      <td key={f} className={err ? 'field-error' : undefined}>
        <input
          id={id}
          aria-label={t('prices.cellLabel', { col: t(`prices.col.${f}`), n: i + 1 })}
          aria-invalid={err ? true : undefined}
          aria-describedby={err ? `${id}-err` : undefined}
          value={drafts[i][f]}
          onChange={(e) => change(i, f, e.target.value)}
          {...props}
        />
        {err && <span className="error" id={`${id}-err`} role="alert">{err}</span>}
      </td>
    );
  };

  return (
    <section aria-labelledby="prices-heading" className="prices">
      <h2 id="prices-heading">{t('prices.heading')}</h2>
      <p className="muted">{t('prices.intro')}</p>
      <form onSubmit={submit} className="settings-form" noValidate aria-labelledby="prices-yours">
        <h3 id="prices-yours">{t('prices.yours')}</h3>
        {general && <p className="error" role="alert">{general}</p>}
        {drafts.length === 0 ? (
          <p className="empty" data-testid="prices-empty">{t('prices.yoursEmpty')}</p>
        ) : (
          <div className="table-wrap">
            <table className="logs prices-table" data-testid="prices-yours">
              <PriceHead />
              <tbody>
                {drafts.map((d, i) => (
                  <tr key={d.key} data-testid="price-row">
                    {cell(i, 'model', { placeholder: 'claude-sonnet-4-5*' })}
                    {PRICE_FIELDS.map((f) => cell(i, f, { inputMode: 'decimal', placeholder: f.startsWith('cache') ? t('prices.asInput') : '' }))}
                    {cell(i, 'source', { type: 'url', placeholder: 'https://…' })}
                    {cell(i, 'date', { placeholder: 'YYYY-MM-DD' })}
                    <td>
                      <button type="button" className="danger" onClick={() => remove(i)} aria-label={t('prices.removeRow', { n: i + 1 })}>
                        {t('prices.remove')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <p className="muted small">{t('prices.unit')}</p>
        <div className="actions">
          <button type="button" onClick={() => add()}>{t('prices.add')}</button>
          <button type="submit" className="primary" disabled={busy}>{busy ? t('form.saving') : t('prices.save')}</button>
          {notice && <span className="notice" role="status">{notice}</span>}
        </div>
      </form>
      <details className="shipped-prices">
        <summary>{t('prices.shipped', { count: shipped.length })}</summary>
        <p className="muted">{t('prices.shippedIntro')}</p>
        {shipped.length === 0 ? (
          <p className="empty">{t('prices.shippedEmpty')}</p>
        ) : (
          <div className="table-wrap">
            <table className="logs totals" data-testid="prices-shipped">
              <PriceHead />
              <tbody>
                {shipped.map((r) => (
                  <tr key={r.model}>
                    <td className="mono">{r.model}</td>
                    {PRICE_FIELDS.map((f) => (
                      <td key={f} className="num" title={r[f] === undefined ? t('prices.asInput') : undefined}>
                        {r[f] === undefined ? <span className="muted">—</span> : r[f]}
                      </td>
                    ))}
                    <td>{r.source ? <a href={r.source} target="_blank" rel="noopener noreferrer">{hostOf(r.source)}</a> : '—'}</td>
                    <td className="mono">{r.date || '—'}</td>
                    <td>
                      <button type="button" onClick={() => add(r)} aria-label={t('prices.copyRow', { model: r.model })}>
                        {t('prices.copy')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </details>
    </section>
  );
}

/** The host of a source address, as its link's text. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
