import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatDuration } from '../format';

interface Props {
  /** ms until HalfOpen as the server reported it at `receivedAt`. */
  retryInMs: number;
  receivedAt: number;
}

/** Live countdown to HalfOpen; ticks locally between server health updates. */
export function Countdown({ retryInMs, receivedAt }: Props) {
  const { t } = useTranslation();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(id);
  }, []);
  const left = retryInMs - (now - receivedAt);
  return (
    <span className="countdown" data-testid="countdown" role="timer">
      {left > 0 ? t('countdown.halfOpenIn', { time: formatDuration(t, left) }) : t('countdown.halfOpenDue')}
    </span>
  );
}
