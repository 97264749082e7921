import { useCallback, useEffect, useState, type ReactNode } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Eye, FileCheck } from 'lucide-react';
import type { ApiClient } from '../api/client';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import { lineDiff } from '../diff';

/** What the panels that write a client's config files share: loading the proposed change,
 * a preview to confirm, applying it by the hash of that preview, and errors in words. */

export interface ConfigError {
  words: string;
  detail: string;
}

/** How a panel reaches its client's config: ns names its i18n keys and test ids, codes are
 * the error codes said in words (docs/BEHAVIOUR.md#admin-api), changed the one that means
 * the files changed since the preview. get and put must be stable (module-level). */
export interface ConfigSource<C, A> {
  ns: string;
  codes: ReadonlySet<string>;
  changed: string;
  get: (api: ApiClient) => Promise<C>;
  put: (api: ApiClient, hash: string) => Promise<A>;
}

function errorText(t: TFunction, err: unknown, ns: string, codes: ReadonlySet<string>): ConfigError {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError && codes.has(err.code)) return { words: t(`${ns}.errors.${err.code}`), detail: message };
  return { words: message, detail: '' };
}

/** The proposed change of a client's config, and applying it. */
export function useClientConfig<C extends { hash: string }, A>({ ns, codes, changed, get, put }: ConfigSource<C, A>) {
  const { t } = useTranslation();
  const api = useApi();
  const [config, setConfig] = useState<C | null>(null);
  const [preview, setPreview] = useState(false);
  const [applied, setApplied] = useState<A | null>(null);
  const [error, setError] = useState<ConfigError | null>(null);

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      get(api)
        .then((c) => {
          setConfig(c);
          setError(null);
        })
        .catch((err: unknown) => setError(errorText(t, err, ns, codes))),
    [api, t, get, ns, codes],
  );
  useEffect(() => {
    void load();
  }, [load]);

  // Sends the hash of the preview on screen: the server writes only that change.
  const apply = async (shown: C) => {
    setApplied(null);
    try {
      setApplied(await put(api, shown.hash));
      setPreview(false);
      setError(null);
      await load();
    } catch (err) {
      setError(errorText(t, err, ns, codes));
      // The files changed since the preview: show the change as it is now.
      if (err instanceof ApiError && err.code === changed) {
        await get(api).then(setConfig, () => undefined);
      }
    }
  };
  return { config, preview, setPreview, applied, error, apply };
}

/** A config error, in words and with the server's message. */
export function ConfigErrorLine({ ns, error }: { ns: string; error: ConfigError | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert" data-testid={`${ns}-error`}>
      {error.words}
      {error.detail && <span className="muted small error-detail"> {error.detail}</span>}
    </p>
  );
}

/** The steps to a change: nothing to do, the preview button, or the preview (children) and the apply button. */
export function PreviewApply(props: {
  ns: string;
  unchanged: boolean;
  preview: boolean;
  onPreview: () => void;
  onApply: () => void;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  const { ns } = props;
  if (props.unchanged) return <p className="muted" data-testid={`${ns}-unchanged`}>{t(`${ns}.unchanged`)}</p>;
  if (!props.preview) return <button type="button" onClick={props.onPreview}><Eye />{t(`${ns}.preview`)}</button>;
  return (
    <>
      {props.children}
      <button type="button" className="primary" onClick={props.onApply}><FileCheck />{t(`${ns}.apply`)}</button>
    </>
  );
}

/** A file's change, line by line. */
export function FileDiff({ current, proposed, testId, label }: { current: string; proposed: string; testId: string; label: string }) {
  return (
    <pre className="code diff" data-testid={testId} aria-label={label}>
      {lineDiff(current, proposed).map((l, i) => (
        <span key={i} className={`diff-${l.kind}`}>
          {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
          {l.text}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/** The whole file before and after, folded. */
export function WholeFile(props: { ns: string; current: string; proposed: string; currentId?: string; proposedId?: string }) {
  const { t } = useTranslation();
  const { ns } = props;
  return (
    <details>
      <summary>{t(`${ns}.whole`)}</summary>
      <div className="grid2">
        <div>
          <h4>{t(`${ns}.current`)}</h4>
          <pre className="code" data-testid={props.currentId}>{props.current || t(`${ns}.emptyFile`)}</pre>
        </div>
        <div>
          <h4>{t(`${ns}.proposed`)}</h4>
          <pre className="code" data-testid={props.proposedId}>{props.proposed}</pre>
        </div>
      </div>
    </details>
  );
}
