import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import type { Preset } from '../api/types';
import { protocolLabel } from '../words';

/** The preset the list offers as "start from an empty form" (docs/BEHAVIOUR.md#presets). */
export const CUSTOM_PRESET = 'custom';

interface Props {
  /** A provider was picked; `null` is Custom, the empty form. */
  onPick: (p: Preset | null) => void;
  onCancel: () => void;
}

/** The first step of Add endpoint: the known providers from GET /api/presets, and Custom. */
export function PresetPicker({ onPick, onCancel }: Props) {
  const { t } = useTranslation();
  const api = useApi();
  const [presets, setPresets] = useState<Preset[] | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    let live = true;
    api
      .presets()
      .then((r) => {
        if (live) setPresets(r.presets ?? []);
      })
      .catch((err: unknown) => {
        if (!live) return;
        setPresets([]);
        setError(err instanceof Error ? err.message : String(err));
      });
    return () => {
      live = false;
    };
  }, [api]);

  const providers = (presets ?? []).filter((p) => p.id !== CUSTOM_PRESET);
  return (
    <section className="presets endpoint-form" aria-labelledby="presets-heading" data-testid="preset-picker">
      <h3 id="presets-heading">{t('presets.heading')}</h3>
      <p className="muted">{t('presets.intro')}</p>
      {error && <p className="error" role="alert">{t('presets.loadError', { message: error })}</p>}
      {presets === null && <p className="muted">{t('common.loading')}</p>}
      <ul className="preset-list plain">
        {providers.map((p) => (
          <li key={p.id} className="preset" data-testid={`preset-${p.id}`}>
            <div className="preset-head">
              <button type="button" className="preset-pick" onClick={() => onPick(p)} aria-describedby={`preset-${p.id}-proto preset-${p.id}-hint`}>
                {p.name}
              </button>
              <span className="muted small" id={`preset-${p.id}-proto`}>{protocolLabel(t, p.protocol)}</span>
            </div>
            <p className="preset-hint small" id={`preset-${p.id}-hint`}>{p.key_hint}</p>
            {p.source && (
              <a className="small" href={p.source} target="_blank" rel="noopener noreferrer" title={t('presets.sourceTitle', { date: p.date })}>
                {t('presets.source')}
              </a>
            )}
          </li>
        ))}
        <li className="preset" data-testid="preset-custom">
          <div className="preset-head">
            <button type="button" className="preset-pick" onClick={() => onPick(null)} aria-describedby="preset-custom-hint">
              {t('presets.custom')}
            </button>
          </div>
          <p className="preset-hint small" id="preset-custom-hint">{t('presets.customHint')}</p>
        </li>
      </ul>
      <div className="actions">
        <button type="button" onClick={onCancel}>{t('form.cancel')}</button>
      </div>
    </section>
  );
}
