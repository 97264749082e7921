import { useCallback, useEffect, useState } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Eye, FileCheck } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { ClientFile, GeminiCLI, GeminiCLIApplied } from '../api/types';
import { lineDiff } from '../diff';
import { CopyButton } from './CopyButton';

/** The errors of GET /api/gemini-cli and its apply said in words (docs/BEHAVIOUR.md#admin-api). */
const GEMINI_ERRORS = new Set(['gemini_config_changed', 'gemini_env_uneditable', 'gemini_settings_unreadable', 'client_config_partly_written']);

function errorText(t: TFunction, err: unknown): { words: string; detail: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError && GEMINI_ERRORS.has(err.code)) return { words: t(`gemini.errors.${err.code}`), detail: message };
  return { words: message, detail: '' };
}

/** One file of the preview: what changes, as a diff, and the whole file before and after. */
function FileChange({ file }: { file: ClientFile }) {
  const { t } = useTranslation();
  const id = `gemini-${file.name}`;
  return (
    <div data-testid={id}>
      <h4>{file.current ? t('gemini.diff', { path: file.path }) : t('gemini.newFile', { path: file.path })}</h4>
      {file.name === 'settings' && <p className="muted small">{t('gemini.settingsWhy')}</p>}
      {file.current === file.proposed ? (
        <p className="muted" data-testid={`${id}-unchanged`}>{t('gemini.fileUnchanged')}</p>
      ) : (
        <pre className="code diff" data-testid={`${id}-diff`} aria-label={t('gemini.diff', { path: file.path })}>
          {lineDiff(file.current, file.proposed).map((l, i) => (
            <span key={i} className={`diff-${l.kind}`}>
              {l.kind === 'added' ? '+ ' : l.kind === 'removed' ? '- ' : '  '}
              {l.text}
              {'\n'}
            </span>
          ))}
        </pre>
      )}
      <details>
        <summary>{t('gemini.whole')}</summary>
        <div className="grid2">
          <div>
            <h4>{t('gemini.current')}</h4>
            <pre className="code">{file.current || t('gemini.emptyFile')}</pre>
          </div>
          <div>
            <h4>{t('gemini.proposed')}</h4>
            <pre className="code">{file.proposed}</pre>
          </div>
        </div>
      </details>
    </div>
  );
}

/** Connect Gemini CLI: the variables to copy, and writing its .env and settings.json after a preview of both. */
export function GeminiCLIPanel() {
  const { t } = useTranslation();
  const api = useApi();
  const [g, setG] = useState<GeminiCLI | null>(null);
  const [preview, setPreview] = useState(false);
  const [applied, setApplied] = useState<GeminiCLIApplied | null>(null);
  const [error, setError] = useState<{ words: string; detail: string } | null>(null);

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      api
        .geminiCLI()
        .then((c) => {
          setG(c);
          setError(null);
        })
        .catch((err: unknown) => setError(errorText(t, err))),
    [api, t],
  );
  useEffect(() => {
    void load();
  }, [load]);

  // Sends the hash of the preview on screen: the server writes only that change, to both files or neither.
  const apply = async (shown: GeminiCLI) => {
    setApplied(null);
    try {
      setApplied(await api.applyGeminiCLI(shown.hash));
      setPreview(false);
      setError(null);
      await load();
    } catch (err) {
      setError(errorText(t, err));
      // A file changed since the preview: show the change as it is now.
      if (err instanceof ApiError && err.code === 'gemini_config_changed') {
        await api.geminiCLI().then(setG, () => undefined);
      }
    }
  };

  const unchanged = g !== null && g.files.every((f) => f.current === f.proposed);
  const backups = applied ? [applied.env_backup_path, applied.settings_backup_path].filter((b) => b !== '') : [];
  return (
    <section aria-labelledby="gemini-heading" className="claude gemini">
      <h2 id="gemini-heading">{t('gemini.heading')}</h2>
      {error && (
        <p className="error" role="alert" data-testid="gemini-error">
          {error.words}
          {error.detail && <span className="muted small error-detail"> {error.detail}</span>}
        </p>
      )}
      {g && (
        <>
          <p>{t('gemini.exportsIntro')}</p>
          <pre className="code" data-testid="gemini-exports">{g.exports}</pre>
          <CopyButton text={g.exports} label={t('gemini.copyExports')} />
          <p>{t('gemini.files', { paths: g.files.map((f) => f.path).join(', ') })}</p>
          <p className="muted small" data-testid="gemini-privacy">{t('gemini.privacy')}</p>
          {unchanged ? (
            <p className="muted" data-testid="gemini-unchanged">{t('gemini.unchanged')}</p>
          ) : !preview ? (
            <button type="button" onClick={() => setPreview(true)}><Eye />{t('gemini.preview')}</button>
          ) : (
            <>
              {g.files.map((f) => <FileChange key={f.name} file={f} />)}
              <p className="muted small">{t('gemini.diffLegend')}</p>
              <button type="button" className="primary" onClick={() => void apply(g)}><FileCheck />{t('gemini.apply')}</button>
            </>
          )}
          {applied && (
            <p className="notice" role="status">
              {backups.length > 0 ? t('gemini.applied', { backups: backups.join(', ') }) : t('gemini.appliedNoBackup', { paths: `${applied.env_path}, ${applied.settings_path}` })}
            </p>
          )}
        </>
      )}
    </section>
  );
}
