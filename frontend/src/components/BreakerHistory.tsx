import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import type { BreakerEvent, Id } from '../api/types';
import { formatTime } from '../format';
import { word } from '../words';

/** How many of an endpoint's latest breaker changes the card shows. */
export const HISTORY_SHOWN = 20;

interface Props {
  endpointId: Id;
  /** When the endpoint's health last arrived: a change reloads an open history. */
  healthAt: number;
}

/** An endpoint's breaker audit trail (docs/BEHAVIOUR.md#manual-control), newest first, read when unfolded. */
export function BreakerHistory({ endpointId, healthAt }: Props) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [open, setOpen] = useState(false);
  const [events, setEvents] = useState<BreakerEvent[] | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    if (!open) return;
    let live = true;
    api
      .breakerEvents(endpointId, HISTORY_SHOWN)
      .then((evs) => {
        if (!live) return;
        setEvents(evs ?? []);
        setError('');
      })
      .catch((err: unknown) => {
        if (live) setError(err instanceof Error ? err.message : String(err));
      });
    return () => {
      live = false;
    };
  }, [api, endpointId, open, healthAt]);

  return (
    <details className="breaker-history" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="breaker-history">
      <summary>{t('history.heading')}</summary>
      {error && <p className="error" role="alert">{error}</p>}
      {open && events === null && !error && <p className="muted">{t('common.loading')}</p>}
      {events?.length === 0 && <p className="empty">{t('history.empty')}</p>}
      {events && events.length > 0 && (
        <ul className="plain history-list">
          {events.map((ev) => (
            <li key={ev.id} data-testid="breaker-event">
              <span className="muted">{formatTime(ev.at, i18n.language)}</span>{' '}
              <strong>{t('history.transition', { from: word(t, 'logs.state', ev.from), to: word(t, 'logs.state', ev.to) })}</strong>{' '}
              <span>
                {ev.reason && !(ev.cause === 'force_open' && ev.reason === 'manual') // "forced open" says it already
                  ? t('history.causeWhy', { cause: word(t, 'history.cause', ev.cause), why: word(t, 'reason', ev.reason) })
                  : word(t, 'history.cause', ev.cause)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
