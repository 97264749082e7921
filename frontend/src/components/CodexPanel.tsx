import { Trans, useTranslation } from 'react-i18next';
import type { ApiClient } from '../api/client';
import type { Codex, CodexApplied } from '../api/types';
import { ConfigErrorLine, FileDiff, PreviewApply, useClientConfig, WholeFile, type ConfigSource } from './ClientConfig';
import { CopyButton } from './CopyButton';

/** GET /api/codex and its apply; its 409s in words (docs/BEHAVIOUR.md#admin-api). */
const CODEX: ConfigSource<Codex, CodexApplied> = {
  ns: 'codex',
  codes: new Set(['codex_config_changed', 'codex_config_uneditable', 'codex_config_unreadable']),
  changed: 'codex_config_changed',
  get: (api: ApiClient) => api.codex(),
  put: (api: ApiClient, hash: string) => api.applyCodex(hash),
};

/** Connect Codex: the provider block and key line to copy, and writing them into config.toml after a preview. */
export function CodexPanel() {
  const { t } = useTranslation();
  const { config: cx, preview, setPreview, applied, error, apply } = useClientConfig(CODEX);

  const unchanged = cx !== null && cx.current === cx.proposed;
  return (
    <section aria-labelledby="codex-heading" className="claude codex">
      <h2 id="codex-heading">{t('codex.heading')}</h2>
      <ConfigErrorLine ns="codex" error={error} />
      {cx && (
        <>
          <p><Trans i18nKey="codex.intro" components={{ code: <code /> }} /></p>
          <pre className="code" data-testid="codex-block">{cx.block}</pre>
          <CopyButton text={cx.block} label={t('codex.copyBlock')} />
          <p>{t('codex.exportsIntro')}</p>
          <pre className="code" data-testid="codex-exports">{cx.exports}</pre>
          <CopyButton text={cx.exports} label={t('codex.copyExports')} />
          <p>{t('codex.file', { path: cx.config_path })}</p>
          <PreviewApply ns="codex" unchanged={unchanged} preview={preview} onPreview={() => setPreview(true)} onApply={() => void apply(cx)}>
            <h4>{cx.current ? t('codex.diff') : t('codex.newFile')}</h4>
            <FileDiff current={cx.current} proposed={cx.proposed} testId="codex-diff" label={t('codex.diff')} />
            <p className="muted small">{t('codex.diffLegend')}</p>
            <WholeFile ns="codex" current={cx.current} proposed={cx.proposed} currentId="codex-current" proposedId="codex-proposed" />
          </PreviewApply>
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
