import { describe, expect, it } from 'vitest';
import { hasWords, liveSeparator, nextLiveText, type LiveText } from '../../src/lib/liveText';
import type { DictationEvent } from '../../src/lib/types';

const ev = (e: Record<string, unknown>) => ({ t_ms: 0, ...e }) as DictationEvent;
const started = ev({ event: 'recording_started', id: 7, audio_path: '/r/7.wav', app: 'XTerm', profile: 'X terminals (Shift+Insert)' });

describe('nextLiveText', () => {
  it('starts empty with the app and profile, then keeps settled and tentative words apart', () => {
    let live = nextLiveText(null, started);
    expect(live).toEqual({ id: 7, settled: '', tentative: '', app: 'XTerm', profile: 'X terminals (Shift+Insert)' });
    expect(hasWords(live)).toBe(false);
    live = nextLiveText(live, ev({ event: 'partial_text', id: 7, settled: 'Meet me', tentative: 'at the' }));
    expect(live).toMatchObject({ settled: 'Meet me', tentative: 'at the', app: 'XTerm' });
    // Each run sends the whole text so far: tentative words may change, settled ones grow.
    live = nextLiveText(live, ev({ event: 'partial_text', id: 7, settled: 'Meet me at the', tentative: 'station' }));
    expect(live).toMatchObject({ settled: 'Meet me at the', tentative: 'station' });
    expect(hasWords(live)).toBe(true);
  });

  it('keeps the words while transcribing and clears them when the dictation ends', () => {
    const words = nextLiveText(nextLiveText(null, started), ev({ event: 'partial_text', id: 7, settled: 'Hi', tentative: '' }));
    const stopped = nextLiveText(words, ev({ event: 'recording_stopped', id: 7, audio_ms: 900 }));
    expect(stopped).toBe(words);
    for (const end of [
      { event: 'text_delivered', id: 7, text: 'Hi.', output: 'paste', engine_ms: 5, segments: 1, raw_text: null, error: null },
      { event: 'cancelled', id: 7 },
      { event: 'error', message: 'no microphone' },
    ]) {
      expect(nextLiveText(words, ev(end))).toBeNull();
    }
  });

  it('takes words without their recording_started (a window created after it), and a new dictation replaces an old one', () => {
    const late = nextLiveText(null, ev({ event: 'partial_text', id: 3, settled: '', tentative: 'hello' }));
    expect(late).toEqual({ id: 3, settled: '', tentative: 'hello', app: null, profile: null });
    const old: LiveText = { id: 2, settled: 'old words', tentative: '', app: 'firefox', profile: null };
    expect(nextLiveText(old, ev({ event: 'partial_text', id: 3, settled: 'new', tentative: '' }))).toEqual({
      id: 3,
      settled: 'new',
      tentative: '',
      app: null,
      profile: null,
    });
    expect(nextLiveText(old, ev({ event: 'level', rms: 0.2 }))).toBe(old);
  });
});

describe('rewriting', () => {
  it('marks the dictation as with the model, keeping its words, until the text is delivered', () => {
    const words = nextLiveText(nextLiveText(null, started), ev({ event: 'partial_text', id: 7, settled: 'Hi there', tentative: '' }));
    const rewriting = nextLiveText(words, ev({ event: 'rewriting', id: 7, mode: 'formal' }));
    expect(rewriting).toEqual({ ...words, rewriting: 'formal' });
    expect(nextLiveText(rewriting, ev({ event: 'level', rms: 0 }))).toBe(rewriting);
    const delivered = ev({
      event: 'text_delivered', id: 7, text: 'Hello there.', output: 'paste', engine_ms: 5, segments: 1, raw_text: null, error: null,
      rewrite: { mode: 'formal', dictated: 'Hi there', model: 'qwen', ms: 700 },
    });
    expect(nextLiveText(rewriting, delivered)).toBeNull();
    // The next dictation starts without the mark.
    expect(nextLiveText(rewriting, ev({ event: 'recording_started', id: 8, audio_path: '/r/8.wav' }))?.rewriting).toBeUndefined();
  });

  it('marks a dictation whose words it never saw (the overlay window came later)', () => {
    expect(nextLiveText(null, ev({ event: 'rewriting', id: 4, mode: 'command' }))).toEqual({
      id: 4, settled: '', tentative: '', app: null, profile: null, rewriting: 'command',
    });
  });
});

describe('liveSeparator', () => {
  it('puts one space between the parts, only where both have words and neither brings one', () => {
    expect(liveSeparator('Meet me', 'at the')).toBe(' ');
    expect(liveSeparator('Meet me ', 'at the')).toBe('');
    expect(liveSeparator('Meet me', ' at the')).toBe('');
    expect(liveSeparator('', 'at the')).toBe('');
    expect(liveSeparator('Meet me', '')).toBe('');
  });
});
