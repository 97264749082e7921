// The one subscription to /api/events. EventSource reconnects by itself after
// a dropped connection; when the server answers with an error instead (while
// it restarts) the browser gives up, so we open a fresh stream after a pause.
import { useEffect, useLayoutEffect, useRef } from 'react';
import type { ApiClient } from '../api/client';
import type { Endpoint, Health, Info, LogRow, Settings, UpdateStatus } from '../api/types';

export interface LiveHandlers {
  onHealth?: (h: Health[]) => void;
  onEndpoints?: (e: Endpoint[]) => void;
  onLog?: (row: LogRow) => void;
  onSettings?: (s: Settings) => void;
  /** The instance's info changed: paused or resumed (from the tray too), the log's drop counters. */
  onInfo?: (i: Info) => void;
  /** What the update check found: sent on connect, then after each check and when it is turned on or off. */
  onUpdate?: (u: UpdateStatus) => void;
  /** The stream came back after a break: lists may have missed events. */
  onReconnect?: () => void;
  onConnectionChange?: (connected: boolean) => void;
}

const RETRY_MS = 1000;
const MAX_RETRY_MS = 10_000;

function parse<T>(ev: MessageEvent): T | undefined {
  try {
    return JSON.parse(ev.data as string) as T;
  } catch {
    return undefined;
  }
}

export function useLiveEvents(api: ApiClient, handlers: LiveHandlers): void {
  // Handlers live in a ref so a new closure each render does not resubscribe.
  // The ref is updated on commit, before the subscription effect below runs.
  const ref = useRef(handlers);
  useLayoutEffect(() => {
    ref.current = handlers;
  });

  useEffect(() => {
    let source: EventSource | null = null;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let everOpened = false;
    let broken = false;
    let stopped = false;
    let delay = RETRY_MS;

    const connect = () => {
      source = api.events();
      source.addEventListener('open', () => {
        ref.current.onConnectionChange?.(true);
        if (everOpened && broken) ref.current.onReconnect?.();
        everOpened = true;
        broken = false;
        delay = RETRY_MS;
      });
      source.addEventListener('error', () => {
        broken = true;
        ref.current.onConnectionChange?.(false);
        if (source && source.readyState === EventSource.CLOSED && !stopped) {
          source.close();
          retry = setTimeout(connect, delay);
          delay = Math.min(delay * 2, MAX_RETRY_MS); // a server that keeps refusing (401) is not hammered
        }
      });
      source.addEventListener('health', (ev) => {
        const v = parse<Health[]>(ev as MessageEvent);
        if (v) ref.current.onHealth?.(v);
      });
      source.addEventListener('endpoints', (ev) => {
        const v = parse<Endpoint[]>(ev as MessageEvent);
        if (v) ref.current.onEndpoints?.(v);
      });
      source.addEventListener('log', (ev) => {
        const v = parse<LogRow>(ev as MessageEvent);
        if (v) ref.current.onLog?.(v);
      });
      source.addEventListener('settings', (ev) => {
        const v = parse<Settings>(ev as MessageEvent);
        if (v) ref.current.onSettings?.(v);
      });
      source.addEventListener('info', (ev) => {
        const v = parse<Info>(ev as MessageEvent);
        if (v) ref.current.onInfo?.(v);
      });
      source.addEventListener('update', (ev) => {
        const v = parse<UpdateStatus>(ev as MessageEvent);
        if (v) ref.current.onUpdate?.(v);
      });
    };

    connect();
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      source?.close();
    };
  }, [api]);
}
