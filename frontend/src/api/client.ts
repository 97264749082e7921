// The one typed client of the admin API. Components reach the server only
// through this module (docs/ARCHITECTURE.md: `frontend/`); tests stub `fetch` underneath it.
import type {
  BreakerEvent,
  CaptureReply,
  ClaudeCode,
  ClaudeCodeApplied,
  Codex,
  CodexApplied,
  GeminiCLI,
  GeminiCLIApplied,
  CurlReply,
  Endpoint,
  EndpointInput,
  Explanation,
  ExportRequest,
  FetchModelsReply,
  BalanceReply,
  BalancesReply,
  BalanceTemplatesReply,
  Health,
  Id,
  ImportReport,
  Info,
  LogDetail,
  LogPage,
  LogQuery,
  PresetsReply,
  DroppableReply,
  PriceRow,
  PricesReply,
  Protocol,
  ResendInput,
  ResendReply,
  Settings,
  SettingsPatch,
  SettingsReply,
  StatsReply,
  SyncInput,
  SyncResult,
  SyncSettings,
  TestResult,
  UpdateStatus,
} from './types';
import { routeQuery, type RouteSample } from '../routing';
import { statsQueryString, type StatsQuery } from '../stats';

/** An error answered by the API: {"error":{"code","message","field"}}. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string;

  constructor(status: number, code: string, message: string, field = '') {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
  }

  get unauthorized(): boolean {
    return this.status === 401;
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

async function parseError(res: Response): Promise<ApiError> {
  let code = `http_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  let field = '';
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; field?: string } };
    if (body?.error) {
      code = body.error.code || code;
      message = body.error.message || message;
      field = body.error.field || '';
    }
  } catch {
    // Not JSON (a proxy page, an empty body): keep the HTTP status text.
  }
  return new ApiError(res.status, code, message, field);
}

/** Extra request headers, and the error statuses whose body is an answer rather than an ApiError. */
interface SendExtra {
  headers?: Record<string, string>;
  answered?: number[];
}

export interface ApiClientOptions {
  /** Called with every 401 so the shell can show the "open the start-up link" notice. */
  onUnauthorized?: () => void;
}

export class ApiClient {
  private readonly onUnauthorized?: () => void;

  constructor(opts: ApiClientOptions = {}) {
    this.onUnauthorized = opts.onUnauthorized;
  }

  /**
   * Sends one request with the admin cookie; a non-2xx answer is thrown as an ApiError unless `extra.answered`
   * lists its status. A Blob body goes as it is (a file), anything else as JSON.
   */
  private async send(method: Method, path: string, body?: unknown, accept = 'application/json', extra: SendExtra = {}): Promise<Response> {
    const init: RequestInit = {
      method,
      credentials: 'same-origin',
      headers: { Accept: accept, ...extra.headers },
    };
    if (body instanceof Blob) {
      init.headers = { ...init.headers, 'Content-Type': 'application/octet-stream' };
      init.body = body;
    } else if (body !== undefined) {
      init.headers = { ...init.headers, 'Content-Type': 'application/json' };
      init.body = JSON.stringify(body);
    }
    // fetch is looked up per call so tests can stub it at this boundary.
    const res = await globalThis.fetch(path, init);
    if (!res.ok && !extra.answered?.includes(res.status)) {
      const err = await parseError(res);
      if (err.unauthorized) this.onUnauthorized?.();
      throw err;
    }
    return res;
  }

  private async call<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const res = await this.send(method, path, body);
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  info(): Promise<Info> {
    return this.call('GET', '/api/info');
  }

  /** Pauses the proxy (/v1/ answers 503): for `minutes` (1–1440), then it resumes by itself; until resumed without. */
  pause(minutes?: number): Promise<Info> {
    return this.call('POST', '/api/pause', minutes ? { minutes } : {});
  }

  /** Ends any pause, a timed one too. */
  resume(): Promise<Info> {
    return this.call('POST', '/api/resume');
  }

  listEndpoints(): Promise<Endpoint[]> {
    return this.call('GET', '/api/endpoints');
  }

  getEndpoint(id: Id): Promise<Endpoint> {
    return this.call('GET', `/api/endpoints/${encodeURIComponent(String(id))}`);
  }

  createEndpoint(input: EndpointInput): Promise<Endpoint> {
    return this.call('POST', '/api/endpoints', input);
  }

  updateEndpoint(id: Id, patch: EndpointInput): Promise<Endpoint> {
    return this.call('PUT', `/api/endpoints/${encodeURIComponent(String(id))}`, patch);
  }

  deleteEndpoint(id: Id): Promise<void> {
    return this.call('DELETE', `/api/endpoints/${encodeURIComponent(String(id))}`);
  }

  setFastQueue(ids: Id[]): Promise<unknown> {
    return this.call('PUT', '/api/fast-queue', { ids });
  }

  setOrder(ids: Id[]): Promise<unknown> {
    return this.call('PUT', '/api/order', { ids });
  }

