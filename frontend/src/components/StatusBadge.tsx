import { useTranslation } from 'react-i18next';
import type { HealthStatus } from '../api/types';

/** The health word; colour only repeats it (docs/BEHAVIOUR.md#health). */
export function StatusBadge({ status }: { status: HealthStatus }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge-${status}`} data-testid="status-badge" data-status={status}>
      {t(`status.${status}`)}
    </span>
  );
}
