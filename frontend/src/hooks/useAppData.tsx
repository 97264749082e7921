// Shared state of the window: endpoints, health, settings and server info,
// loaded once and kept current by the live event stream.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { useApi } from '../api/context';
import type { Endpoint, Health, Info, LogRow, Settings, UpdateStatus } from '../api/types';
import { useLiveEvents } from './useLiveEvents';

export interface HealthSnapshot {
  items: Health[];
  /** Date.now() when each endpoint's health arrived; retry_in_ms counts from there. */
  at: Record<string, number>;
}

export interface AppData {
  info: Info | null;
  endpoints: Endpoint[];
  health: HealthSnapshot;
  settings: Settings | null;
  /** What the update check found; it comes with the event stream (null until then). */
  update: UpdateStatus | null;
  setUpdate: (u: UpdateStatus) => void;
  connected: boolean;
  loadError: string;
  refresh: () => Promise<void>;
  setEndpoints: (e: Endpoint[]) => void;
  mergeHealth: (h: Health) => void;
  setSettings: (s: Settings) => void;
  subscribeLogs: (fn: (row: LogRow) => void) => () => void;
}

const DataContext = createContext<AppData | null>(null);

export function sortByOrder(list: Endpoint[]): Endpoint[] {
  return [...list].sort((a, b) => a.sort_order - b.sort_order || a.name.localeCompare(b.name));
}

export function AppDataProvider({ children }: { children: ReactNode }) {
  const api = useApi();
  const [info, setInfo] = useState<Info | null>(null);
  const [endpoints, setEndpointsState] = useState<Endpoint[]>([]);
  const [health, setHealth] = useState<HealthSnapshot>({ items: [], at: {} });
  const [settings, setSettings] = useState<Settings | null>(null);
  const [update, setUpdate] = useState<UpdateStatus | null>(null);
  const [connected, setConnected] = useState(false);
  const [loadError, setLoadError] = useState('');
  const logListeners = useRef(new Set<(row: LogRow) => void>());

  const setEndpoints = useCallback((e: Endpoint[]) => setEndpointsState(sortByOrder(e)), []);
  const putHealth = useCallback((items: Health[]) => {
    const now = Date.now();
    setHealth({ items, at: Object.fromEntries(items.map((h) => [h.id, now])) });
  }, []);
  const mergeHealth = useCallback((h: Health) => {
    setHealth((prev) => {
      const items = prev.items.some((x) => x.id === h.id)
        ? prev.items.map((x) => (x.id === h.id ? h : x))
        : [...prev.items, h];
      return { items, at: { ...prev.at, [h.id]: Date.now() } };
    });
  }, []);

  // State is set in the promise callbacks, never synchronously in the effect that calls this.
  const refresh = useCallback(
    () =>
      Promise.all([api.info(), api.listEndpoints(), api.health(), api.settings()])
        .then(([i, e, h, s]) => {
          setInfo(i);
          setEndpoints(e);
          putHealth(h);
          setSettings(s);
          setLoadError('');
        })
        .catch((err: unknown) => setLoadError(err instanceof Error ? err.message : String(err))),
    [api, setEndpoints, putHealth],
  );

  useEffect(() => {
    void refresh();
  }, [refresh]);

  useLiveEvents(api, {
    onHealth: putHealth,
    onEndpoints: setEndpoints,
    onSettings: setSettings,
    onInfo: setInfo,
    onUpdate: setUpdate,
    onLog: (row) => logListeners.current.forEach((fn) => fn(row)),
    onReconnect: () => void refresh(),
    onConnectionChange: setConnected,
  });

  const subscribeLogs = useCallback((fn: (row: LogRow) => void) => {
    logListeners.current.add(fn);
    return () => {
      logListeners.current.delete(fn);
    };
  }, []);

  const value = useMemo<AppData>(
    () => ({
      info, endpoints, health, settings, update, setUpdate, connected, loadError,
      refresh, setEndpoints, mergeHealth, setSettings, subscribeLogs,
    }),
    [info, endpoints, health, settings, update, connected, loadError, refresh, setEndpoints, mergeHealth, subscribeLogs],
  );
  return <DataContext.Provider value={value}>{children}</DataContext.Provider>;
}

export function useAppData(): AppData {
  const v = useContext(DataContext);
  if (!v) throw new Error('useAppData: no AppDataProvider above this component');
  return v;
}
