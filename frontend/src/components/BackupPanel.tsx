import { useId, useState, type FormEvent } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { saveBlob } from '../download';
import { Download, FileCheck, Eye } from 'lucide-react';
import { ApiError } from '../api/client';
import { useApi } from '../api/context';
import type { ImportReport } from '../api/types';
import { formatTime } from '../format';

/** An error in words: the language's own for a known code (under `prefix.errors`), with the server's detail. */
export function errorWords(t: TFunction, prefix: string, err: unknown): { words: string; detail: string } {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ApiError) {
    const words = t(`${prefix}.errors.${err.code}`, { defaultValue: '' });
    if (words) return { words, detail: message };
  }
  return { words: message, detail: '' };
}

export function ErrorLine({ error, testId }: { error: { words: string; detail: string } | null; testId: string }) {
  if (!error) return null;
  return (
    <p className="error" role="alert" data-testid={testId}>
      {error.words}
      {error.detail && <span className="muted small error-detail"> {error.detail}</span>}
    </p>
  );
}

/** Whether a file is an age file (binary or armored): its passphrase is needed before a preview. */
async function isEncrypted(file: Blob): Promise<boolean> {
  const head = new TextDecoder().decode(await readBytes(file.slice(0, 64))).trimStart();
  return head.startsWith('age-encryption.org/') || head.startsWith('-----BEGIN AGE ENCRYPTED FILE-----');
}

function readBytes(blob: Blob): Promise<ArrayBuffer> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(r.result as ArrayBuffer);
    r.onerror = () => reject(r.error ?? new Error('could not read the file'));
    r.readAsArrayBuffer(blob);
  });
}

/**
 * Stored keys that a keyless file would point at other hosts: named with both addresses, and dropped by the import
 * unless the user ticks the box that sends them along.
 */
function KeyMoves({ report, moveKeys, onMoveKeys }: { report: ImportReport; moveKeys: boolean; onMoveKeys: (v: boolean) => void }) {
  const { t } = useTranslation();
  if (!report.key_moves?.length) return null;
  return (
    <div className="import-key-moves" role="alert" data-testid="import-key-moves">
      <p className="warn-text">{t('backup.keyMoves', { count: report.key_moves.length })}</p>
      <ul>
        {report.key_moves.map((m) => (
          <li key={m.name}>
            <code>{m.name}</code>: <code>{m.from}</code> → <code>{m.to}</code>
          </li>
        ))}
      </ul>
      <label className="check">
        <input type="checkbox" checked={moveKeys} onChange={(e) => onMoveKeys(e.target.checked)} /> {t('backup.moveKeys')}
      </label>
      <p className="muted small">{moveKeys ? t('backup.keysGo') : t('backup.keysDropped')}</p>
    </div>
  );
}

