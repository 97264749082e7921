import { useTranslation } from 'react-i18next';
import type { Attempt, Endpoint, LogDetail } from '../api/types';
import { formatClock } from '../format';
import { excludedWhy, protocolLabel, translationLabel, word } from '../words';

/** The translation an attempt ran, client protocol → endpoint protocol (docs/BEHAVIOUR.md#translation). */
function TranslationTag({ name }: { name: string }) {
  const { t } = useTranslation();
  return (
    <span className="tag" data-testid="attempt-translation" title={t('logs.translatedTitle')}>
      {translationLabel(t, name)}
    </span>
  );
}

/** One upstream attempt of the failover history (docs/BEHAVIOUR.md#attempt-loop). */
function AttemptItem({ a }: { a: Attempt }) {
  const { t, i18n } = useTranslation();
  return (
    <li className={`attempt outcome-${a.outcome}`} data-testid="attempt">
      <div className="attempt-head">
        <strong className="attempt-endpoint">{a.endpoint}</strong>
        <span className="attempt-outcome">{word(t, 'logs.outcome', a.outcome)}</span>
        {a.status > 0 && <span className="attempt-status mono">{a.status}</span>}
        {a.error_type && <span className="muted" data-testid="attempt-error">{word(t, 'logs.errorType', a.error_type)}</span>}
        {a.translation && <TranslationTag name={a.translation} />}
        {a.adjusted && (
          <span className="tag" data-testid="attempt-adjusted" title={t('logs.adjustedTitle')}>
            {word(t, 'logs.adjusted', a.adjusted)}
          </span>
        )}
        <span className="muted">
          {formatClock(a.started_at, i18n.language)} · {a.duration_ms} ms
        </span>
        <span className={a.breaker_counted && a.outcome !== 'success' ? 'tag warn' : 'tag'}>
          {a.breaker_counted ? t('logs.counted') : t('logs.notCounted')}
        </span>
      </div>
      {a.message && <div className="attempt-msg">{a.message}</div>}
      {a.body_head && <pre className="body-head">{a.body_head}</pre>}
    </li>
  );
}

/** The routing decision and the attempts of one request, in order. */
export function LogTimeline({ log, endpoints = [] }: { log: LogDetail; endpoints?: Endpoint[] }) {
  const { t } = useTranslation();
  const protocolOf = (id: number) => endpoints.find((e) => e.id === id)?.protocol;
  const candidates = log.routing?.candidates ?? [];
  const excluded = log.routing?.excluded ?? [];
  const history = log.history ?? [];
  return (
    <div className="timeline-wrap">
      <p className="muted">
        {log.protocol && <>{protocolLabel(t, log.protocol)} </>}{log.path} · {t('logs.asked', { asked: log.model_asked || '—', sent: log.model_forwarded || '—' })}
        {log.explicit && <> · {t('logs.explicit')}</>}
        {log.stream && <> · {t('logs.stream', { end: log.stream_end ? word(t, 'logs.streamEnd', log.stream_end) : '—' })}</>}
        {log.ttfb_ms > 0 && <> · {t('logs.ttfb', { ms: log.ttfb_ms })}</>}
        {(log.tokens_in > 0 || log.tokens_out > 0) && <> · {t('logs.tokens', { in: log.tokens_in, out: log.tokens_out })}</>}
        {log.client_gone && <> · {t('logs.clientGone')}</>}
      </p>
      {log.error && <p className="error">{log.error}</p>}
      <h4>{t('logs.routing')}</h4>
      {log.routing?.session && (
        <p className="muted" data-testid="routing-session">
          {t(log.routing.affinity ? 'logs.sessionAffinity' : 'logs.sessionRendezvous', { session: log.routing.session })}
        </p>
      )}
      <div className="grid2">
        <div>
          <h5>{t('logs.candidates')}</h5>
          <ul className="plain" data-testid="routing-candidates">
            {candidates.map((c) => (
              <li key={c.endpoint_id}>
                <strong>{c.endpoint}</strong> <span className="muted">{word(t, 'logs.state', c.state)}</span>
              </li>
            ))}
            {candidates.length === 0 && <li className="muted">—</li>}
          </ul>
        </div>
        <div>
          <h5>{t('logs.excluded')}</h5>
          <ul className="plain" data-testid="routing-excluded">
            {excluded.map((c) => (
              <li key={c.endpoint_id}>
                <strong>{c.endpoint}</strong> <span className="muted">{excludedWhy(t, c, protocolOf(c.endpoint_id))}</span>
              </li>
            ))}
            {excluded.length === 0 && <li className="muted">—</li>}
          </ul>
        </div>
      </div>
      <h4>{t('logs.history')}</h4>
      {history.length === 0 ? (
        <p className="muted">{t('logs.noHistory')}</p>
      ) : (
        <ol className="timeline" data-testid="attempt-timeline">
          {history.map((a, i) => (
            <AttemptItem key={i} a={a} />
          ))}
        </ol>
      )}
    </div>
  );
}
