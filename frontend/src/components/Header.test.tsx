import { act, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { UpdateStatus } from '../api/types';
import type { Language } from '../i18n';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { Header } from './Header';

const status = (over: Partial<UpdateStatus>): UpdateStatus => ({
  enabled: true, checked_at: '2026-12-01T08:00:00Z', current: 'v1.3.0', latest: 'v1.4.0', available: true,
  url: 'https://github.com/ccmesh/ccmesh/releases/tag/v1.4.0', notes: 'Faster failover', error: '', ...over,
});

describe('header update line', () => {
  const cases: Array<{ name: string; lang: Language; update: UpdateStatus; text: string | null; href: string | null }> = [
    { name: 'a newer release links to its page', lang: 'en', update: status({}), text: 'Update available: v1.4.0 — Faster failover', href: 'https://github.com/ccmesh/ccmesh/releases/tag/v1.4.0' },
    { name: 'in Chinese', lang: 'zh-CN', update: status({}), text: '有可用更新：v1.4.0 — Faster failover', href: 'https://github.com/ccmesh/ccmesh/releases/tag/v1.4.0' },
    { name: 'no notes', lang: 'en', update: status({ notes: '' }), text: 'Update available: v1.4.0', href: 'https://github.com/ccmesh/ccmesh/releases/tag/v1.4.0' },
    { name: 'no page: text, no link', lang: 'en', update: status({ url: '' }), text: 'Update available: v1.4.0 — Faster failover', href: null },
    { name: 'up to date: nothing', lang: 'en', update: status({ available: false, current: 'v1.4.0' }), text: null, href: null },
    { name: 'off: nothing', lang: 'en', update: { ...status({}), enabled: false, available: false, latest: '' }, text: null, href: null },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const es = stubEventSource();
      stubFetch(baseRoutes([]));
      renderApp(<Header />, c.lang);
      await screen.findByTestId('proxy-url');
      act(() => es.instances[0].emit('update', c.update));
      const line = screen.queryByTestId('update');
      if (c.text === null) {
        expect(line).toBeNull();
        return;
      }
      expect(line).toHaveTextContent(c.text);
      if (c.href === null) {
        expect(line?.tagName).toBe('SPAN');
      } else {
        expect(line).toHaveAttribute('href', c.href);
        expect(line).toHaveAttribute('rel', 'noopener noreferrer');
      }
    });
  }

  it('goes away when a later event says there is none', async () => {
    const es = stubEventSource();
    stubFetch(baseRoutes([]));
    renderApp(<Header />);
    await screen.findByTestId('proxy-url');
    act(() => es.instances[0].emit('update', status({})));
    expect(screen.getByTestId('update')).toBeInTheDocument();
    act(() => es.instances[0].emit('update', status({ enabled: false, available: false })));
    expect(screen.queryByTestId('update')).toBeNull();
  });
});
