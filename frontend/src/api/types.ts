// Types of the admin API (docs/BEHAVIOUR.md#admin-api). Field names mirror the JSON exactly
// (snake_case, durations in *_ms) so no mapping layer can drift.

/** Database ids are integers in the API. */
export type Id = number;

export type Protocol = 'anthropic' | 'openai-chat' | 'openai-responses';
export type AuthMode = 'auto' | 'x-api-key' | 'bearer';
export type HealthStatus = 'healthy' | 'unhealthy' | 'recovering' | 'disabled';
export type BreakerState = 'closed' | 'open' | 'half_open';
export type OpenReason = '' | 'broken' | 'rate_limited' | 'quota_exhausted' | 'manual';

export interface BreakerParams {
  failure_threshold?: number;
  success_threshold?: number;
  timeout_ms?: number;
  error_rate_threshold?: number;
  min_requests?: number;
  rate_limit_timeout_ms?: number;
  max_rate_limit_timeout_ms?: number;
  quota_timeout_ms?: number;
}

export interface BreakerOverrides extends BreakerParams {
  disabled?: boolean;
}

export interface Endpoint {
  id: Id;
  name: string;
  base_url: string;
  protocol: Protocol;
  auth: AuthMode;
  models: string[];
  model_map: Record<string, string>;
  enabled: boolean;
  fast: boolean;
  fast_sort_order: number;
  sort_order: number;
  breaker_overrides: BreakerOverrides;
  api_key_masked: string;
  has_key: boolean;
  created_at: string;
  updated_at: string;
}

/** Body of POST /api/endpoints and PUT /api/endpoints/{id} (PUT: any subset). */
export interface EndpointInput {
  name?: string;
  base_url?: string;
  protocol?: Protocol;
  auth?: AuthMode;
  api_key?: string;
  models?: string[];
  model_map?: Record<string, string>;
  enabled?: boolean;
  fast?: boolean;
  breaker_overrides?: BreakerOverrides;
}

export interface TestResult {
  ok: boolean;
  status: number;
  latency_ms: number;
  message: string;
  at: string;
}

export interface Health {
  id: Id;
  name: string;
  status: HealthStatus;
  state: BreakerState;
  reason: OpenReason;
  consecutive_failures: number;
  success_rate: number | null;
  p50_ms: number | null;
  last_error: string;
  last_failure_at: string | null;
  retry_in_ms: number | null;
  last_test?: TestResult | null;
}

export interface Info {
  version: string;
  listen: string;
  proxy_url: string;
  data_dir: string;
  paused: boolean;
  headless: boolean;
}

export interface LogRow {
  id: Id;
  at: string;
  protocol: string;
  path: string;
  model_asked: string;
  model_forwarded: string;
  explicit: boolean;
  endpoint_id: Id;
  endpoint: string;
  status: number;
  attempts: number;
  duration_ms: number;
  ttfb_ms: number | null;
  stream: boolean;
  stream_end: string;
  tokens_in: number | null;
  tokens_out: number | null;
  sent_upstream: boolean;
  client_gone: boolean;
  error: string;
}

export interface RoutingCandidate {
  endpoint_id: Id;
  endpoint: string;
  state: string;
}

export interface RoutingExcluded {
  endpoint_id: Id;
  endpoint: string;
  reason: string;
}

export interface Attempt {
  endpoint_id: Id;
  endpoint: string;
  outcome: string;
  error_type: string;
  status: number;
  message: string;
  body_head: string;
  started_at: string;
  duration_ms: number;
  breaker_counted: boolean;
}

export interface LogDetail extends LogRow {
  routing: { candidates: RoutingCandidate[] | null; excluded: RoutingExcluded[] | null } | null;
  history: Attempt[] | null;
}

export interface LogPage {
  items: LogRow[];
  next_before: number | null;
}

export interface LogQuery {
  limit?: number;
  before?: number | null;
  endpoint?: string;
  status?: string;
  model?: string;
}

export interface BreakerEvent {
  id: Id;
  at: string;
  endpoint_id: Id;
  endpoint: string;
  cause: string;
  from: string;
  to: string;
  reason: string;
}

export interface StatPoint {
  minute: string;
  endpoint_id: Id;
  endpoint: string;
  requests: number;
  errors: number;
}

export type Strategy = 'sticky' | 'priority' | 'round-robin';

export interface Settings {
  /** Address for the next start when --listen is not given; "" = default. */
  listen: string;
  strategy: Strategy;
  breaker: { claude: BreakerParams; openai: BreakerParams };
  first_byte_timeout_ms: number;
  idle_timeout_ms: number;
  max_body_bytes: number;
  client_token: string;
  log_retention_rows: number;
  log_retention_days: number;
  notifications: boolean;
  language: string;
}

export interface ClaudeCode {
  base_url: string;
  exports: string;
  settings_path: string;
  current: string;
  proposed: string;
}

export interface ClaudeCodeApplied {
  settings_path: string;
  backup_path: string;
}
