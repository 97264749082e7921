import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Eraser, Plus, X } from 'lucide-react';
import { useApi } from '../api/context';
import type { DroppablePart, Endpoint, EndpointDrop } from '../api/types';
import { formatTime } from '../format';

interface Props {
  endpoint: Endpoint;
  busy: boolean;
  /** Saves the endpoint's new list of drops; the card shows a failure. */
  onSave: (drops: EndpointDrop[], done: string) => void;
}

/**
 * The parts of a request this endpoint refuses and gets without (docs/BEHAVIOUR.md#refused-fields):
 * what ccmesh learned, when and from which refusal, or what the user entered; each removable, all
 * clearable, more addable by hand from the list ccmesh may leave out.
 */
export function EndpointDrops({ endpoint: ep, busy, onSave }: Props) {
  const { t, i18n } = useTranslation();
  const api = useApi();
  const [adding, setAdding] = useState(false);
  const [choice, setChoice] = useState('');
  const [parts, setParts] = useState<DroppablePart[]>([]);
  const drops = ep.drops ?? [];

  useEffect(() => {
    if (!adding) return;
    let live = true;
    api.droppable().then((r) => live && setParts(r.parts), () => live && setParts([]));
    return () => {
      live = false;
    };
  }, [adding, api]);

  const without = (drop: string) => drops.filter((d) => d.drop !== drop);
  const add = () => {
    const drop = choice.trim();
    if (!drop) return;
    onSave([...without(drop), { drop, at: new Date().toISOString(), source: 'manual' }], t('drops.added', { drop }));
    setChoice('');
    setAdding(false);
  };

  return (
    <section className="drops" data-testid="endpoint-drops" aria-label={t('drops.heading')}>
      <h4>{t('drops.heading')}</h4>
      {drops.length === 0 ? (
        <p className="muted">{t('drops.none')}</p>
      ) : (
        <ul>
          {drops.map((d) => (
            <li key={d.drop} data-testid="drop">
              <code>{d.drop}</code>{' '}
              <span className="muted">
                {d.source === 'learned' ? t('drops.learned', { at: formatTime(d.at, i18n.language) }) : t('drops.manual', { at: formatTime(d.at, i18n.language) })}
              </span>
              {d.error && (
                <div className="muted">
                  {t('drops.taughtBy')} <code className="quoted">{d.error}</code>
                </div>
              )}
              <button type="button" className="link" disabled={busy} aria-label={t('drops.remove', { drop: d.drop })}
                onClick={() => onSave(without(d.drop), t('drops.removed', { drop: d.drop }))}>
                <X />
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="actions">
        {drops.length > 0 && (
          <button type="button" disabled={busy} onClick={() => onSave([], t('drops.cleared'))}>
            <Eraser />
            {t('drops.clear')}
          </button>
        )}
        {!adding && (
          <button type="button" disabled={busy} onClick={() => setAdding(true)}>
            <Plus />
            {t('drops.add')}
          </button>
        )}
      </div>
      {adding && (
        <div className="drop-add">
          <label>
            {t('drops.addLabel')}
            <input list={`drops-${ep.id}`} value={choice} onChange={(e) => setChoice(e.target.value)} placeholder="context_management" />
          </label>
          <datalist id={`drops-${ep.id}`}>
            {parts.map((p) => (
              <option key={p.drop} value={p.drop}>{p.why}</option>
            ))}
          </datalist>
          <p className="muted">{t('drops.addHint')}</p>
          <button type="button" className="primary" disabled={busy || !choice.trim()} onClick={add}>{t('drops.save')}</button>
          <button type="button" onClick={() => setAdding(false)}>{t('endpoints.cancel')}</button>
        </div>
      )}
    </section>
  );
}
