import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DownloadCloud, FlaskConical, Lock, LockOpen, Pencil, Power, PowerOff, Trash2 } from 'lucide-react';
import { useApi } from '../api/context';
import type { Endpoint, FetchModelsReply, Health, TestResult } from '../api/types';
import { formatPercent, formatTime } from '../format';
import { BreakerHistory } from './BreakerHistory';
import { ConfirmDialog } from './ConfirmDialog';
import { Countdown } from './Countdown';
import { EndpointBalance } from './EndpointBalance';
import { EndpointDrops } from './EndpointDrops';
import { EndpointKeys } from './EndpointKeys';
import { StatusBadge } from './StatusBadge';
import { protocolLabel } from '../words';

interface Props {
  endpoint: Endpoint;
  health?: Health;
  healthAt: number;
  onEdit: () => void;
  onChanged: (ep?: Endpoint) => void;
  onHealth: (h: Health) => void;
}

type Notice = { kind: 'ok' | 'error'; text: string } | null;

export function EndpointCard({ endpoint: ep, health, healthAt, onEdit, onChanged, onHealth }: Props) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [busy, setBusy] = useState('');
  const [notice, setNotice] = useState<Notice>(null);
  const [confirming, setConfirming] = useState(false);
  // The list Fetch models brought, shown until the user uses it or sets it aside.
  const [fetched, setFetched] = useState<FetchModelsReply | null>(null);

  const status = health?.status ?? (ep.enabled ? 'healthy' : 'disabled');
  const open = health?.state === 'open';

  // Runs one action, shows its failure on the card instead of losing it.
  const run = async (name: string, fn: () => Promise<Notice | void>) => {
    setBusy(name);
    setNotice(null);
    try {
      const n = await fn();
      if (n) setNotice(n);
    } catch (err) {
      setNotice({ kind: 'error', text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy('');
    }
  };

  const testText = (r: TestResult) =>
    r.ok ? t('endpoints.testOk', { status: r.status, latency: r.latency_ms }) : t('endpoints.testFail', { status: r.status, message: r.message });

  const lastTest = health?.last_test;
  return (
    <article className={`card status-${status}`} data-testid={`endpoint-card-${ep.name}`} aria-labelledby={`ep-${ep.id}-name`}>
      <header className="card-head">
        <h3 id={`ep-${ep.id}-name`}>{ep.name}</h3>
        <StatusBadge status={status} />
        {open && health?.reason && <span className="reason" data-testid="open-reason">{t(`reason.${health.reason}`)}</span>}
        {open && (health?.retry_in_ms ?? 0) > 0 ? (
          <Countdown retryInMs={health!.retry_in_ms!} receivedAt={healthAt} />
        ) : (
          open && health?.reason === 'manual' && <span className="countdown muted">{t('countdown.held')}</span>
        )}
        {ep.fast && <span className="tag">{t('endpoints.fast')}</span>}
      </header>
      <p className="muted mono">
        {protocolLabel(t, ep.protocol)} · {ep.base_url}
      </p>
      <dl className="figures">
        <div><dt>{t('endpoints.failures')}</dt><dd>{health?.consecutive_failures ?? 0}</dd></div>
        <div><dt>{t('endpoints.successRate')}</dt><dd>{formatPercent(health?.success_rate) || t('endpoints.none')}</dd></div>
        <div><dt>{t('endpoints.p50')}</dt><dd>{health?.p50_ms != null ? `${health.p50_ms} ms` : t('endpoints.none')}</dd></div>
        <div><dt>{t('endpoints.key')}</dt><dd className="mono">{ep.has_key ? ep.api_key_masked : t('endpoints.noKey')}</dd></div>
        <div><dt>{t('endpoints.models')}</dt><dd className="mono">{ep.models.length ? ep.models.join(', ') : t('endpoints.allModels')}</dd></div>
        {(ep.tags ?? []).length > 0 && (
          <div className="wide">
            <dt>{t('endpoints.tags')}</dt>
            <dd className="tags" data-testid="endpoint-tags">{ep.tags.map((tag) => <span key={tag} className="tag">{tag}</span>)}</dd>
          </div>
        )}
        {ep.price_multiplier !== undefined && ep.price_multiplier !== 1 && (
          <div><dt>{t('endpoints.priceMultiplier')}</dt><dd data-testid="price-multiplier">× {ep.price_multiplier}</dd></div>
        )}
        {(health?.other_model_24h ?? 0) > 0 && (
          <div className="wide">
            <dt>{t('otherModel.heading')}</dt>
            <dd data-testid="other-model" title={t('otherModel.title')}>{t('otherModel.count', { count: health!.other_model_24h })}</dd>
          </div>
        )}
        {health?.last_error && (
          <div className="wide">
            <dt>{t('endpoints.lastError')}</dt>
            <dd>
              {/* The upstream's own words, shown as they came: code, not ours to translate. */}
              <code className="quoted" data-testid="last-error">{health.last_error}</code>
              {health.last_failure_at && <span className="muted"> · {t('endpoints.lastFailure')}: {formatTime(health.last_failure_at, i18n.language)}</span>}
            </dd>
          </div>
        )}
        {lastTest && (
          <div className="wide">
            <dt>{t('endpoints.lastTest')}</dt>
            <dd>{testText(lastTest)} <span className="muted">{formatTime(lastTest.at, i18n.language)}</span></dd>
          </div>
        )}
      </dl>
      <EndpointKeys
        endpoint={ep}
        health={health}
        busy={!!busy}
        onForce={(keyId, open) => void run('key', async () => onHealth(await api.forceKey(ep.id, keyId, open)))}
        onTest={(keyId) => void run('key', async () => {
          const r = await api.testKey(ep.id, keyId);
          return { kind: r.ok ? 'ok' : 'error', text: testText(r) };
        })}
      />
      <EndpointBalance endpoint={ep} healthAt={healthAt} />
      <EndpointDrops endpoint={ep} busy={!!busy} onSave={(drops, done) => void run('drops', async () => {
        onChanged(await api.updateEndpoint(ep.id, { drops }));
        return { kind: 'ok', text: done };
      })} />
      <BreakerHistory endpointId={ep.id} healthAt={healthAt} />
      {notice && (
        <p className={notice.kind === 'ok' ? 'notice' : 'error'} role="status">
          {notice.text}
        </p>
      )}
      {fetched && (
        <div className="fetched" data-testid="fetched-models">
          <p>{t('endpoints.fetchedReview')}</p>
          <pre className="code body-head">{fetched.models.join('\n')}</pre>
          <div className="actions">
            <button type="button" className="primary" disabled={!!busy} onClick={() => run('accept', async () => {
              const saved = await api.updateEndpoint(ep.id, { models: fetched.models });
              setFetched(null);
              onChanged(saved);
              return { kind: 'ok', text: t('endpoints.modelsSaved', { count: saved.models.length }) };
            })}>
              {t('endpoints.useModels')}
            </button>
            <button type="button" disabled={!!busy} onClick={() => setFetched(null)}>{t('endpoints.discardModels')}</button>
          </div>
        </div>
      )}
      <div className="actions" role="group" aria-label={t('endpoints.actions', { name: ep.name })}>
        <button type="button" onClick={onEdit}><Pencil />{t('endpoints.edit')}</button>
        <button type="button" disabled={!!busy} onClick={() => run('toggle', async () => onChanged(await api.updateEndpoint(ep.id, { enabled: !ep.enabled })))}>
          {ep.enabled ? <PowerOff /> : <Power />}
          {ep.enabled ? t('endpoints.disable') : t('endpoints.enable')}
        </button>
        <button type="button" disabled={!!busy} onClick={() => run('test', async () => {
          const r = await api.testEndpoint(ep.id);
          return { kind: r.ok ? 'ok' : 'error', text: testText(r) };
        })}>
          <FlaskConical />
          {busy === 'test' ? t('endpoints.testing') : t('endpoints.test')}
        </button>
        <button type="button" disabled={!!busy} onClick={() => run('models', async () => {
          setFetched(null);
          const r = await api.fetchModels(ep.id);
          setFetched(r);
          const text = t('endpoints.fetchedModels', { count: r.models.length });
          return { kind: 'ok', text: r.truncated ? `${text} ${t('endpoints.fetchedTruncated')}` : text };
        })}>
          <DownloadCloud />
          {t('endpoints.fetchModels')}
        </button>
        <button type="button" disabled={!!busy} onClick={() => run('open', async () => onHealth(await api.forceOpen(ep.id)))}>
          <Lock />
          {t('endpoints.forceOpen')}
        </button>
        <button type="button" disabled={!!busy} onClick={() => run('close', async () => onHealth(await api.forceClose(ep.id)))}>
          <LockOpen />
          {t('endpoints.forceClose')}
        </button>
        <button type="button" className="danger" disabled={!!busy} onClick={() => setConfirming(true)}>
          <Trash2 />
          {t('endpoints.delete')}
        </button>
      </div>
      {confirming && (
        <ConfirmDialog
          message={t('endpoints.confirmDelete', { name: ep.name })}
          confirmLabel={t('endpoints.confirm')}
          cancelLabel={t('endpoints.cancel')}
          onCancel={() => setConfirming(false)}
          onConfirm={() => {
            setConfirming(false);
            void run('delete', async () => {
              await api.deleteEndpoint(ep.id);
              onChanged();
            });
          }}
        />
      )}
    </article>
  );
}
