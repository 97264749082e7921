import { useTranslation } from 'react-i18next';
import type { Explanation } from '../api/types';

/** The rule a dry run matched, and each earlier rule with why it did not (the server's words). */
export function RouteRules({ result }: { result: Explanation }) {
  const { t } = useTranslation();
  const steps = result.rules ?? [];
  if (!result.rule && steps.length === 0) return null;
  return (
    <div data-testid="route-rules-box">
      <p data-testid="route-rule">
        {result.rule ? t('routing.ruleMatched', { name: result.rule }) : t('routing.noRule')}
      </p>
      {steps.length > 0 && (
        <ol className="plain" data-testid="route-rules">
          {steps.map((s) => (
            <li key={s.name} className={s.matched ? 'notice' : undefined}>
              <strong>{s.name}</strong>{' '}
              <span className="muted">{s.matched ? t('routing.ruleMatches') : t('routing.ruleSkipped', { why: s.why })}</span>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
