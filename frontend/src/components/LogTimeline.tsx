import { useTranslation } from 'react-i18next';
import type { TFunction } from 'i18next';
import type { Attempt, Endpoint, LogDetail, Translation, Usage } from '../api/types';
import { formatClock, formatCost, formatNumber } from '../format';
import { excludedWhy, protocolLabel, translationLabel, word } from '../words';

/** The translation an attempt ran, client protocol → endpoint protocol (docs/BEHAVIOUR.md#translation). */
function TranslationTag({ name }: { name: Translation }) {
  const { t } = useTranslation();
  return (
    <span className="tag" data-testid="attempt-translation" title={t('logs.translatedTitle')}>
      {translationLabel(t, name)}
    </span>
  );
}

/** An attempt's tokens in words: "5 in · 1 out", with cache and reasoning when there are any. */
export function usageText(t: TFunction, u: Usage, lang: string): string {
  const n = (v: number) => formatNumber(v, lang);
  const parts = [t('logs.usage.in', { n: n(u.input) }), t('logs.usage.out', { n: n(u.output) })];
  if (u.cache_read) parts.push(t('logs.usage.cacheRead', { n: n(u.cache_read) }));
  if (u.cache_write) parts.push(t('logs.usage.cacheWrite', { n: n(u.cache_write) }));
  if (u.reasoning) parts.push(t('logs.usage.reasoning', { n: n(u.reasoning) }));
  return parts.join(' · ');
}

/** A cost in words: dollars, or "no price" for null (docs/BEHAVIOUR.md#cost: unknown, never $0). */
export function costText(t: TFunction, cost: number | null, lang: string): string {
  return cost === null ? t('logs.noPrice') : formatCost(cost, lang);
}

/** The tokens and cost of all the attempts of a request together (docs/BEHAVIOUR.md#cost). */
export function attemptTotals(history: Attempt[]): {
  usage: Usage | null;
  cost: number;
  priced: number;
  unpriced: number;
} {
  let usage: Usage | null = null;
  let cost = 0;
  let priced = 0;
  let unpriced = 0;
  for (const a of history) {
    if (a.usage) {
      const u: Usage = usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0, estimated: false };
      usage = {
        input: u.input + a.usage.input,
        output: u.output + a.usage.output,
        cache_read: u.cache_read + a.usage.cache_read,
        cache_write: u.cache_write + a.usage.cache_write,
        reasoning: u.reasoning + a.usage.reasoning,
        estimated: u.estimated || a.usage.estimated,
      };
    }
    if (typeof a.cost_usd === 'number') {
      cost += a.cost_usd;
      priced++;
    } else if (a.cost_usd === null) {
      unpriced++;
    }
  }
  return { usage, cost, priced, unpriced };
}

