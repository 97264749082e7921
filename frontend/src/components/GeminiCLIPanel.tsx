import { useTranslation } from 'react-i18next';
import type { ApiClient } from '../api/client';
import type { ClientFile, GeminiCLI, GeminiCLIApplied } from '../api/types';
import { ConfigErrorLine, FileDiff, PreviewApply, useClientConfig, WholeFile, type ConfigSource } from './ClientConfig';
import { CopyButton } from './CopyButton';

/** GET /api/gemini-cli and its apply, which writes both files or neither; its errors in words (docs/BEHAVIOUR.md#admin-api). */
const GEMINI: ConfigSource<GeminiCLI, GeminiCLIApplied> = {
  ns: 'gemini',
  codes: new Set(['gemini_config_changed', 'gemini_env_uneditable', 'gemini_settings_unreadable', 'client_config_partly_written']),
  changed: 'gemini_config_changed',
  get: (api: ApiClient) => api.geminiCLI(),
  put: (api: ApiClient, hash: string) => api.applyGeminiCLI(hash),
};

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
        <FileDiff current={file.current} proposed={file.proposed} testId={`${id}-diff`} label={t('gemini.diff', { path: file.path })} />
      )}
      <WholeFile ns="gemini" current={file.current} proposed={file.proposed} />
    </div>
  );
}

/** Connect Gemini CLI: the variables to copy, and writing its .env and settings.json after a preview of both. */
export function GeminiCLIPanel() {
  const { t } = useTranslation();
  const { config: g, preview, setPreview, applied, error, apply } = useClientConfig(GEMINI);

  const unchanged = g !== null && g.files.every((f) => f.current === f.proposed);
  const backups = applied ? [applied.env_backup_path, applied.settings_backup_path].filter((b) => b !== '') : [];
  return (
    <section aria-labelledby="gemini-heading" className="claude gemini">
      <h2 id="gemini-heading">{t('gemini.heading')}</h2>
      <ConfigErrorLine ns="gemini" error={error} />
      {g && (
        <>
          <p>{t('gemini.exportsIntro')}</p>
          <pre className="code" data-testid="gemini-exports">{g.exports}</pre>
          <CopyButton text={g.exports} label={t('gemini.copyExports')} />
          <p>{t('gemini.files', { paths: g.files.map((f) => f.path).join(', ') })}</p>
          <p className="muted small" data-testid="gemini-privacy">{t('gemini.privacy')}</p>
          <PreviewApply ns="gemini" unchanged={unchanged} preview={preview} onPreview={() => setPreview(true)} onApply={() => void apply(g)}>
            {g.files.map((f) => <FileChange key={f.name} file={f} />)}
            <p className="muted small">{t('gemini.diffLegend')}</p>
          </PreviewApply>
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
