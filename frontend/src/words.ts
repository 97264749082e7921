// The API's closed sets of words (protocols, breaker states, exclusion reasons, translations) put into the
// reader's language. Shared by the log timeline, the dashboard and the routing view, so a reason reads the same
// everywhere.
import type { TFunction } from 'i18next';
import type {
  Adjustment, AttemptOutcome, BreakerCause, BreakerReason, BreakerState, ErrorType, Excluded, HedgePart, Protocol, StreamEnd, Strategy,
  Translation,
} from './api/types';

/**
 * The catalogs of the API's word types, by the generated type whose words each labels: a catalog in i18n/en.ts
 * `satisfies` a Record of its type, and zh-CN.ts has en's keys, so a word without a label in a language fails tsc.
 */
interface Catalogs {
  protocols: Protocol;
  clients: Protocol;
  reason: BreakerReason;
  'logs.state': BreakerState;
  'logs.outcome': AttemptOutcome;
  'logs.errorType': ErrorType;
  'logs.streamEnd': StreamEnd;
  'logs.adjusted': Adjustment;
  'logs.hedge': HedgePart;
  'history.cause': BreakerCause;
  'settings.strategies': Strategy;
}

/** A word of one of the API's closed sets in the reader's language; one this UI does not know yet, as it came. */
export function word<G extends keyof Catalogs>(t: TFunction, group: G, value: Catalogs[G]): string {
  return t(`${group}.${value}`, { defaultValue: value });
}

/** A protocol's name: "OpenAI Chat" for openai-chat. */
export function protocolLabel(t: TFunction, p: Protocol): string {
  return word(t, 'protocols', p);
}

/** The clients that speak a protocol: "Claude Code / Anthropic" for anthropic. */
export function clientLabel(t: TFunction, p: Protocol): string {
  return word(t, 'clients', p);
}

/** A translation the API names `anthropic→openai-chat`, as "Anthropic → OpenAI Chat". */
export function translationLabel(t: TFunction, name: Translation): string {
  return name
    .split('→')
    .map((p) => protocolLabel(t, p.trim() as Protocol))
    .join(' → ');
}

/**
 * Why routing left an endpoint out (docs/BEHAVIOUR.md#candidates): its models, its protocol (another one, the
 * model not named; `protocol` is the endpoint's, when the UI still knows it), or its breaker's state and reason.
 */
export function excludedWhy(t: TFunction, x: Excluded, protocol?: Protocol): string {
  if (x.reason === 'model') return t('logs.exclusion.model');
  if (x.reason === 'not_fast') return t('logs.exclusion.notFast');
  if (x.reason === 'disabled') return t('logs.exclusion.disabled');
  if (x.reason === 'keys') return t('logs.exclusion.keys');
  if (x.reason === 'protocol') {
    return protocol ? t('logs.exclusion.protocol', { protocol: protocolLabel(t, protocol) }) : t('logs.exclusion.protocolUnknown');
  }
  const state = x.state ? word(t, 'logs.state', x.state) : t('logs.exclusion.breaker');
  const why = [x.breaker_reason && word(t, 'reason', x.breaker_reason), x.probe_in_flight && t('logs.probeInFlight')].filter(Boolean);
  return why.length ? t('logs.stateWhy', { state, why: why.join(t('logs.listSep')) }) : state;
}
