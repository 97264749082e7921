import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Plus } from 'lucide-react';
import { useApi } from '../api/context';
import type { Endpoint, Id, Preset } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { EndpointCard } from './EndpointCard';
import { EndpointForm, uniqueName } from './EndpointForm';
import { PresetPicker } from './PresetPicker';

/** Adding starts with the preset list (`pick`); a preset, or Custom (none), opens the form. */
type Editing = { mode: 'pick' } | { mode: 'add'; preset?: { preset: Preset; name: string } } | { mode: 'edit'; id: Id } | null;

/** `startAdding` opens Add endpoint at once, at its preset list (the dashboard's welcome leads here). */
export function EndpointsPanel({ startAdding = false }: { startAdding?: boolean }) {
  const { t } = useTranslation();
  const api = useApi();
  const { endpoints, health, setEndpoints, mergeHealth } = useAppData();
  const [editing, setEditing] = useState<Editing>(startAdding ? { mode: 'pick' } : null);

  // The live stream also delivers these changes; refetching here keeps the
  // page right when the stream is down and avoids waiting for it.
  const reload = async () => {
    setEndpoints(await api.listEndpoints());
  };
  const afterChange = (ep?: Endpoint) => {
    if (ep) setEndpoints(endpoints.some((e) => e.id === ep.id) ? endpoints.map((e) => (e.id === ep.id ? ep : e)) : [...endpoints, ep]);
    void reload().catch(() => undefined);
  };

  const editingEndpoint = editing?.mode === 'edit' ? endpoints.find((e) => e.id === editing.id) : undefined;
  const healthById = new Map(health.items.map((h) => [h.id, h]));

  return (
    <section aria-labelledby="endpoints-heading">
      <div className="panel-head">
        <h2 id="endpoints-heading">{t('endpoints.heading')}</h2>
        {!editing && (
          <button type="button" className="primary" onClick={() => setEditing({ mode: 'pick' })}>
            <Plus />
            {t('endpoints.add')}
          </button>
        )}
      </div>
      {editing?.mode === 'pick' && (
        <PresetPicker
          onCancel={() => setEditing(null)}
          onPick={(p) =>
            setEditing(p ? { mode: 'add', preset: { preset: p, name: uniqueName(p.id, endpoints.map((e) => e.name)) } } : { mode: 'add' })
          }
        />
      )}
      {(editing?.mode === 'add' || editing?.mode === 'edit') && (
        <EndpointForm
          key={editing.mode === 'edit' ? editing.id : `add-${editing.preset?.preset.id ?? ''}`}
          endpoint={editingEndpoint}
          preset={editing.mode === 'add' ? editing.preset : undefined}
          onCancel={() => setEditing(null)}
          onSaved={(ep) => {
            setEditing(null);
            afterChange(ep);
          }}
        />
      )}
      {endpoints.length === 0 && !editing && <p className="empty">{t('endpoints.empty')}</p>}
      <div className="cards">
        {endpoints.map((ep) => (
          <EndpointCard
            key={ep.id}
            endpoint={ep}
            health={healthById.get(ep.id)}
            healthAt={health.at[ep.id] ?? 0}
            onEdit={() => setEditing({ mode: 'edit', id: ep.id })}
            onChanged={afterChange}
            onHealth={mergeHealth}
          />
        ))}
      </div>
    </section>
  );
}
