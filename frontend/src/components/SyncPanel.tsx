import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { CloudDownload, CloudUpload } from 'lucide-react';
import { useApi } from '../api/context';
import type { SyncResult, SyncSettings, SyncSide } from '../api/types';
import { formatTime } from '../format';
import { ErrorLine, errorWords } from './BackupPanel';

interface Draft {
  url: string;
  user: string;
  password: string;
  passphrase: string;
}

/** A conflict: both sides with their times, and the choice of which one wins. */
function ConflictDialog({ res, onChoose, onCancel }: { res: SyncResult; onChoose: (side: 'local' | 'remote') => void; onCancel: () => void }) {
  const { t, i18n } = useTranslation();
  const id = useId();
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  const kind = res.local?.changed && res.remote?.changed ? 'both' : res.remote?.changed ? 'remote' : 'local';
  const side = (name: 'local' | 'remote', s: SyncSide | undefined) => {
    if (!s) return null;
    const time = (iso: string | null) => formatTime(iso, i18n.language);
    const when = !s.changed ? t('sync.unchanged') : s.modified_at ? t('sync.changedAt', { time: time(s.modified_at) }) : t('sync.changedNoTime');
    return (
      <li data-testid={`conflict-${name}`}>
        <strong>{t(name === 'local' ? 'sync.localSide' : 'sync.remoteSide')}</strong>: {when}
        {s.exported_at && <> · {t('sync.writtenAt', { time: time(s.exported_at) })}</>}
        {' · '}
        {t('sync.endpoints', { count: s.endpoints })}
      </li>
    );
  };
  return (
    <div className="modal-backdrop" onKeyDown={(e) => e.key === 'Escape' && onCancel()}>
      <div className="modal" role="alertdialog" aria-modal="true" aria-labelledby={id} aria-describedby={`${id}-why`}>
        <h3 id={id}>{t('sync.conflictTitle')}</h3>
        <p id={`${id}-why`}>{t(`sync.conflict.${kind}`)}</p>
        {res.last_sync && <p className="muted small">{t('sync.lastSyncAt', { time: formatTime(res.last_sync, i18n.language) })}</p>}
        <ul>
          {side('local', res.local)}
          {side('remote', res.remote)}
        </ul>
        <p>{t('sync.which')}</p>
        <div className="actions">
          <button type="button" className="danger" onClick={() => onChoose('local')}>{t('sync.keepLocal')}</button>
          <button type="button" className="danger" onClick={() => onChoose('remote')}>{t('sync.keepRemote')}</button>
          <button type="button" ref={cancelRef} onClick={onCancel}>{t('sync.cancel')}</button>
        </div>
      </div>
    </div>
  );
}

/** Settings → Sync: the WebDAV folder and its credentials (write-only), Push, Pull, the last sync, and conflicts. */
export function SyncPanel() {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const uid = useId();
  const [saved, setSaved] = useState<SyncSettings | null>(null);
  const [draft, setDraft] = useState<Draft>({ url: '', user: '', password: '', passphrase: '' });
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<{ words: string; detail: string } | null>(null);
  const [conflict, setConflict] = useState<SyncResult | null>(null);

  const show = useCallback((s: SyncSettings) => {
    setSaved(s);
    setDraft({ url: s.url, user: s.user, password: '', passphrase: '' });
  }, []);
  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  useEffect(() => {
    api.syncSettings().then(show, (err: unknown) => setError(errorWords(t, 'sync', err)));
  }, [api, show, t]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setNotice('');
    setError(null);
    try {
      // Write-only fields go only when typed: left empty they keep what is saved.
      show(
        await api.updateSync({
          url: draft.url,
          user: draft.user,
          ...(draft.password ? { password: draft.password } : {}),
          ...(draft.passphrase ? { passphrase: draft.passphrase } : {}),
        }),
      );
      setNotice(t('sync.savedNotice'));
    } catch (err) {
      setError(errorWords(t, 'sync', err));
    }
  };

  const run = async (dir: 'push' | 'pull', force?: 'local' | 'remote') => {
    setBusy(true);
    setNotice('');
    setError(null);
    setConflict(null);
    try {
      const res = await api.sync(dir, force);
      if (res.conflict) {
        setConflict(res);
      } else if (res.action === 'pull') {
        const n = (l: string[] | undefined) => l?.length ?? 0;
        setNotice(t('sync.pulled', { added: n(res.import?.added), changed: n(res.import?.changed), removed: n(res.import?.removed) }));
      } else {
        setNotice(res.action === 'push' ? t('sync.pushed') : t('sync.inSync'));
      }
      await api.syncSettings().then(setSaved, () => undefined);
    } catch (err) {
      setError(errorWords(t, 'sync', err));
    } finally {
      setBusy(false);
    }
  };

  const id = (name: string) => `${uid}-${name}`;
  const secret = (name: 'password' | 'passphrase', has: boolean | undefined) => (
    <div className="field">
      <label htmlFor={id(name)}>
        {t(`sync.${name}`)}
        {has && <span className="muted small" data-testid={`sync-${name}-saved`}> ({t('sync.saved')})</span>}
      </label>
      <input
        id={id(name)}
        type="password"
        autoComplete={name === 'password' ? 'current-password' : 'new-password'}
        placeholder={has ? t('sync.keepSaved') : ''}
        value={draft[name]}
        onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
      />
    </div>
  );
  return (
    <section aria-labelledby="sync-heading" className="sync">
      <h3 id="sync-heading">{t('sync.heading')}</h3>
      <p className="muted">{t('sync.intro')}</p>
      <form onSubmit={(e) => void save(e)} noValidate>
        <div className="grid2">
          <div className="field">
            <label htmlFor={id('url')}>{t('sync.url')}</label>
            <input
              id={id('url')}
              inputMode="url"
              placeholder="https://cloud.example/remote.php/dav/files/me/ccmesh/"
              value={draft.url}
              onChange={(e) => setDraft({ ...draft, url: e.target.value })}
            />
          </div>
          <div className="field">
            <label htmlFor={id('user')}>{t('sync.user')}</label>
            <input id={id('user')} autoComplete="username" value={draft.user} onChange={(e) => setDraft({ ...draft, user: e.target.value })} />
          </div>
          {secret('password', saved?.has_password)}
          {secret('passphrase', saved?.has_passphrase)}
        </div>
        {saved?.warning && (
          <p className="warn-text" role="note" data-testid="sync-warning">
            {t('sync.plainHttp')}
          </p>
        )}
        <div className="actions">
          <button type="submit">{t('sync.save')}</button>
          <button type="button" className="primary" disabled={busy} onClick={() => void run('push')}>
            <CloudUpload />
            {t('sync.push')}
          </button>
          <button type="button" className="primary" disabled={busy} onClick={() => void run('pull')}>
            <CloudDownload />
            {t('sync.pull')}
          </button>
          {busy && <span className="muted">{t('sync.working')}</span>}
        </div>
      </form>
      <p className="muted" data-testid="sync-last">
        {saved?.last_sync
          ? t('sync.last', { time: formatTime(saved.last_sync, i18n.language), action: t(`sync.actions.${saved.last_action || 'none'}`) })
          : t('sync.never')}
      </p>
      <ErrorLine error={error} testId="sync-error" />
      {notice && <p className="notice" role="status">{notice}</p>}
      {conflict && (
        <ConflictDialog
          res={conflict}
          onCancel={() => setConflict(null)}
          onChoose={(side) => void run(side === 'local' ? 'push' : 'pull', side)}
        />
      )}
    </section>
  );
}
