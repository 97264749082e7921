import { useTranslation } from 'react-i18next';
import type { Protocol } from '../api/types';

interface Props {
  protocol: Protocol;
  /** The endpoint's model patterns (empty = every model). */
  models: string[];
  /** The patterns its model_map maps from. */
  mapKeys: string[];
}

/**
 * Which clients an endpoint serves, in words: its own protocol's for the models its `models` match (all when
 * empty), the other two protocols', translated, only for the models its `models` or `model_map` name
 * (docs/BEHAVIOUR.md#candidates).
 */
export function EndpointServes({ protocol, models, mapKeys }: Props) {
  const { t } = useTranslation();
  const named = [...new Set([...models, ...mapKeys])];
  const list = (xs: string[]) =>
    xs.length <= 4 ? xs.join(', ') : t('form.serves.more', { list: xs.slice(0, 3).join(', '), n: xs.length - 3 });
  const own = t(`form.serves.own.${protocol}`);
  const others = t(`form.serves.others.${protocol}`);
  return (
    <p className="serves muted" data-testid="endpoint-serves">
      {models.length ? t('form.serves.ownSome', { clients: own, models: list(models) }) : t('form.serves.ownAll', { clients: own })}{' '}
      {named.length ? t('form.serves.othersSome', { clients: others, models: list(named) }) : t('form.serves.othersNone', { clients: others })}
    </p>
  );
}