/** One upstream attempt of the failover history (docs/BEHAVIOUR.md#attempt-loop). */
function AttemptItem({ a }: { a: Attempt }) {
  const { t, i18n } = useTranslation();
  const hasCost = a.cost_usd !== undefined;
  return (
    <li className={`attempt outcome-${a.outcome}`} data-testid="attempt">
      <div className="attempt-head">
        <strong className="attempt-endpoint">{a.endpoint}</strong>
        {a.key && <span className="mono muted" data-testid="attempt-key">{a.key}</span>}
        <span className="attempt-outcome">{word(t, 'logs.outcome', a.outcome)}</span>
        {a.status > 0 && <span className="attempt-status mono">{a.status}</span>}
        {a.error_type && <span className="muted" data-testid="attempt-error">{word(t, 'logs.errorType', a.error_type)}</span>}
        {a.translation && <TranslationTag name={a.translation} />}
        {a.hedge && (
          <span className="tag" data-testid="attempt-hedge" title={t('logs.hedgeTitle')}>
            {word(t, 'logs.hedge', a.hedge)}
          </span>
        )}
        {a.adjusted && (
          <span className="tag" data-testid="attempt-adjusted" title={t('logs.adjustedTitle')}>
            {word(t, 'logs.adjusted', a.adjusted)}
          </span>
        )}
        {a.model_answered && (
          <span className="tag warn" data-testid="attempt-other-model" title={t('otherModel.title')}>
            {t('logs.answeredBy', { model: a.model_answered })}
          </span>
        )}
        {a.dropped && a.dropped.length > 0 && (
          <span className="tag" data-testid="attempt-dropped" title={t('logs.droppedTitle')}>
            {t('logs.dropped', { parts: a.dropped.join(', ') })}
          </span>
        )}
        <span className="muted">
          {formatClock(a.started_at, i18n.language)} · {a.duration_ms} ms
        </span>
        <span className={a.breaker_counted && a.outcome !== 'success' ? 'tag warn' : 'tag'}>
          {a.breaker_counted ? t('logs.counted') : t('logs.notCounted')}
        </span>
      </div>
      {(a.usage || hasCost) && (
        <div className="attempt-usage muted" data-testid="attempt-usage">
          {a.usage && <span>{usageText(t, a.usage, i18n.language)}</span>}
          {a.usage?.estimated && (
            <span className="tag" title={t('logs.estimatedTitle')}>
              {t('logs.estimated')}
            </span>
          )}
          {hasCost && (
            <span className={a.cost_usd === null ? 'cost unpriced' : 'cost'} data-testid="attempt-cost">
              {costText(t, a.cost_usd ?? null, i18n.language)}
            </span>
          )}
        </div>
      )}
      {a.refused && (
        <div className="attempt-msg" data-testid="attempt-refused">
          {t('logs.refused')} <code className="quoted">{a.refused}</code>
        </div>
      )}
      {a.message && <div className="attempt-msg"><code className="quoted">{a.message}</code></div>}
      {a.body_head && <pre className="body-head">{a.body_head}</pre>}
    </li>
  );
}

/** The routing decision and the attempts of one request, in order. */
export function LogTimeline({ log, endpoints = [] }: { log: LogDetail; endpoints?: Endpoint[] }) {
  const { t, i18n } = useTranslation();
  const protocolOf = (id: number) => endpoints.find((e) => e.id === id)?.protocol;
  const candidates = log.routing?.candidates ?? [];
  const excluded = log.routing?.excluded ?? [];
  const history = log.history ?? [];
  const totals = attemptTotals(history);
  const lang = i18n.language;
  return (
    <div className="timeline-wrap">
      {log.resent_from ? (
        <p data-testid="resent-from">
          <a href={`#/logs/${log.resent_from}`}>{t('logs.resentFrom', { id: log.resent_from })}</a>
        </p>
      ) : null}
      <p className="muted">
        {log.protocol && <>{protocolLabel(t, log.protocol)} </>}{log.path} · {t('logs.asked', { asked: log.model_asked || '—', sent: log.model_forwarded || '—' })}
        {log.explicit && <> · {t('logs.explicit')}</>}
        {log.stream && <> · {t('logs.stream', { end: log.stream_end ? word(t, 'logs.streamEnd', log.stream_end) : '—' })}</>}
        {log.ttfb_ms > 0 && <> · {t('logs.ttfb', { ms: log.ttfb_ms })}</>}
        {(log.tokens_in > 0 || log.tokens_out > 0) && <> · {t('logs.tokens', { in: log.tokens_in, out: log.tokens_out })}</>}
        {log.client_gone && <> · {t('logs.clientGone')}</>}
      </p>
      {(totals.usage || totals.priced + totals.unpriced > 0) && (
        <p data-testid="log-totals">
          <strong>{t('logs.totalsLabel')}</strong>{' '}
          {totals.usage && <span>{usageText(t, totals.usage, lang)}</span>}
          {totals.priced + totals.unpriced > 0 && (
            <span data-testid="log-cost">
              {totals.usage && ' · '}
              {totals.priced === 0
                ? t('logs.noPrice')
                : totals.unpriced > 0
                  ? t('logs.costPartly', { cost: formatCost(totals.cost, lang), count: totals.unpriced })
                  : formatCost(totals.cost, lang)}
            </span>
          )}
        </p>
      )}
      {log.error && <p className="error">{log.error}</p>}
      <h4>{t('logs.routing')}</h4>
      <p className="muted" data-testid="routing-rule">
        {log.rule ? t('logs.ruleMatched', { name: log.rule }) : log.explicit ? t('logs.ruleExplicit') : t('logs.noRule')}
      </p>
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
