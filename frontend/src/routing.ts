// Which models each endpoint serves to each client protocol, by the rule of docs/BEHAVIOUR.md#candidates and
// #routable-list. Pure: the Routing tab draws it, tests check it.
import type { Endpoint, Protocol } from './api/types';
import { Protocols } from './api/types';

/** Every protocol, in the order the UI offers them (proxy.Protocols, generated). */
export const PROTOCOLS: readonly Protocol[] = Protocols;

export type Serve =
  /** The endpoint's own protocol with no `models`: every model. */
  | { kind: 'all' }
  /** The endpoint's own protocol: the models its `models` patterns match. */
  | { kind: 'own'; models: string[] }
  /** Another protocol: only the models its `models` or `model_map` patterns name, translated. */
  | { kind: 'translated'; models: string[] }
  /** Another protocol, nothing named: never routed there. */
  | { kind: 'none' };

type Shape = Pick<Endpoint, 'protocol' | 'models' | 'model_map'>;

/** The patterns an endpoint names: its `models` and its `model_map` keys, once each, in that order. */
export function namedModels(ep: Pick<Endpoint, 'models' | 'model_map'>): string[] {
  return [...new Set([...(ep.models ?? []), ...Object.keys(ep.model_map ?? {})])];
}

/** What an endpoint serves to clients of protocol `client`. */
export function serves(ep: Shape, client: Protocol): Serve {
  if (ep.protocol === client) return ep.models?.length ? { kind: 'own', models: [...ep.models] } : { kind: 'all' };
  const named = namedModels(ep);
  return named.length ? { kind: 'translated', models: named } : { kind: 'none' };
}

export interface MatrixCell {
  serve: Serve;
  /** Left out of the protocol's routable list because other endpoints there are in the fast queue. */
  outsideFastQueue: boolean;
}

export interface MatrixRow {
  endpoint: Endpoint;
  cells: Record<Protocol, MatrixCell>;
}

/**
 * One row per enabled endpoint (list order) with what it serves to each client protocol. A protocol's routable
 * list is the endpoints that can serve it at all; when any of them is in the fast queue, only those fast ones are
 * tried, so the others are marked `outsideFastQueue` (reachable only by naming them, `@name/model`).
 */
export function servesMatrix(endpoints: readonly Endpoint[]): MatrixRow[] {
  const enabled = endpoints.filter((e) => e.enabled).sort((a, b) => a.sort_order - b.sort_order || a.id - b.id);
  const fastIn = Object.fromEntries(
    PROTOCOLS.map((p) => [p, enabled.some((e) => e.fast && serves(e, p).kind !== 'none')]),
  ) as Record<Protocol, boolean>;
  return enabled.map((endpoint) => ({
    endpoint,
    cells: Object.fromEntries(
      PROTOCOLS.map((p) => {
        const serve = serves(endpoint, p);
        return [p, { serve, outsideFastQueue: serve.kind !== 'none' && fastIn[p] && !endpoint.fast }];
      }),
    ) as Record<Protocol, MatrixCell>,
  }));
}

/** Exact model names (no `*`) the endpoints name, sorted: suggestions for the "why" box. */
export function knownModels(endpoints: readonly Endpoint[]): string[] {
  const out = new Set<string>();
  for (const e of endpoints) for (const m of namedModels(e)) if (!m.includes('*')) out.add(m);
  return [...out].sort();
}

/** What a sample request for the dry run says, as GET /api/route takes it. */
export interface RouteSample {
  agent?: 'main' | 'subagent';
  thinking?: boolean;
  input_tokens?: number;
  web_search?: boolean;
  images?: boolean;
  /** `Name: value`, one each. */
  headers?: string[];
}

/** The query string of a dry run: protocol and model, then only the sample's fields that are set. */
export function routeQuery(protocol: Protocol, model: string, s: RouteSample = {}): string {
  const q = new URLSearchParams({ protocol, model });
  if (s.agent) q.set('agent', s.agent);
  if (s.thinking) q.set('thinking', '1');
  if (s.input_tokens) q.set('input_tokens', String(s.input_tokens));
  if (s.web_search) q.set('tools', 'web_search');
  if (s.images) q.set('images', '1');
  for (const h of s.headers ?? []) {
    const i = h.indexOf(':');
    if (i > 0) q.append('header', `${h.slice(0, i).trim()}:${h.slice(i + 1).trim()}`);
  }
  return q.toString();
}
