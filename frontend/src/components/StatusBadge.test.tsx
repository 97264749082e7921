import { act, render, screen } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { HealthStatus } from '../api/types';
import { createI18n, type Language } from '../i18n';
import en from '../i18n/en';
import zhCN from '../i18n/zh-CN';
import { baseRoutes, endpoint, health, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { Countdown } from './Countdown';
import { EndpointsPanel } from './EndpointsPanel';
import { StatusBadge } from './StatusBadge';

function keysOf(o: object, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) => (typeof v === 'object' ? keysOf(v, `${prefix}${k}.`) : [`${prefix}${k}`]));
}

describe('status badge', () => {
  const cases: Array<{ lang: Language; status: HealthStatus; want: string }> = [
    { lang: 'en', status: 'healthy', want: 'healthy' },
    { lang: 'en', status: 'unhealthy', want: 'unhealthy' },
    { lang: 'en', status: 'recovering', want: 'recovering' },
    { lang: 'en', status: 'disabled', want: 'disabled' },
    { lang: 'zh-CN', status: 'healthy', want: '健康' },
    { lang: 'zh-CN', status: 'unhealthy', want: '熔断' },
    { lang: 'zh-CN', status: 'recovering', want: '恢复中' },
    { lang: 'zh-CN', status: 'disabled', want: '已停用' },
  ];
  for (const c of cases) {
    it(`says "${c.want}" for ${c.status} in ${c.lang}`, () => {
      render(
        <I18nextProvider i18n={createI18n(c.lang)}>
          <StatusBadge status={c.status} />
        </I18nextProvider>,
      );
      expect(screen.getByTestId('status-badge')).toHaveTextContent(c.want);
    });
  }

  it('zh-CN has exactly the keys of en', () => {
    expect(keysOf(zhCN).sort()).toEqual(keysOf(en).sort());
  });
});

describe('countdown to half-open', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(new Date('2026-11-30T08:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts down from retry_in_ms and says when it is due', () => {
    render(
      <I18nextProvider i18n={createI18n('en')}>
        <Countdown retryInMs={65_000} receivedAt={Date.now()} />
      </I18nextProvider>,
    );
    expect(screen.getByRole('timer')).toHaveTextContent('half-open in 1 min 5 s');
    act(() => vi.advanceTimersByTime(6_000));
    expect(screen.getByRole('timer')).toHaveTextContent('half-open in 59 s');
    act(() => vi.advanceTimersByTime(60_000));
    expect(screen.getByRole('timer')).toHaveTextContent('half-open on next request');
  });

  it('stops ticking once due, and while the page is hidden', () => {
    render(
      <I18nextProvider i18n={createI18n('en')}>
        <Countdown retryInMs={3_000} receivedAt={Date.now()} />
      </I18nextProvider>,
    );
    expect(vi.getTimerCount()).toBe(1);
    const hidden = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    act(() => document.dispatchEvent(new Event('visibilitychange')));
    expect(vi.getTimerCount()).toBe(0);
    act(() => vi.advanceTimersByTime(1_000));
    hidden.mockReturnValue('visible');
    act(() => document.dispatchEvent(new Event('visibilitychange')));
    expect(screen.getByRole('timer')).toHaveTextContent('half-open in 2 s');
    expect(vi.getTimerCount()).toBe(1);
    act(() => vi.advanceTimersByTime(2_500));
    expect(screen.getByRole('timer')).toHaveTextContent('half-open on next request');
    expect(vi.getTimerCount()).toBe(0);
    hidden.mockRestore();
  });

  it('counts in Chinese too', () => {
    render(
      <I18nextProvider i18n={createI18n('zh-CN')}>
        <Countdown retryInMs={42_000} receivedAt={Date.now()} />
      </I18nextProvider>,
    );
    expect(screen.getByRole('timer')).toHaveTextContent('42 秒 后半开');
  });
});

describe('endpoint card health', () => {
  it('shows the open reason with a countdown, and follows live health events', async () => {
    const es = stubEventSource();
    const ep = endpoint({ id: 1, name: 'relay' });
    stubFetch(baseRoutes([ep], [health({ id: 1, name: 'relay', status: 'unhealthy', state: 'open', reason: 'rate_limited', retry_in_ms: 30_000, consecutive_failures: 2, last_error: '429 Too Many Requests' })]));
    renderApp(<EndpointsPanel />, 'en');
    const card = await screen.findByTestId('endpoint-card-relay');
    await screen.findByText('rate limited');
    expect(card.querySelector('[data-testid=status-badge]')).toHaveTextContent('unhealthy');
    expect(screen.getByRole('timer')).toHaveTextContent(/half-open in (29|30) s/);
    expect(card).toHaveTextContent('429 Too Many Requests');

    act(() => {
      es.instances[0].open();
      es.instances[0].emit('health', [health({ id: 1, name: 'relay' })]);
    });
    expect(card.querySelector('[data-testid=status-badge]')).toHaveTextContent('healthy');
    expect(screen.queryByRole('timer')).toBeNull();
  });
});
