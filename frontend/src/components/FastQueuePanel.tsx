import {
  type Announcements,
  closestCorners,
  DndContext,
  KeyboardSensor,
  MeasuringStrategy,
  PointerSensor,
  useDroppable,
  useSensor,
  useSensors,
  type DragEndEvent,
  type DragOverEvent,
  type UniqueIdentifier,
} from '@dnd-kit/core';
import { arrayMove, SortableContext, sortableKeyboardCoordinates, verticalListSortingStrategy } from '@dnd-kit/sortable';
import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { useApi } from '../api/context';
import type { Endpoint, HealthStatus, Id } from '../api/types';
import { useAppData } from '../hooks/useAppData';
import { SortableRow } from './SortableRow';

type Lists = { fast: Id[]; other: Id[] };
type ListId = keyof Lists;

/** The fast queue and the other enabled endpoints, as the server orders them. */
export function queueLists(endpoints: Endpoint[]): Lists {
  const fast = endpoints.filter((e) => e.fast).sort((a, b) => a.fast_sort_order - b.fast_sort_order);
  const other = endpoints.filter((e) => !e.fast && e.enabled).sort((a, b) => a.sort_order - b.sort_order);
  return { fast: fast.map((e) => e.id), other: other.map((e) => e.id) };
}

/**
 * The full order after the "other" list was reordered: the others take the
 * slots they held before, in their new order, so every id stays once.
 */
export function mergeOrder(full: Id[], others: Id[]): Id[] {
  const set = new Set(others);
  let i = 0;
  return full.map((id) => (set.has(id) ? others[i++] : id));
}

