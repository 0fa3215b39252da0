import { describe, expect, it } from 'vitest';
import { formatBytes, formatDateTime, formatDuration, formatEta, formatPercent, formatTimestamp } from '../../src/lib/format';
import { baseName, exportName, stem } from '../../src/lib/paths';

describe('durations and timestamps', () => {
  it('formats durations', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(7_400)).toBe('0:07');
    expect(formatDuration(205_000)).toBe('3:25');
    expect(formatDuration(3_723_000)).toBe('1:02:03');
    expect(formatDuration(-5)).toBe('0:00');
  });

  it('formats transcript timestamps, flooring like a player', () => {
    expect(formatTimestamp(0)).toBe('[00:00]');
    expect(formatTimestamp(59_900)).toBe('[00:59]');
    expect(formatTimestamp(61_000)).toBe('[01:01]');
    expect(formatTimestamp(3_723_000)).toBe('[1:02:03]');
  });

  it('formats percentages', () => {
    expect(formatPercent(0.424)).toBe('42%');
    expect(formatPercent(1.2)).toBe('100%');
    expect(formatPercent(null)).toBe('');
    expect(formatEta(7.2)).toBe('8 s left');
    expect(formatEta(185)).toBe('3 min left');
    expect(formatEta(3900)).toBe('1 h 5 min left');
    expect(formatEta(null)).toBe('');
  });
});

describe('formatBytes', () => {
  it('uses decimal units like file managers', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1_500)).toBe('1.5 KB');
    expect(formatBytes(142_000_000)).toBe('142 MB');
    expect(formatBytes(1_620_000_000)).toBe('1.6 GB');
    expect(formatBytes(-1)).toBe('—');
  });
});

describe('formatDateTime', () => {
  const now = new Date(2025, 2, 10, 15, 0);
  it('says today and yesterday', () => {
    expect(formatDateTime(new Date(2025, 2, 10, 9, 5).getTime(), now)).toMatch(/^Today /);
    expect(formatDateTime(new Date(2025, 2, 9, 23, 59).getTime(), now)).toMatch(/^Yesterday /);
    expect(formatDateTime(new Date(2024, 11, 1, 8, 0).getTime(), now)).toMatch(/2024/);
  });
});

describe('paths', () => {
  it('takes names and stems from either separator', () => {
    expect(baseName('/home/a/talk.final.mp3')).toBe('talk.final.mp3');
    expect(baseName('C:\\Users\\a\\meeting.m4a')).toBe('meeting.m4a');
    expect(stem('/x/talk.final.mp3')).toBe('talk.final');
    expect(stem('/x/.hidden')).toBe('.hidden');
    expect(stem('/x/noext')).toBe('noext');
    expect(exportName('meeting.m4a', 'srt')).toBe('meeting.srt');
  });
});
