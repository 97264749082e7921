import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import type { BalancesReply } from '../api/types';
import { formatBalance } from '../format';

/** The dashboard's balances: what the endpoints with a connector have left, per currency (docs/BEHAVIOUR.md#balance). */
export function BalanceTile({ refreshAt }: { refreshAt: number }) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [reply, setReply] = useState<BalancesReply | null>(null);

  useEffect(() => {
    let live = true;
    api.balances().then((r) => live && setReply(r), () => {});
    return () => {
      live = false;
    };
  }, [api, refreshAt]);

  if (!reply || reply.balances.length === 0) return null;
  const low = reply.balances.filter((b) => b.low).length;
  return (
    <div className="tile" data-testid="tile-balance">
      <div className="tile-label">{t('dashboard.balances')}</div>
      <div className="tile-value">
        {reply.totals.length === 0
          ? t('balance.unknown')
          : reply.totals.map((tot, i) => (
              <span key={tot.unit} data-testid={`dash-balance-${tot.unit}`}>
                {i > 0 && ' · '}
                {formatBalance(tot.remaining, tot.unit, i18n.language)}
              </span>
            ))}
      </div>
      <div className="tile-sub muted">
        {t('dashboard.balanceEndpoints', { count: reply.balances.length })}
        {low > 0 && ` · ${t('dashboard.balanceLow', { count: low })}`}
      </div>
    </div>
  );
}
