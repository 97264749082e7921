import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Search } from 'lucide-react';
import { useApi } from '../api/context';
import type { Explanation, Protocol } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { knownModels, PROTOCOLS, servesMatrix, type MatrixCell } from '../routing';
import { clientLabel, excludedWhy, protocolLabel, translationLabel, word } from '../words';

/** Which endpoint serves which clients, and a dry run of routing for one client and model. */
export function RoutingPanel() {
  const { t } = useTranslation();
  const { endpoints } = useAppData();
  const rows = useMemo(() => servesMatrix(endpoints), [endpoints]);

  return (
    <section aria-labelledby="routing-heading">
      <h2 id="routing-heading">{t('routing.heading')}</h2>
      <p className="muted">{t('routing.intro')}</p>
      {rows.length === 0 ? (
        <p className="empty" data-testid="routing-empty">{t('routing.empty')}</p>
      ) : (
        <div className="table-wrap">
          <table className="logs matrix" data-testid="routing-matrix">
            <thead>
              <tr>
                <th>{t('routing.endpoint')}</th>
                {PROTOCOLS.map((p) => (
                  <th key={p}>{clientLabel(t, p)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map(({ endpoint: ep, cells }) => (
                <tr key={ep.id} data-testid={`matrix-row-${ep.name}`}>
                  <th scope="row">
                    {ep.name} <span className="muted small">{protocolLabel(t, ep.protocol)}</span>
                  </th>
                  {PROTOCOLS.map((p) => (
                    <td key={p} data-testid={`matrix-${ep.name}-${p}`}>
                      <Cell cell={cells[p]} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <WhyBox />
    </section>
  );
}

function Cell({ cell }: { cell: MatrixCell }) {
  const { t } = useTranslation();
  const s = cell.serve;
  if (s.kind === 'none') return <span className="muted" title={t('routing.noneTitle')}>{t('routing.none')}</span>;
  return (
    <>
      {s.kind === 'all' ? <span>{t('routing.all')}</span> : <span className="mono">{s.models.join(', ')}</span>}
      {s.kind === 'translated' && <> <span className="tag">{t('routing.translated')}</span></>}
      {cell.outsideFastQueue && (
        <> <span className="tag warn" title={t('routing.outsideFastTitle')}>{t('routing.outsideFast')}</span></>
      )}
    </>
  );
}

type Asked = { protocol: Protocol; model: string };

/** "Where would a request go?": GET /api/route for a client protocol and a model, in words. */
function WhyBox() {
  const { t } = useTranslation();
  const api = useApi();
  const { endpoints, health } = useAppData();
  const [protocol, setProtocol] = useState<Protocol>('anthropic');
  const [model, setModel] = useState('');
  const [asked, setAsked] = useState<Asked | null>(null);
  const [result, setResult] = useState<Explanation | null>(null);
  const [error, setError] = useState('');
  const suggestions = useMemo(() => knownModels(endpoints), [endpoints]);
  const protocolOf = (id: number) => endpoints.find((e) => e.id === id)?.protocol;

  // The latest answer wins when several are in flight.
  const seq = useRef(0);
  const explain = useCallback(
    (q: Asked) => {
      const n = ++seq.current;
      return api
        .route(q.protocol, q.model)
        .then((r) => {
          if (n !== seq.current) return;
          setResult(r);
          setError('');
        })
        .catch((err: unknown) => {
          if (n !== seq.current) return;
          setResult(null);
          setError(err instanceof Error ? err.message : String(err));
        });
    },
    [api],
  );

  // Asked again when endpoints or their health change, so the answer stays the one routing would give now.
  useEffect(() => {
    if (asked) void explain(asked);
  }, [asked, explain, endpoints, health]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const m = model.trim();
    if (m) setAsked({ protocol, model: m });
  };

  const candidates = result?.candidates ?? [];
  const excluded = result?.excluded ?? [];
  return (
    <section className="why" aria-labelledby="why-heading" data-testid="route-why">
      <h3 id="why-heading">{t('routing.whyHeading')}</h3>
      <p className="muted">{t('routing.whyIntro')}</p>
      <form className="filters" onSubmit={submit}>
        <label>
          {t('routing.client')}
          <select value={protocol} onChange={(e) => setProtocol(e.target.value as Protocol)}>
            {PROTOCOLS.map((p) => (
              <option key={p} value={p}>{clientLabel(t, p)}</option>
            ))}
          </select>
        </label>
        <label>
          {t('routing.model')}
          <input value={model} list="route-models" placeholder={t('routing.modelPlaceholder')} onChange={(e) => setModel(e.target.value)} />
          <datalist id="route-models">
            {suggestions.map((m) => (
              <option key={m} value={m} />
            ))}
          </datalist>
        </label>
        <button type="submit" className="primary" disabled={!model.trim()}><Search />{t('routing.explain')}</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      {!result && !error && <p className="empty">{t('routing.whyEmpty')}</p>}
      {result && (
        <div className="why-result" data-testid="route-result">
          {result.strategy && <p className="muted">{t('routing.strategy', { strategy: word(t, 'settings.strategies', result.strategy) })}</p>}
          {candidates.length === 0 && (
            <p className="error" role="status" data-testid="route-outcome">{t('routing.noCandidates', { outcome: result.outcome })}</p>
          )}
          <div className="grid2">
            <div>
              <h4>{t('routing.candidates')}</h4>
              {candidates.length === 0 ? (
                <p className="muted">—</p>
              ) : (
                <ol data-testid="route-candidates">
                  {candidates.map((c) => (
                    <li key={c.endpoint_id}>
                      <strong>{c.endpoint}</strong> <span className="muted">{word(t, 'logs.state', c.state)}</span>
                      {result.strategy === 'fastest' && (
                        <> <span className="muted" data-testid="route-load">{c.load_ms > 0 ? t('routing.load', { ms: Math.round(c.load_ms) }) : t('routing.noLoad')}</span></>
                      )}
                      {result.translated?.[c.endpoint] && (
                        <> <span className="tag" data-testid="route-translated">{t('routing.translatedTag', { translation: translationLabel(t, result.translated[c.endpoint]) })}</span></>
                      )}
                    </li>
                  ))}
                </ol>
              )}
            </div>
            <div>
              <h4>{t('routing.excluded')}</h4>
              {excluded.length === 0 ? (
                <p className="muted">{t('routing.noneExcluded')}</p>
              ) : (
                <ul className="plain" data-testid="route-excluded">
                  {excluded.map((x) => (
                    <li key={x.endpoint_id}>
                      <strong>{x.endpoint}</strong> <span className="muted">{excludedWhy(t, x, protocolOf(x.endpoint_id))}</span>
                    </li>
                  ))}
                </ul>
              )}
            </div>
          </div>
        </div>
      )}
    </section>
  );
}
