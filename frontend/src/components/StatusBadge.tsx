import { useTranslation } from 'react-i18next';
import { CircleCheck, CircleX, PowerOff, RefreshCw, type LucideIcon } from 'lucide-react';
import type { HealthStatus } from '../api/types';

const ICONS: Record<HealthStatus, LucideIcon> = {
  healthy: CircleCheck,
  unhealthy: CircleX,
  recovering: RefreshCw,
  disabled: PowerOff,
};

/** The health word; colour only repeats it (docs/BEHAVIOUR.md#health). */
export function StatusBadge({ status }: { status: HealthStatus }) {
  const { t } = useTranslation();
  const Icon = ICONS[status] ?? CircleX;
  return (
    <span className={`badge badge-${status}`} data-testid="status-badge" data-status={status}>
      <Icon />
      {t(`status.${status}`)}
    </span>
  );
}
