import { useCallback, useEffect, useState } from 'react';
import type { TFunction } from 'i18next';
import { Trans, useTranslation } from 'react-i18next';
import { Eye, FileCheck } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { Codex, CodexApplied } from '../api/types';
import { lineDiff } from '../diff';
import { CopyButton } from './CopyButton';

/** The 409s of GET /api/codex and its apply, in words (docs/BEHAVIOUR.md#admin-api). */
const CODEX_ERRORS = new Set(['codex_config_changed', 'codex_config_uneditable', 'codex_config_unreadable']);

function errorText(t: TFunction, err: unknown): { words: string; detail: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError && CODEX_ERRORS.has(err.code)) return { words: t(`codex.errors.${err.code}`), detail: message };
  return { words: message, detail: '' };
}

/** Connect Codex: the provider block and key line to copy, and writing them into config.toml after a preview. */
export function CodexPanel() {
  const { t } = useTranslation();
  const api = useApi();
  const [cx, setCx] = useState<Codex | null>(null);
  const [preview, setPreview] = useState(false);
  const [applied, setApplied] = useState<CodexApplied | null>(null);
  const [error, setError] = useState<{ words: string; detail: string } | null>(null);

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      api
        .codex()
        .then((c) => {
          setCx(c);
          setError(null);
        })
        .catch((err: unknown) => setError(errorText(t, err))),
    [api, t],
  );
  useEffect(() => {
    void load();
  }, [load]);

  // Sends the hash of the preview on screen: the server writes only that change.
  const apply = async (shown: Codex) => {
    setApplied(null);
    try {
      setApplied(await api.applyCodex(shown.hash));
      setPreview(false);
      setError(null);
      await load();
    } catch (err) {
      setError(errorText(t, err));
      // The file changed since the preview: show the change as it is now.
      if (err instanceof ApiError && err.code === 'codex_config_changed') {
        await api.codex().then(setCx, () => undefined);
      }
    }
  };

  const unchanged = cx !== null && cx.current === cx.proposed;
  return (
    <section aria-labelledby="codex-heading" className="claude codex">
      <h2 id="codex-heading">{t('codex.heading')}</h2>
      {error && (
        <p className="error" role="alert" data-testid="codex-error">
          {error.words}
          {error.detail && <span className="muted small error-detail"> {error.detail}</span>}
        </p>
      )}
      {cx && (
        <>
          <p><Trans i18nKey="codex.intro" components={{ code: <code /> }} /></p>
          <pre className="code" data-testid="codex-block">{cx.block}</pre>
          <CopyButton text={cx.block} label={t('codex.copyBlock')} />
          <p>{t('codex.exportsIntro')}</p>
          <pre className="code" data-testid="codex-exports">{cx.exports}</pre>
          <CopyButton text={cx.exports} label={t('codex.copyExports')} />
          <p>{t('codex.file', { path: cx.config_path })}</p>
          {unchanged ? (
            <p className="muted" data-testid="codex-unchanged">{t('codex.unchanged')}</p>
          ) : !preview ? (
            <button type="button" onClick={() => setPreview(true)}><Eye />{t('codex.preview')}</button>
          ) : (
            <>
              <h4>{cx.current ? t('codex.diff') : t('codex.newFile')}</h4>
              <pre className="code diff" data-testid="codex-diff" aria-label={t('codex.diff')}>
                {lineDiff(cx.current, cx.proposed).map((l, i) => (
                  <span key={i} className={`diff-${l.kind}`}>
                    {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
                    {l.text}
                    {'\n'}
                  </span>
                ))}
              </pre>
              <p className="muted small">{t('codex.diffLegend')}</p>
              <details>
                <summary>{t('codex.whole')}</summary>
                <div className="grid2">
                  <div>
                    <h4>{t('codex.current')}</h4>
                    <pre className="code" data-testid="codex-current">{cx.current || t('codex.emptyFile')}</pre>
                  </div>
                  <div>
                    <h4>{t('codex.proposed')}</h4>
                    <pre className="code" data-testid="codex-proposed">{cx.proposed}</pre>
                  </div>
                </div>
              </details>
              <button type="button" className="primary" onClick={() => void apply(cx)}><FileCheck />{t('codex.apply')}</button>
            </>
          )}
          {applied && (
            <p className="notice" role="status">
              {applied.backup_path ? t('codex.applied', { backup: applied.backup_path }) : t('codex.appliedNoBackup', { path: applied.config_path })}
            </p>
          )}
        </>
      )}
    </section>
  );
}
