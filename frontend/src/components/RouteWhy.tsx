import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Search } from 'lucide-react';
import { useApi } from '../api/context';
import type { Explanation, Protocol } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { knownModels, PROTOCOLS, type RouteSample } from '../routing';
import { clientLabel, excludedWhy, translationLabel, word } from '../words';
import { RouteRules } from './RouteRules';

type Asked = { protocol: Protocol; model: string; sample: RouteSample };

/** The sample request's fields as typed. */
interface SampleDraft {
  agent: 'main' | 'subagent';
  thinking: boolean;
  input_tokens: string;
  web_search: boolean;
  images: boolean;
  header: string;
}

function sampleOf(d: SampleDraft): RouteSample {
  const tokens = Number(d.input_tokens.trim());
  return {
    agent: d.agent === 'subagent' ? 'subagent' : undefined,
    thinking: d.thinking || undefined,
    input_tokens: Number.isInteger(tokens) && tokens > 0 ? tokens : undefined,
    web_search: d.web_search || undefined,
    images: d.images || undefined,
    headers: d.header.includes(':') ? [d.header] : undefined,
  };
}

/**
 * "Where would a request go?": GET /api/route for a sample request (client protocol, model, and what the rules look
 * at), in words: the rule it matches and why not the earlier ones, the endpoints in order, why not the others.
 */
export function RouteWhy() {
  const { t } = useTranslation();
  const api = useApi();
  const { endpoints, health } = useAppData();
  const [protocol, setProtocol] = useState<Protocol>('anthropic');
  const [model, setModel] = useState('');
  const [sample, setSample] = useState<SampleDraft>({ agent: 'main', thinking: false, input_tokens: '', web_search: false, images: false, header: '' });
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
        .route(q.protocol, q.model, q.sample)
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
    if (m) setAsked({ protocol, model: m, sample: sampleOf(sample) });
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
        <label>
          {t('routing.agent')}
          <select value={sample.agent} onChange={(e) => setSample({ ...sample, agent: e.target.value as SampleDraft['agent'] })}>
            <option value="main">{t('rules.agents.main')}</option>
            <option value="subagent">{t('rules.agents.subagent')}</option>
          </select>
        </label>
        <label>
          {t('routing.inputTokens')}
          <input value={sample.input_tokens} inputMode="numeric" className="narrow" placeholder="1200" onChange={(e) => setSample({ ...sample, input_tokens: e.target.value })} />
        </label>
        <label>
          {t('routing.header')}
          <input value={sample.header} placeholder="x-team: infra-1" onChange={(e) => setSample({ ...sample, header: e.target.value })} />
        </label>
        <span className="sample-checks">
          <label className="check">
            <input type="checkbox" checked={sample.thinking} onChange={(e) => setSample({ ...sample, thinking: e.target.checked })} /> {t('routing.thinking')}
          </label>
          <label className="check">
            <input type="checkbox" checked={sample.web_search} onChange={(e) => setSample({ ...sample, web_search: e.target.checked })} /> {t('routing.webSearch')}
          </label>
          <label className="check">
            <input type="checkbox" checked={sample.images} onChange={(e) => setSample({ ...sample, images: e.target.checked })} /> {t('routing.images')}
          </label>
        </span>
        <button type="submit" className="primary" disabled={!model.trim()}><Search />{t('routing.explain')}</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      {!result && !error && <p className="empty">{t('routing.whyEmpty')}</p>}
      {result && (
        <div className="why-result" data-testid="route-result">
          <RouteRules result={result} />
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
