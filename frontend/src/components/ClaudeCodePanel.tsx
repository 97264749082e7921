import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Eye, FileCheck } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { ClaudeCode, ClaudeCodeApplied } from '../api/types';
import { CopyButton } from './CopyButton';

/** Export lines to copy, and writing ANTHROPIC_BASE_URL into settings.json after a preview. */
export function ClaudeCodePanel() {
  const { t } = useTranslation();
  const api = useApi();
  const [cc, setCc] = useState<ClaudeCode | null>(null);
  const [preview, setPreview] = useState(false);
  const [applied, setApplied] = useState<ClaudeCodeApplied | null>(null);
  const [error, setError] = useState('');

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const load = useCallback(
    () =>
      api
        .claudeCode()
        .then((c) => {
          setCc(c);
          setError('');
        })
        .catch((err: unknown) => setError(err instanceof Error ? err.message : String(err))),
    [api],
  );
  useEffect(() => {
    void load();
  }, [load]);

  // Sends the hash of the preview on screen: the server writes only that change.
  const apply = async (shown: ClaudeCode) => {
    try {
      setApplied(await api.applyClaudeCode(shown.hash));
      setPreview(false);
      await load();
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      // The file changed since the preview: show the change as it is now.
      if (err instanceof ApiError && err.code === 'claude_settings_changed') {
        await api.claudeCode().then(setCc, () => undefined);
      }
    }
  };

  return (
    <section aria-labelledby="claude-heading" className="claude">
      <h2 id="claude-heading">{t('claude.heading')}</h2>
      {error && <p className="error" role="alert">{error}</p>}
      {cc && (
        <>
          <p>{t('claude.intro')}</p>
          <pre className="code" data-testid="claude-exports">{cc.exports}</pre>
          <CopyButton text={cc.exports} label={t('claude.copy')} />
          <p>{t('claude.file', { path: cc.settings_path })}</p>
          {!preview ? (
            <button type="button" onClick={() => setPreview(true)}><Eye />{t('claude.preview')}</button>
          ) : (
            <>
              <div className="grid2">
                <div>
                  <h4>{t('claude.current')}</h4>
                  <pre className="code" data-testid="claude-current">{cc.current || t('claude.emptyFile')}</pre>
                </div>
                <div>
                  <h4>{t('claude.proposed')}</h4>
                  <pre className="code" data-testid="claude-proposed">{cc.proposed}</pre>
                </div>
              </div>
              <button type="button" className="primary" onClick={() => void apply(cc)}><FileCheck />{t('claude.apply')}</button>
            </>
          )}
          {applied && (
            <p className="notice" role="status">
              {applied.backup_path ? t('claude.applied', { backup: applied.backup_path }) : t('claude.appliedNoBackup', { path: applied.settings_path })}
            </p>
          )}
        </>
      )}
    </section>
  );
}
