import { useTranslation } from 'react-i18next';
import type { HealthStatus } from '../api/types';

/** The health word; colour only repeats it (SPEC §12, issue 5). */
export function StatusBadge({ status }: { status: HealthStatus }) {
  const { t } = useTranslation();
  return (
    <span className={`badge badge-${status}`} data-testid="status-badge" data-status={status}>
      {t(`status.${status}`)}
    </span>
  );
}
