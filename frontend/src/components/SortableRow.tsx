import { useSortable } from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import { useTranslation } from 'react-i18next';
import type { Endpoint, HealthStatus } from '../api/types';
import { StatusBadge } from './StatusBadge';

interface Props {
  endpoint: Endpoint;
  status?: HealthStatus;
  index: number;
}

/** One draggable endpoint row; the whole row is the handle (mouse and keyboard). */
export function SortableRow({ endpoint, status, index }: Props) {
  const { t } = useTranslation();
  const { attributes, listeners, setNodeRef, transform, transition, isDragging } = useSortable({ id: endpoint.id });
  const style = { transform: CSS.Transform.toString(transform), transition };
  return (
    <li
      ref={setNodeRef}
      style={style}
      className={`queue-row${isDragging ? ' dragging' : ''}`}
      data-testid={`queue-row-${endpoint.name}`}
      data-id={endpoint.id}
      {...attributes}
      {...listeners}
      aria-label={t('queue.dragHandle', { name: endpoint.name })}
    >
      <span className="grip" aria-hidden="true">⠿</span>
      <span className="pos" aria-hidden="true">{index + 1}</span>
      <span className="name">{endpoint.name}</span>
      {!endpoint.enabled && !status && <span className="tag">{t('queue.disabledTag')}</span>}
      {status && <StatusBadge status={status} />}
    </li>
  );
}
