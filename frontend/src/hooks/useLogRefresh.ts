import { useEffect } from 'react';
import { useAppData } from './useAppData';

/**
 * Calls `reload` after new request-log rows arrive on the live stream: once, `delayMs` after the first row of a
 * burst, so steady traffic reloads at most that often. No timer runs while no traffic arrives.
 */
export function useLogRefresh(reload: () => void, delayMs = 1000): void {
  const { subscribeLogs } = useAppData();
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = subscribeLogs(() => {
      timer ??= setTimeout(() => {
        timer = undefined;
        reload();
      }, delayMs);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }, [subscribeLogs, reload, delayMs]);
}
