import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../api/client';
import { FakeEventSource, stubEventSource } from '../test/utils';
import { useLiveEvents } from './useLiveEvents';

describe('useLiveEvents', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('delivers typed events, reopens a stream the server closed, and reports the reconnect', () => {
    const es = stubEventSource();
    const onHealth = vi.fn();
    const onLog = vi.fn();
    const onInfo = vi.fn();
    const onReconnect = vi.fn();
    const { unmount } = renderHook(() => useLiveEvents(new ApiClient(), { onHealth, onLog, onInfo, onReconnect }));
    expect(es.instances).toHaveLength(1);
    expect(es.instances[0].url).toBe('/api/events');

    act(() => {
      es.instances[0].open();
      es.instances[0].emit('health', [{ id: 'e1' }]);
      es.instances[0].emit('log', { id: 1 });
      es.instances[0].emit('info', { paused: true, paused_until: null });
    });
    expect(onInfo).toHaveBeenCalledWith({ paused: true, paused_until: null });
    expect(onHealth).toHaveBeenCalledWith([{ id: 'e1' }]);
    expect(onLog).toHaveBeenCalledWith({ id: 1 });
    expect(onReconnect).not.toHaveBeenCalled();

    // The server went away and answered an error: the browser gives up, we retry.
    act(() => {
      es.instances[0].readyState = FakeEventSource.CLOSED;
      es.instances[0].dispatch('error');
    });
    expect(es.instances).toHaveLength(1);
    act(() => vi.advanceTimersByTime(1000));
    expect(es.instances).toHaveLength(2);
    act(() => es.instances[1].open());
    expect(onReconnect).toHaveBeenCalledTimes(1);

    unmount();
    expect(es.instances[1].readyState).toBe(FakeEventSource.CLOSED);
    act(() => vi.advanceTimersByTime(5000));
    expect(es.instances).toHaveLength(2);
  });
});
