import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { debounce } from '../../src/lib/debounce';

describe('debounce', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs once with the last arguments after the quiet period', () => {
    const fn = vi.fn();
    const d = debounce(fn, 250);
    d('a');
    vi.advanceTimersByTime(100);
    d('ab');
    vi.advanceTimersByTime(249);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledOnce();
    expect(fn).toHaveBeenCalledWith('ab');
  });

  it('can be cancelled or flushed', () => {
    const fn = vi.fn();
    const d = debounce(fn, 250);
    d(1);
    d.cancel();
    vi.advanceTimersByTime(1000);
    expect(fn).not.toHaveBeenCalled();
    d(2);
    d.flush();
    expect(fn).toHaveBeenCalledWith(2);
    d.flush();
    expect(fn).toHaveBeenCalledTimes(1);
  });
});
