import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { RefreshCw } from 'lucide-react';
import { useApi } from '../api/context';
import type { BalanceReply, Endpoint } from '../api/types';
import { formatBalance, minutesAgo } from '../format';

interface Props {
  endpoint: Endpoint;
  /** When the health last changed: a balance reading may have changed the breaker with it. */
  healthAt: number;
}

/** Whether the endpoint has a balance connector (docs/BEHAVIOUR.md#balance). */
export function hasConnector(ep: Endpoint): boolean {
  return !!(ep.balance?.template || ep.balance?.url);
}

/**
 * What the endpoint has left (docs/BEHAVIOUR.md#balance): the last reading with its unit and age, a bar
 * when a total is known, "unknown" and why for a failed read (never 0), the low badge, and Refresh.
 */
export function EndpointBalance({ endpoint: ep, healthAt }: Props) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [reply, setReply] = useState<BalanceReply | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  // When the reply came: the reading's age is counted from then, so rendering stays pure.
  const [now, setNow] = useState(0);
  const got = (r: BalanceReply) => {
    setReply(r);
    setNow(Date.now());
  };
  const on = hasConnector(ep);

  useEffect(() => {
    if (!on) return;
    let live = true;
    api.balance(ep.id).then((r) => live && got(r), () => {});
    return () => {
      live = false;
    };
  }, [api, ep.id, on, healthAt]);

  if (!on) return null;
  const refresh = async () => {
    setBusy(true);
    setError('');
    try {
      got(await api.refreshBalance(ep.id));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  const r = reply?.reading;
  const lang = i18n.language;
  const known = r && !r.error && (r.remaining !== null || r.unlimited);
  const share = r && r.remaining !== null && r.total ? Math.min(1, Math.max(0, r.remaining / r.total)) : null;
  return (
    <section className="balance" data-testid="endpoint-balance" aria-label={t('balance.heading')}>
      <h4>
        {t('balance.heading')}
        {reply?.low && <span className="tag warn" data-testid="balance-low">{t('balance.low')}</span>}
      </h4>
      {!r ? (
        <p className="muted">{t('balance.notRead')}</p>
      ) : known ? (
        <p>
          <strong data-testid="balance-remaining">
            {r.unlimited ? t('balance.unlimited') : formatBalance(r.remaining!, r.unit, lang)}
          </strong>
          {r.total !== null && !r.unlimited && <span className="muted"> {t('balance.of', { total: formatBalance(r.total, r.unit, lang) })}</span>}
          <span className="muted"> · {t('balance.updated', { count: minutesAgo(r.at, now) })}</span>
          {r.reset_at && <span className="muted"> · {t('balance.resets', { at: new Date(r.reset_at).toLocaleString(lang) })}</span>}
        </p>
      ) : (
        <p>
          <strong data-testid="balance-remaining">{t('balance.unknown')}</strong>{' '}
          {/* The answer's own words, as it gave them. */}
          <code className="quoted" data-testid="balance-error">{r.error}</code>
          <span className="muted"> · {t('balance.updated', { count: minutesAgo(r.at, now) })}</span>
        </p>
      )}
      {share !== null && (
        <div className="bar" role="meter" aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(share * 100)} aria-label={t('balance.left')}>
          <div className="bar-fill" style={{ width: `${share * 100}%` }} />
        </div>
      )}
      {error && <p className="error" role="status">{error}</p>}
      <button type="button" disabled={busy} onClick={() => void refresh()} data-testid="balance-refresh">
        <RefreshCw />
        {busy ? t('balance.refreshing') : t('balance.refresh')}
      </button>
    </section>
  );
}
