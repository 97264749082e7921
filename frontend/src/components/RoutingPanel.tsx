import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { useAppData } from '../hooks/useAppData';
import { PROTOCOLS, servesMatrix, type MatrixCell } from '../routing';
import { clientLabel, protocolLabel } from '../words';
import { RouteWhy } from './RouteWhy';
import { RulesEditor } from './RulesEditor';

/** Which endpoint serves which clients, the routing rules, and a dry run of routing for a sample request. */
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
      <RulesEditor />
      <RouteWhy />
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
