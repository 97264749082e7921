import { useTranslation } from 'react-i18next';
import type { Endpoint, Health, KeyHealth } from '../api/types';
import { StatusBadge } from './StatusBadge';

interface Props {
  endpoint: Endpoint;
  health?: Health;
  busy: boolean;
  onForce: (keyId: number, open: boolean) => void;
  onTest: (keyId: number) => void;
}

/** An endpoint's key pool on its card (docs/BEHAVIOUR.md#key-pools): each key's state, last error, and its own force and Test. */
export function EndpointKeys({ endpoint: ep, health, busy, onForce, onTest }: Props) {
  const { t } = useTranslation();
  const byId = new Map<number, KeyHealth>((health?.keys ?? []).map((k) => [k.id, k]));
  // A lone key is the endpoint's own, shown by the card, unless its breaker holds the endpoint back.
  const held = (health?.keys ?? []).some((k) => k.state !== 'closed');
  if (ep.keys.length === 0 || (ep.keys.length < 2 && !held)) return null;
  return (
    <section className="endpoint-keys" aria-label={t('endpoints.keys')} data-testid="endpoint-keys">
      <h4>{t('endpoints.keys')}</h4>
      <ul>
        {ep.keys.map((k) => {
          const h = byId.get(k.id);
          const name = k.label ? `${k.label} (${k.key_masked})` : k.key_masked;
          return (
            <li key={k.id} data-testid={`key-${k.id}`}>
              <span className="mono">{name}</span> <StatusBadge status={h?.status ?? (k.enabled ? 'healthy' : 'disabled')} />
              {h?.state === 'open' && h.reason && <span className="reason"> {t(`reason.${h.reason}`)}</span>}
              {!k.enabled && <span className="muted"> {t('endpoints.keyDisabled')}</span>}
              {k.weight !== 1 && <span className="muted"> ×{k.weight}</span>}
              {h?.last_error && <code className="quoted">{h.last_error}</code>}
              <span className="actions">
                <button type="button" disabled={busy} onClick={() => onForce(k.id, true)} aria-label={`${t('endpoints.forceOpen')} ${name}`}>
                  {t('endpoints.forceOpen')}
                </button>
                <button type="button" disabled={busy} onClick={() => onForce(k.id, false)} aria-label={`${t('endpoints.forceClose')} ${name}`}>
                  {t('endpoints.forceClose')}
                </button>
                <button type="button" disabled={busy} onClick={() => onTest(k.id)} aria-label={`${t('endpoints.test')} ${name}`}>
                  {t('endpoints.test')}
                </button>
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