/** What an import changes: endpoints added, changed (with their fields) and removed, and the settings. */
function ImportChanges({ report }: { report: ImportReport }) {
  const { t, i18n } = useTranslation();
  const empty = report.added.length + report.changed.length + report.removed.length + report.settings.length === 0;
  const list = (key: 'added' | 'changed' | 'removed', names: string[]) => (
    <div className={`import-${key}`} data-testid={`import-${key}`}>
      <h4>{t(`backup.${key}`, { count: names.length })}</h4>
      {names.length === 0 ? (
        <p className="muted">{t('backup.none')}</p>
      ) : (
        <ul>
          {names.map((n) => (
            <li key={n}>
              <code>{n}</code>
              {key === 'changed' && report.fields[n] && <span className="muted small"> {report.fields[n].join(', ')}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
  return (
    <div className="import-preview" data-testid="import-preview">
      {report.exported_at && <p className="muted small">{t('backup.written', { time: formatTime(report.exported_at, i18n.language) })}</p>}
      <p className="notice">{t('backup.replaceNote')}</p>
      {!report.keys && <p className="muted">{t('backup.noKeysNote')}</p>}
      {empty ? (
        <p data-testid="import-nothing">{t('backup.nothing')}</p>
      ) : (
        <>
          <div className="grid3">
            {list('added', report.added)}
            {list('changed', report.changed)}
            {list('removed', report.removed)}
          </div>
          {report.settings.length > 0 && (
            <p data-testid="import-settings">
              {t('backup.settings')}: {report.settings.map((s) => <code key={s}>{s} </code>)}
            </p>
          )}
        </>
      )}
    </div>
  );
}

/** Settings → Backup: export a file (keys only encrypted), and import one after a preview of what changes. */
export function BackupPanel() {
  const { t } = useTranslation();
  const api = useApi();
  const uid = useId();

  const [withKeys, setWithKeys] = useState(false);
  const [pass, setPass] = useState('');
  const [pass2, setPass2] = useState('');
  const [exporting, setExporting] = useState(false);
  const [exported, setExported] = useState('');
  const [exportError, setExportError] = useState<{ words: string; detail: string } | null>(null);

  const [file, setFile] = useState<File | null>(null);
  const [fileKey, setFileKey] = useState(0); // a new key empties the file input
  const [encrypted, setEncrypted] = useState(false);
  const [importPass, setImportPass] = useState('');
  const [report, setReport] = useState<ImportReport | null>(null);
  const [moveKeys, setMoveKeys] = useState(false);
  const [busy, setBusy] = useState(false);
  const [imported, setImported] = useState('');
  const [importError, setImportError] = useState<{ words: string; detail: string } | null>(null);

  const doExport = async (e: FormEvent) => {
    e.preventDefault();
    setExported('');
    setExportError(null);
    if (withKeys && pass !== pass2) {
      setExportError({ words: t('backup.mismatch'), detail: '' });
      return;
    }
    setExporting(true);
    try {
      const { blob, name } = await api.exportFile(withKeys ? { keys: true, passphrase: pass } : { keys: false, passphrase: '' });
      saveBlob(blob, name);
      setExported(t('backup.exported', { name }));
    } catch (err) {
      setExportError(errorWords(t, 'backup', err));
    } finally {
      setExporting(false);
    }
  };

  const preview = async (f: File, passphrase: string) => {
    setBusy(true);
    setImportError(null);
    try {
      setReport(await api.previewImport(f, passphrase));
    } catch (err) {
      setReport(null);
      setImportError(errorWords(t, 'backup', err));
    } finally {
      setBusy(false);
    }
  };

  const choose = async (f: File | null) => {
    setFile(f);
    setReport(null);
    setMoveKeys(false);
    setImported('');
    setImportError(null);
    setImportPass('');
    if (!f) return;
    const enc = await isEncrypted(f);
    setEncrypted(enc);
    if (!enc) await preview(f, '');
  };

  const reset = () => {
    setFile(null);
    setReport(null);
    setMoveKeys(false);
    setImportPass('');
    setEncrypted(false);
    setFileKey((k) => k + 1);
  };

  const apply = async () => {
    if (!file) return;
    setBusy(true);
    setImportError(null);
    try {
      const done = await api.importFile(file, encrypted ? importPass : '', moveKeys && !!report?.key_moves?.length);
      reset();
      setImported(t('backup.applied', { added: done.added.length, changed: done.changed.length, removed: done.removed.length }));
    } catch (err) {
      setImportError(errorWords(t, 'backup', err));
    } finally {
      setBusy(false);
    }
  };

  const id = (name: string) => `${uid}-${name}`;
  return (
    <section aria-labelledby="backup-heading" className="backup">
      <h2 id="backup-heading">{t('backup.heading')}</h2>
      <p className="muted">{t('backup.intro')}</p>

      <h3>{t('backup.exportHeading')}</h3>
      <form onSubmit={(e) => void doExport(e)} noValidate aria-label={t('backup.exportHeading')}>
        <label className="check">
          <input type="checkbox" checked={withKeys} onChange={(e) => setWithKeys(e.target.checked)} /> {t('backup.withKeys')}
        </label>
        {withKeys ? (
          <>
            <div className="grid2">
              <div className="field">
                <label htmlFor={id('pass')}>{t('backup.passphrase')}</label>
                <input id={id('pass')} type="password" autoComplete="new-password" value={pass} onChange={(e) => setPass(e.target.value)} />
              </div>
              <div className="field">
                <label htmlFor={id('pass2')}>{t('backup.repeat')}</label>
                <input id={id('pass2')} type="password" autoComplete="new-password" value={pass2} onChange={(e) => setPass2(e.target.value)} />
              </div>
            </div>
            <p className="muted">{t('backup.withKeysNote')}</p>
          </>
        ) : (
          <p className="muted">{t('backup.withoutKeysNote')}</p>
        )}
        <ErrorLine error={exportError} testId="export-error" />
        <div className="actions">
          <button type="submit" className="primary" disabled={exporting}>
            <Download />
            {exporting ? t('backup.exporting') : t('backup.export')}
          </button>
          {exported && <span className="notice" role="status">{exported}</span>}
        </div>
      </form>

      <h3>{t('backup.importHeading')}</h3>
      <div className="field">
        <label htmlFor={id('file')}>{t('backup.file')}</label>
        <input key={fileKey} id={id('file')} type="file" accept=".age,.json,application/json" onChange={(e) => void choose(e.target.files?.[0] ?? null)} />
      </div>
      {file && encrypted && !report && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void preview(file, importPass);
          }}
          noValidate
          aria-label={t('backup.importHeading')}
        >
          <p>{t('backup.encrypted')}</p>
          <div className="field">
            <label htmlFor={id('import-pass')}>{t('backup.passphrase')}</label>
            <input id={id('import-pass')} type="password" autoComplete="off" value={importPass} onChange={(e) => setImportPass(e.target.value)} />
          </div>
          <button type="submit" disabled={busy}>
            <Eye />
            {busy ? t('backup.reading') : t('backup.show')}
          </button>
        </form>
      )}
      <ErrorLine error={importError} testId="import-error" />
      {report && (
        <>
          <ImportChanges report={report} />
          <KeyMoves report={report} moveKeys={moveKeys} onMoveKeys={setMoveKeys} />
          <div className="actions">
            <button type="button" className="primary" disabled={busy} onClick={() => void apply()}>
              <FileCheck />
              {busy ? t('backup.applying') : t('backup.apply')}
            </button>
            <button type="button" onClick={reset}>{t('backup.cancel')}</button>
          </div>
        </>
      )}
      {imported && <p className="notice" role="status">{imported}</p>}
    </section>
  );
}
