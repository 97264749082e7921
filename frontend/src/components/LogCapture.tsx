import { useEffect, useId, useState, type FormEvent } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Send, Terminal } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { CaptureReply, Endpoint, LogDetail, ResendReply } from '../api/types';
import { prettyJSON } from '../format';
import { isEventStream, parseSSE, streamText } from '../sse';
import { copyText } from './CopyButton';

// What a request's client sent and got, when the capture setting kept it, and sending it again
// (docs/BEHAVIOUR.md#capture-and-resend).

/** The capture and resend refusals the API names, in words; anything else as the API said it. */
const KNOWN_ERRORS = new Set(['no_capture', 'capture_truncated', 'unknown_endpoint', 'not_json']);

function errorWords(t: TFunction, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError && KNOWN_ERRORS.has(err.code)) return `${t(`capture.errors.${err.code}`)} (${message})`;
  return message;
}

type Loaded = { kind: 'loading' } | { kind: 'none' } | { kind: 'error'; message: string } | { kind: 'ok'; capture: CaptureReply };

function HeadersTable({ headers, label }: { headers: Record<string, string>; label: string }) {
  const { t } = useTranslation();
  const names = Object.keys(headers).sort();
  if (names.length === 0) return <p className="muted">{t('capture.noHeaders')}</p>;
  return (
    <div className="table-wrap capture-headers">
      <table className="logs headers" aria-label={label}>
        <thead>
          <tr>
            <th>{t('capture.header')}</th>
            <th>{t('capture.value')}</th>
          </tr>
        </thead>
        <tbody>
          {names.map((n) => (
            <tr key={n}>
              <td className="mono">{n}</td>
              <td className="mono wrap">{headers[n]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Body({ text, testId }: { text: string; testId: string }) {
  const { t } = useTranslation();
  if (!text) return <p className="muted" data-testid={testId}>{t('capture.emptyBody')}</p>;
  return <pre className="code capture-body" data-testid={testId}>{prettyJSON(text).text}</pre>;
}

function Truncated({ on }: { on: boolean }) {
  const { t } = useTranslation();
  return on ? (
    <span className="tag warn" data-testid="capture-truncated" title={t('capture.truncatedTitle')}>
      {t('capture.truncated')}
    </span>
  ) : null;
}

/** The response: for a stream, the message text its deltas carried and the raw events folded away. */
function ResponseBody({ capture }: { capture: CaptureReply }) {
  const { t } = useTranslation();
  const { headers, body } = capture.response;
  if (!body || !isEventStream(headers, body)) return <Body text={body} testId="capture-response-body" />;
  const events = parseSSE(body);
  const text = streamText(events);
  return (
    <>
      <h5>{t('capture.streamText')}</h5>
      {text ? (
        <pre className="code capture-body" data-testid="capture-response-body">{text}</pre>
      ) : (
        <p className="muted" data-testid="capture-response-body">{t('capture.noStreamText')}</p>
      )}
      <details data-testid="capture-raw-events">
        <summary>{t('capture.rawEvents', { count: events.length })}</summary>
        <pre className="code capture-body">{body}</pre>
      </details>
    </>
  );
}

/** Resend: normal routing or a chosen endpoint, stream on or off; the result beside the original. */
function Resend({ log, endpoints, disabledWhy, jsonBody }: { log: LogDetail; endpoints: Endpoint[]; disabledWhy: string; jsonBody: boolean }) {
  const { t } = useTranslation();
  const api = useApi();
  const uid = useId();
  const [target, setTarget] = useState('');
  const [stream, setStream] = useState(log.stream);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ResendReply | null>(null);
  const [error, setError] = useState('');

  const send = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setResult(null);
    try {
      // The stream flag is sent only when changed: the request is sent again exactly as it was otherwise.
      setResult(await api.resend(log.id, { ...(target ? { endpoint: target } : {}), ...(stream !== log.stream ? { stream } : {}) }));
    } catch (err) {
      setError(errorWords(t, err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="resend" onSubmit={send} aria-label={t('capture.resendTitle')} data-testid="resend-form">
      <label htmlFor={`${uid}-target`}>{t('capture.target')}</label>
      <select id={`${uid}-target`} value={target} onChange={(e) => setTarget(e.target.value)} disabled={!!disabledWhy}>
        <option value="">{t('capture.targetRouted')}</option>
        {endpoints.map((ep) => (
          <option key={ep.id} value={ep.name}>{ep.name}</option>
        ))}
      </select>
      <label className="check">
        <input type="checkbox" role="switch" checked={stream} onChange={(e) => setStream(e.target.checked)} disabled={!!disabledWhy || !jsonBody} /> {t('capture.stream')}
      </label>
      <button type="submit" className="primary" disabled={busy || !!disabledWhy}><Send />{busy ? t('capture.sending') : t('capture.resend')}</button>
      {disabledWhy && <span className="muted small">{disabledWhy}</span>}
      {error && <p className="error" role="alert">{error}</p>}
      {result && (
        <p className={result.status >= 200 && result.status < 400 ? 'notice resend-result' : 'error resend-result'} role="status" data-testid="resend-result">
          {result.endpoint ? t('capture.result', { status: result.status, endpoint: result.endpoint }) : t('capture.resultNoEndpoint', { status: result.status })}{' '}
          {result.log_id > 0 ? (
            <a href={`#/logs/${result.log_id}`}>{t('capture.openNew', { id: result.log_id })}</a>
          ) : (
            <span className="muted">{t('capture.rowLost')}</span>
          )}
        </p>
      )}
    </form>
  );
}

function CopyCurl({ id, disabledWhy }: { id: number; disabledWhy: string }) {
  const { t } = useTranslation();
  const api = useApi();
  const [command, setCommand] = useState('');
  const [done, setDone] = useState(false);
  const [error, setError] = useState('');
  const copy = async () => {
    setError('');
    try {
      const c = (await api.curl(id)).command;
      setCommand(c);
      await copyText(c);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch (err) {
      setError(errorWords(t, err));
    }
  };
  return (
    <div className="curl">
      <button type="button" onClick={() => void copy()} disabled={!!disabledWhy} title={disabledWhy || undefined}>
        <Terminal />
        {done ? t('header.copied') : t('capture.curl')}
      </button>
      {error && <p className="error" role="alert">{error}</p>}
      {command && (
        <details>
          <summary>{t('capture.curlShow')}</summary>
          <pre className="code" data-testid="curl-command">{command}</pre>
        </details>
      )}
    </div>
  );
}

/** The capture of one request log row, with Resend and Copy as curl. */
export function LogCapture({ log, endpoints }: { log: LogDetail; endpoints: Endpoint[] }) {
  const { t } = useTranslation();
  const api = useApi();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });

  // State is set in the promise callbacks; the parent keys this component by row, so it starts loading.
  useEffect(() => {
    let live = true;
    api
      .logCapture(log.id)
      .then((capture) => live && setLoaded({ kind: 'ok', capture }))
      .catch((err: unknown) => {
        if (!live) return;
        if (err instanceof ApiError && err.status === 404 && err.code === 'no_capture') setLoaded({ kind: 'none' });
        else setLoaded({ kind: 'error', message: errorWords(t, err) });
      });
    return () => {
      live = false;
    };
  }, [api, log.id, t]);

  return (
    <section className="capture" aria-labelledby={`capture-${log.id}`} data-testid="log-capture">
      <h4 id={`capture-${log.id}`}>{t('capture.heading')}</h4>
      {loaded.kind === 'loading' && <p className="muted">{t('common.loading')}</p>}
      {loaded.kind === 'error' && <p className="error" role="alert">{loaded.message}</p>}
      {loaded.kind === 'none' && (
        <p className="empty" data-testid="no-capture">
          {t('capture.none')} <a href="#/settings">{t('capture.toSettings')}</a>
        </p>
      )}
      {loaded.kind === 'ok' && <Captured log={log} endpoints={endpoints} capture={loaded.capture} />}
    </section>
  );
}

function Captured({ log, endpoints, capture }: { log: LogDetail; endpoints: Endpoint[]; capture: CaptureReply }) {
  const { t } = useTranslation();
  const cut = capture.request.truncated ? t('capture.cannotResend') : '';
  return (
    <>
      <div className="actions capture-actions">
        <Resend log={log} endpoints={endpoints} disabledWhy={cut} jsonBody={capture.request.body.trimStart().startsWith('{')} />
        <CopyCurl id={log.id} disabledWhy={cut} />
      </div>
      <div className="capture-side" data-testid="capture-request">
        <h5>
          {t('capture.request')} <Truncated on={capture.request.truncated} />
        </h5>
        <HeadersTable headers={capture.request.headers ?? {}} label={t('capture.requestHeaders')} />
        <Body text={capture.request.body} testId="capture-request-body" />
      </div>
      <div className="capture-side" data-testid="capture-response">
        <h5>
          {t('capture.response')} <span className="mono" data-testid="capture-status">{t('capture.status', { status: capture.response.status })}</span>{' '}
          <Truncated on={capture.response.truncated} />
        </h5>
        <HeadersTable headers={capture.response.headers ?? {}} label={t('capture.responseHeaders')} />
        <ResponseBody capture={capture} />
      </div>
    </>
  );
}
