// Test harness: real providers, `fetch` stubbed at the API client's boundary
// and a scripted EventSource (jsdom has none).
import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import { I18nextProvider } from 'react-i18next';
import { vi } from 'vitest';
import { ApiClient } from '../api/client';
import { ApiProvider } from '../api/context';
import type { Endpoint, Health, Preset, StatBucket } from '../api/types';
import { AppDataProvider } from '../hooks/useAppData';
import { createI18n, type Language } from '../i18n';
import { emptyTotals } from '../stats';

export interface Call {
  method: string;
  path: string;
  body: unknown;
}

export type Reply = { status?: number; body?: unknown };
export type Routes = Record<string, Reply | ((call: Call) => Reply)>;

/** Stubs global fetch; routes are keyed "METHOD /path" (query string ignored). */
export function stubFetch(routes: Routes): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const method = init?.method ?? 'GET';
      const path = String(input);
      const call: Call = { method, path, body: init?.body ? JSON.parse(String(init.body)) : undefined };
      calls.push(call);
      const route = routes[`${method} ${path}`] ?? routes[`${method} ${path.split('?')[0]}`];
      if (!route) return new Response(JSON.stringify({ error: { code: 'not_found', message: `no route ${method} ${path}` } }), { status: 404 });
      const r = typeof route === 'function' ? route(call) : route;
      return new Response(r.body === undefined ? null : JSON.stringify(r.body), {
        status: r.status ?? 200,
        headers: { 'Content-Type': 'application/json' },
      });
    }),
  );
  return calls;
}

/** A scripted EventSource: tests push named events into the open stream. */
export class FakeEventSource {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  static instances: FakeEventSource[] = [];
  readonly url: string;
  readyState = FakeEventSource.CONNECTING;
  private listeners = new Map<string, Set<(ev: Event) => void>>();

  constructor(url: string) {
    this.url = url;
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, fn: (ev: Event) => void) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type)!.add(fn);
  }

  removeEventListener(type: string, fn: (ev: Event) => void) {
    this.listeners.get(type)?.delete(fn);
  }

  close() {
    this.readyState = FakeEventSource.CLOSED;
  }

  open() {
    this.readyState = FakeEventSource.OPEN;
    this.listeners.get('open')?.forEach((fn) => fn(new Event('open')));
  }

  dispatch(type: string) {
    this.listeners.get(type)?.forEach((fn) => fn(new Event(type)));
  }

  emit(type: string, data: unknown) {
    const ev = new MessageEvent(type, { data: JSON.stringify(data) });
    this.listeners.get(type)?.forEach((fn) => fn(ev));
  }
}

export function stubEventSource(): typeof FakeEventSource {
  FakeEventSource.instances = [];
  vi.stubGlobal('EventSource', FakeEventSource);
  return FakeEventSource;
}

export function endpoint(over: Partial<Endpoint> & Pick<Endpoint, 'id' | 'name'>): Endpoint {
  return {
    base_url: 'https://relay.example',
    protocol: 'anthropic',
    auth: 'auto',
    models: [],
    model_map: {},
    enabled: true,
    fast: false,
    fast_sort_order: 0,
    sort_order: 0,
    breaker_overrides: {},
    price_multiplier: 1,
    hedge_after_ms: -1,
    drops: [],
    on_model_mismatch: '',
    balance: {},
    api_key_masked: '',
    has_key: false,
    proxy_url: '',
    keys: [],
    tags: [],
    weight: 1,
    created_at: '2026-11-30T08:00:00Z',
    updated_at: '2026-11-30T08:00:00Z',
    ...over,
  };
}

export function health(over: Partial<Health> & Pick<Health, 'id' | 'name'>): Health {
  return {
    status: 'healthy',
    keys: [],
    state: 'closed',
    reason: '',
    consecutive_failures: 0,
    success_rate: null,
    p50_ms: null,
    last_error: '',
    last_failure_at: null,
    retry_in_ms: 0,
    last_test: null,
    other_model_24h: 0,
    ...over,
  };
}

/** A few presets as GET /api/presets lists them (app/presets.json), Custom last. */
export const PRESETS: Preset[] = [
  {
    id: 'deepseek', name: 'DeepSeek', protocol: 'anthropic', base_url: 'https://api.deepseek.com/anthropic', auth: 'x-api-key',
    models: [], model_map: {}, key_hint: 'A DeepSeek platform key.', source: 'https://api-docs.deepseek.com/guides/anthropic_api', date: '2026-12-01',
  },
  {
    id: 'gemini', name: 'Google Gemini (OpenAI-compatible)', protocol: 'openai-chat', base_url: 'https://generativelanguage.googleapis.com/v1beta/openai',
    auth: 'bearer', models: ['gemini-2.5-pro', 'gemini-2.5-flash'], model_map: { 'claude-*': 'gemini-2.5-pro' }, key_hint: 'A Google AI Studio key.',
    source: 'https://ai.google.dev/gemini-api/docs/openai', date: '2026-12-01',
  },
  {
    id: 'custom', name: 'Custom', protocol: 'anthropic', base_url: '', auth: 'auto', models: [], model_map: {},
    key_hint: 'Any endpoint: pick its protocol and paste its base URL.', source: '', date: '2026-12-01',
  },
];

/** The routes every screen loads at start, for the given endpoints and health. */
export function baseRoutes(endpoints: Endpoint[], healths: Health[] = []): Routes {
  return {
    'GET /api/info': { body: { version: 'test', listen: '127.0.0.1:3457', proxy_url: 'http://127.0.0.1:3457', data_dir: '/tmp/x', paused: false, headless: true } },
    'GET /api/endpoints': { body: endpoints },
    'GET /api/health': { body: healths },
    'GET /api/settings': { body: { language: '' } },
    'GET /api/presets': { body: { presets: PRESETS } },
  };
}

export function renderApp(ui: ReactElement, lang: Language = 'en'): RenderResult {
  const i18n = createI18n(lang);
  return render(
    <I18nextProvider i18n={i18n}>
      <ApiProvider client={new ApiClient()}>
        <AppDataProvider>{ui}</AppDataProvider>
      </ApiProvider>
    </I18nextProvider>,
  );
}

/** A statistics bucket with every count 0 but those given. */
export const statBucket = (start: string, key: string, over: Partial<StatBucket> = {}): StatBucket => ({
  start, key, ...emptyTotals(), ...over,
});