  forceOpen(id: Id): Promise<Health> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/force-open`);
  }

  forceClose(id: Id): Promise<Health> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/force-close`);
  }

  /** Forces one key of the endpoint's pool open or closed; answers the endpoint's health. */
  forceKey(id: Id, key: Id, open: boolean): Promise<Health> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/keys/${encodeURIComponent(String(key))}/${open ? 'force-open' : 'force-close'}`);
  }

  /** Tests one key of the endpoint's pool. */
  testKey(id: Id, key: Id): Promise<TestResult> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/test?key=${encodeURIComponent(String(key))}`);
  }

  testEndpoint(id: Id): Promise<TestResult> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/test`);
  }

  fetchModels(id: Id): Promise<FetchModelsReply> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/fetch-models`);
  }

  balance(id: Id): Promise<BalanceReply> {
    return this.call('GET', `/api/endpoints/${encodeURIComponent(String(id))}/balance`);
  }

  refreshBalance(id: Id): Promise<BalanceReply> {
    return this.call('POST', `/api/endpoints/${encodeURIComponent(String(id))}/balance`);
  }

  balances(): Promise<BalancesReply> {
    return this.call('GET', '/api/balances');
  }

  balanceTemplates(): Promise<BalanceTemplatesReply> {
    return this.call('GET', '/api/balance-templates');
  }

  health(): Promise<Health[]> {
    return this.call('GET', '/api/health');
  }

  logs(q: LogQuery = {}): Promise<LogPage> {
    const params = new URLSearchParams();
    if (q.limit) params.set('limit', String(q.limit));
    if (q.before) params.set('before', String(q.before));
    if (q.endpoint) params.set('endpoint', q.endpoint);
    if (q.status) params.set('status', q.status);
    if (q.model) params.set('model', q.model);
    const qs = params.toString();
    return this.call('GET', `/api/logs${qs ? `?${qs}` : ''}`);
  }

  logDetail(id: Id): Promise<LogDetail> {
    return this.call('GET', `/api/logs/${encodeURIComponent(String(id))}`);
  }

  /** What a request's client sent and got, when capture kept it; a 404 `no_capture` when it did not. */
  logCapture(id: Id): Promise<CaptureReply> {
    return this.call('GET', `/api/logs/${encodeURIComponent(String(id))}/capture`);
  }

  /** Sends a captured request again through the proxy; the answer names the new log row. */
  resend(id: Id, input: ResendInput = {}): Promise<ResendReply> {
    return this.call('POST', `/api/logs/${encodeURIComponent(String(id))}/resend`, input);
  }

  /** A captured request as a curl command against the proxy (the key left to $CCMESH_KEY). */
  curl(id: Id): Promise<CurlReply> {
    return this.call('GET', `/api/logs/${encodeURIComponent(String(id))}/curl`);
  }

  /** The breaker's audit trail, newest first: of one endpoint (its id), or of all. */
  breakerEvents(endpointId?: Id, limit?: number): Promise<BreakerEvent[]> {
    const params = new URLSearchParams();
    if (endpointId) params.set('endpoint', String(endpointId));
    if (limit) params.set('limit', String(limit));
    const qs = params.toString();
    return this.call('GET', `/api/breaker-events${qs ? `?${qs}` : ''}`);
  }

  /** Statistics buckets (docs/BEHAVIOUR.md#statistics); the default is the last hour in minutes per endpoint. */
  stats(q: StatsQuery = { minutes: 60 }): Promise<StatsReply> {
    const qs = statsQueryString(q);
    return this.call('GET', `/api/stats${qs ? `?${qs}` : ''}`);
  }

  /** The address of the same rows as CSV. The admin cookie authenticates it like any other call. */
  statsCsvPath(q: StatsQuery): string {
    const qs = statsQueryString(q);
    return `/api/stats.csv${qs ? `?${qs}` : ''}`;
  }

  /** The same rows as CSV, as a file to save. */
  async statsCsv(q: StatsQuery): Promise<Blob> {
    const res = await this.send('GET', this.statsCsvPath(q), undefined, 'text/csv');
    return res.blob();
  }

  /**
   * A routing dry run: which rule a sample request of this protocol and model would match (and why not the earlier
   * ones), which endpoints it would be offered to, and why not the rest.
   */
  route(protocol: Protocol, model: string, sample: RouteSample = {}): Promise<Explanation> {
    return this.call('GET', `/api/route?${routeQuery(protocol, model, sample)}`);
  }

  settings(): Promise<Settings> {
    return this.call('GET', '/api/settings');
  }

  /**
   * PUT /api/settings merges the fields given. `prices` is never sent from here, even when the caller's object
   * has it: a settings draft would otherwise put back price rows edited since it was loaded (they are saved
   * with `putPrices`). The answer may carry `warnings`: what was saved but deserves a word (a rule that can never match).
   */
  updateSettings(patch: SettingsPatch): Promise<SettingsReply> {
    const body: Partial<Settings> = { ...patch };
    delete body.prices;
    return this.call('PUT', '/api/settings', body);
  }

  /** What the opt-in update check last found (docs/BEHAVIOUR.md#update-check). */
  update(): Promise<UpdateStatus> {
    return this.call('GET', '/api/update');
  }

  /** Reads the update feed now; refused (409 update_check_off) while the check is off. */
  checkUpdate(): Promise<UpdateStatus> {
    return this.call('POST', '/api/update/check');
  }

  /** Your price rows, then the shipped ones (`shipped: true`). */
  prices(): Promise<PricesReply> {
    return this.call('GET', '/api/prices');
  }

  /** Replaces your price rows (`[]` removes them) and answers like `prices()`. */
  putPrices(rows: PriceRow[]): Promise<PricesReply> {
    return this.call('PUT', '/api/prices', { rows });
  }

  /** The providers an endpoint can start from (docs/BEHAVIOUR.md#presets). */
  presets(): Promise<PresetsReply> {
    return this.call('GET', '/api/presets');
  }

  /** The parts of a request ccmesh may leave out for an endpoint that refuses them (docs/BEHAVIOUR.md#refused-fields). */
  droppable(): Promise<DroppableReply> {
    return this.call('GET', '/api/droppable');
  }

  claudeCode(): Promise<ClaudeCode> {
    return this.call('GET', '/api/claude-code');
  }

  /** Writes the change the preview with this hash showed; a 409 when the file changed since. */
  applyClaudeCode(hash: string): Promise<ClaudeCodeApplied> {
    return this.call('POST', '/api/claude-code/apply', { hash });
  }

  /** Connect Codex: the provider block, the export line and a preview of the config.toml change. */
  codex(): Promise<Codex> {
    return this.call('GET', '/api/codex');
  }

  /** Writes the config.toml change the preview with this hash showed; a 409 when the file changed since. */
  applyCodex(hash: string): Promise<CodexApplied> {
    return this.call('POST', '/api/codex/apply', { hash });
  }

  /** Connect Gemini CLI: its two variables as shell lines, and a preview of the .env and settings.json change. */
  geminiCLI(): Promise<GeminiCLI> {
    return this.call('GET', '/api/gemini-cli');
  }

  /** Writes both files as the preview with this hash showed; a 409 when either changed since. */
  applyGeminiCLI(hash: string): Promise<GeminiCLIApplied> {
    return this.call('POST', '/api/gemini-cli/apply', { hash });
  }

  /**
   * The backup file (docs/BEHAVIOUR.md#backup-and-sync): plain JSON without keys; with keys encrypted with the
   * passphrase, which they require. The name is the one the server gives.
   */
  async exportFile(req: ExportRequest): Promise<{ blob: Blob; name: string }> {
    const res = await this.send('POST', '/api/export', req, '*/*');
    const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'ccmesh-backup';
    return { blob: await res.blob(), name };
  }

  /** What importing this file would change; nothing is changed. An encrypted file needs its passphrase. */
  previewImport(file: Blob, passphrase = ''): Promise<ImportReport> {
    return this.sendFile('/api/import/preview', file, passphrase);
  }

  /**
   * Makes the configuration the file's (endpoints it does not name are removed) and says what changed. `moveKeys`
   * confirms that stored keys a keyless file points at other hosts (the preview's `key_moves`) go along; without it
   * they are dropped.
   */
  importFile(file: Blob, passphrase = '', moveKeys = false): Promise<ImportReport> {
    return this.sendFile(moveKeys ? '/api/import?move_keys=1' : '/api/import', file, passphrase);
  }

  /** The passphrase goes in a header, never the URL, percent-encoded since header values carry no charset. */
  private async sendFile(path: string, file: Blob, passphrase: string): Promise<ImportReport> {
    const headers: Record<string, string> = passphrase ? { 'X-Ccmesh-Passphrase': encodeURIComponent(passphrase) } : {};
    const res = await this.send('POST', path, file, 'application/json', { headers });
    return (await res.json()) as ImportReport;
  }

  /** Where to sync and the last sync; the password and passphrase only as "set" flags. */
  syncSettings(): Promise<SyncSettings> {
    return this.call('GET', '/api/sync');
  }

  /** Changes the fields given; "" clears one. */
  updateSync(input: Partial<SyncInput>): Promise<SyncSettings> {
    return this.call('PUT', '/api/sync', input);
  }

  /**
   * Pushes or pulls. A conflict (409 with `conflict: true`) is answered, not thrown: it shows both sides until
   * `force` names the side that wins ("local" pushes, "remote" pulls, whichever is called).
   */
  async sync(dir: 'push' | 'pull', force?: 'local' | 'remote'): Promise<SyncResult> {
    const res = await this.send('POST', `/api/sync/${dir}`, force ? { force } : {}, 'application/json', { answered: [409] });
    const body = (await res.json()) as SyncResult & { error?: { code?: string; message?: string; field?: string } };
    if (res.status === 409 && !body.conflict) {
      throw new ApiError(409, body.error?.code || 'http_409', body.error?.message || res.statusText, body.error?.field || '');
    }
    return body;
  }

  /** Opens the server-sent event stream; the caller closes it. */
  events(): EventSource {
    return new EventSource('/api/events', { withCredentials: true });
  }
}
