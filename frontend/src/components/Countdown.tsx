import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDuration } from '../format';

interface Props {
  /** ms until HalfOpen as the server reported it at `receivedAt`. */
  retryInMs: number;
  receivedAt: number;
}

/**
 * Live countdown to HalfOpen; ticks locally between server health updates,
 * only while the page is visible and the time is not yet up, so that a
 * hidden window (the desktop app in the tray) wakes for nothing.
 */
export function Countdown({ retryInMs, receivedAt }: Props) {
  const { t } = useTranslation();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    let id: ReturnType<typeof setInterval> | undefined;
    const stop = () => {
      clearInterval(id);
      id = undefined;
    };
    const tick = () => {
      const n = Date.now();
      setNow(n);
      if (n - receivedAt >= retryInMs) stop(); // "due" does not change any more
    };
    const follow = () => {
      stop();
      if (document.visibilityState === 'hidden') return;
      tick();
      if (Date.now() - receivedAt < retryInMs) id = setInterval(tick, 250);
    };
    follow();
    document.addEventListener('visibilitychange', follow);
    return () => {
      stop();
      document.removeEventListener('visibilitychange', follow);
    };
  }, [retryInMs, receivedAt]);
  const left = retryInMs - (now - receivedAt);
  return (
    <span className="countdown" data-testid="countdown" role="timer">
      {left > 0 ? t('countdown.halfOpenIn', { time: formatDuration(t, left) }) : t('countdown.halfOpenDue')}
    </span>
  );
}