function useQueueSensors() {
  return useSensors(
    useSensor(PointerSensor, { activationConstraint: { distance: 4 } }),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
}

/** Screen-reader texts for dragging, in the page's language. */
function useAnnouncements(nameOf: (id: UniqueIdentifier) => string, listOf: (id: UniqueIdentifier) => { list: string; pos: number } | null) {
  const { t } = useTranslation();
  const announcements: Announcements = {
    onDragStart: ({ active }) => t('queue.srStart', { name: nameOf(active.id) }),
    onDragOver: ({ active, over }) => {
      const where = over ? listOf(over.id) : null;
      return where ? t('queue.srOver', { name: nameOf(active.id), ...where }) : t('queue.srOverNone', { name: nameOf(active.id) });
    },
    onDragEnd: ({ active }) => t('queue.srEnd', { name: nameOf(active.id) }),
    onDragCancel: ({ active }) => t('queue.srCancel', { name: nameOf(active.id) }),
  };
  return { announcements, screenReaderInstructions: { draggable: t('queue.srInstructions') } };
}

function DropList({ id, testId, label, empty, children }: { id: string; testId: string; label: string; empty: string; children: ReactNode[] }) {
  // The list itself is a drop target only while empty: a filled list is
  // reached through its rows, and the keyboard sensor would otherwise pick
  // the list's own edge as the nearest target and never leave it.
  const { setNodeRef, isOver } = useDroppable({ id, disabled: children.length > 0 });
  return (
    <div className="queue-col">
      <h3 id={`${id}-label`}>{label}</h3>
      <ul ref={setNodeRef} className={`queue-list${isOver ? ' over' : ''}`} data-testid={testId} aria-labelledby={`${id}-label`}>
        {children}
        {children.length === 0 && <li className="empty">{empty}</li>}
      </ul>
    </div>
  );
}

export function FastQueuePanel() {
  const { t } = useTranslation();
  const api = useApi();
  const { endpoints, health, setEndpoints } = useAppData();
  const byId = useMemo(() => new Map(endpoints.map((e) => [e.id, e])), [endpoints]);
  const statusOf = useMemo(() => {
    const m = new Map(health.items.map((h) => [h.id, h.status] as const));
    return (id: Id): HealthStatus | undefined => m.get(id);
  }, [health]);
  const [lists, setLists] = useState<Lists>(() => queueLists(endpoints));
  const [order, setOrderState] = useState<Id[]>(() => endpoints.map((e) => e.id));
  const [notice, setNotice] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const dragging = useRef(false);
  const before = useRef<Lists>(lists);
  const sensors = useQueueSensors();
  const orderSensors = useQueueSensors();
  const nameOf = (id: UniqueIdentifier) => byId.get(id as Id)?.name ?? String(id);
  const queueA11y = useAnnouncements(nameOf, (id) => {
    for (const key of ['fast', 'other'] as const) {
      if (id === key) return { list: t(`queue.${key}`), pos: 1 };
      const i = lists[key].indexOf(id as Id);
      if (i >= 0) return { list: t(`queue.${key}`), pos: i + 1 };
    }
    return null;
  });
  const orderA11y = useAnnouncements(nameOf, (id) => {
    const i = order.indexOf(id as Id);
    return i >= 0 ? { list: t('queue.order'), pos: i + 1 } : null;
  });

  // Follow the server (live events, other windows) except mid-drag.
  useEffect(() => {
    if (dragging.current) return;
    setLists(queueLists(endpoints));
    setOrderState(endpoints.map((e) => e.id));
  }, [endpoints]);

  const save = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      setNotice({ kind: 'ok', text: t('queue.saved') });
    } catch (err) {
      setNotice({ kind: 'error', text: err instanceof Error ? err.message : String(err) });
    }
    try {
      setEndpoints(await api.listEndpoints());
    } catch {
      // The live stream will bring the list once the server answers again.
    }
  };

  const containerOf = (id: UniqueIdentifier, l: Lists): ListId | undefined => {
    if (id === 'fast' || id === 'other') return id;
    if (l.fast.includes(id as Id)) return 'fast';
    if (l.other.includes(id as Id)) return 'other';
    return undefined;
  };

  // Moving into the other list while dragging, so the row shows where it lands.
  const onDragOver = ({ active, over }: DragOverEvent) => {
    if (!over) return;
    setLists((l) => {
      const from = containerOf(active.id, l);
      const to = containerOf(over.id, l);
      if (!from || !to || from === to) return l;
      const id = active.id as Id;
      const target = l[to];
      const overIndex = target.indexOf(over.id as Id);
      // Dropped on the lower half of a row: land after it, not before.
      const dragged = active.rect.current.translated;
      const below = dragged && dragged.top + dragged.height / 2 > over.rect.top + over.rect.height / 2;
      const at = overIndex < 0 ? target.length : overIndex + (below ? 1 : 0);
      return {
        ...l,
        [from]: l[from].filter((x) => x !== id),
        [to]: [...target.slice(0, at), id, ...target.slice(at)],
      } as Lists;
    });
  };

  const onDragEnd = ({ active, over }: DragEndEvent) => {
    dragging.current = false;
    let next = lists;
    if (over) {
      const from = containerOf(active.id, lists);
      const to = containerOf(over.id, lists);
      if (from && from === to) {
        const a = lists[from].indexOf(active.id as Id);
        const b = lists[to].indexOf(over.id as Id);
        if (b >= 0 && a !== b) next = { ...lists, [to]: arrayMove(lists[to], a, b) };
      }
    }
    setLists(next);
    const prev = before.current;
    if (next.fast.join() !== prev.fast.join()) {
      void save(() => api.setFastQueue(next.fast));
    } else if (next.other.join() !== prev.other.join()) {
      void save(() => api.setOrder(mergeOrder(order, next.other)));
    }
  };

  const onOrderEnd = ({ active, over }: DragEndEvent) => {
    if (!over || active.id === over.id) return;
    const next = arrayMove(order, order.indexOf(active.id as Id), order.indexOf(over.id as Id));
    setOrderState(next);
    void save(() => api.setOrder(next));
  };

  const rows = (ids: Id[]) =>
    ids.flatMap((id, i) => {
      const ep = byId.get(id);
      return ep ? [<SortableRow key={id} endpoint={ep} status={statusOf(id)} index={i} />] : [];
    });

  return (
    <section aria-labelledby="queue-heading">
      <h2 id="queue-heading">{t('queue.heading')}</h2>
      <p className="muted">{t('queue.intro')}</p>
      {endpoints.length === 0 && <p className="empty" data-testid="queue-empty">{t('queue.noEndpoints')}</p>}
      {notice && (
        <p className={notice.kind === 'ok' ? 'notice' : 'error'} role="status" data-testid="queue-notice">
          {notice.text}
        </p>
      )}
      <DndContext
        sensors={sensors}
        accessibility={queueA11y}
        // Rows move between lists mid-drag; re-measure so drop targets match the layout.
        measuring={{ droppable: { strategy: MeasuringStrategy.Always } }}
        collisionDetection={closestCorners}
        onDragStart={() => {
          dragging.current = true;
          before.current = lists;
        }}
        onDragOver={onDragOver}
        onDragEnd={onDragEnd}
        onDragCancel={() => {
          dragging.current = false;
          setLists(before.current);
        }}
      >
        <div className="queue-cols">
          <SortableContext id="fast" items={lists.fast} strategy={verticalListSortingStrategy}>
            <DropList id="fast" testId="fast-queue" label={t('queue.fast')} empty={t('queue.emptyFast')}>
              {rows(lists.fast)}
            </DropList>
          </SortableContext>
          <SortableContext id="other" items={lists.other} strategy={verticalListSortingStrategy}>
            <DropList id="other" testId="other-queue" label={t('queue.other')} empty={t('queue.emptyOther')}>
              {rows(lists.other)}
            </DropList>
          </SortableContext>
        </div>
      </DndContext>

      <h2 id="order-heading">{t('queue.order')}</h2>
      <p className="muted">{t('queue.orderIntro')}</p>
      <DndContext sensors={orderSensors} accessibility={orderA11y} collisionDetection={closestCorners} onDragEnd={onOrderEnd}>
        <SortableContext id="order" items={order} strategy={verticalListSortingStrategy}>
          <ul className="queue-list" data-testid="full-order" aria-labelledby="order-heading">
            {rows(order)}
          </ul>
        </SortableContext>
      </DndContext>
    </section>
  );
}
