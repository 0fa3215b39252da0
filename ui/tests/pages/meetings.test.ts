// The Meetings page: the consent line, start → live turns → pause → stop →
// the transcript in the list, a meeting cut off offered to finish, export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emit, expectPlayable, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture } from './fixture';
import type { MeetingSummary } from '../../src/lib/types';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

const DIR = '/data/meetings/2026-12-04T10-00-00';

const done: MeetingSummary = {
  dir: DIR,
  startedUnixMs: Date.now() - 3_600_000,
  durationMs: 754_000,
  unfinished: false,
  turns: [
    { speaker: 'Speaker 1', startMs: 1_000, text: 'Can you hear me?' },
    { speaker: 'You', startMs: 4_000, text: 'Loud and clear.' },
  ],
  notices: [],
};

const cutOff: MeetingSummary = {
  dir: '/data/meetings/2026-12-03T09-00-00',
  startedUnixMs: Date.now() - 86_400_000,
  durationMs: 65_000,
  unfinished: true,
  turns: [],
  notices: ['the system audio stopped (it is gone); the meeting goes on without it'],
};

describe('meetings', () => {
  it('records with a live transcript, pauses, stops, and lists the transcript', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'meetings' });
    await page.getByTestId('meeting-consent').waitFor();
    expect(await page.getByTestId('meeting-consent').textContent()).toContain('tell them');
    expect(await page.getByTestId('meetings-empty').isVisible()).toBe(true);
    await shot(page, 'meetings-idle');

    await page.getByTestId('meeting-start').click();
    await waitForCall(page, 'start_meeting');
    await page.getByTestId('meeting-stop').waitFor();
    expect(await page.getByTestId('meeting-devices').textContent()).toContain('Monitor of Speakers');

    // Both sides' levels, ten a second from the shell: two meters.
    expect(await page.getByTestId('level-you').getAttribute('data-lit')).toBe('0');
    await emit(page, 'meeting-levels', { you: 0.25, others: 0.01 });
    await page.waitForFunction(() => document.querySelector('[data-testid=level-you]')?.getAttribute('data-lit') !== '0');
    const lit = async (id: string) => Number(await page.getByTestId(id).getAttribute('data-lit'));
    expect(await lit('level-you')).toBeGreaterThan(await lit('level-others'));
    expect(await page.getByTestId('level-others').getAttribute('aria-label')).toBe("The system audio's level");
    await emit(page, 'meeting-line', { speaker: 'Others', startMs: 1_000, text: 'Can you hear me?' });
    await emit(page, 'meeting-line', { speaker: 'You', startMs: 4_000, text: 'Loud and clear.' });
    await page.getByTestId('meeting-live').waitFor();
    expect(await page.getByTestId('live-turn').allTextContents()).toEqual([
      '[00:01] Others Can you hear me?',
      '[00:04] You Loud and clear.',
    ]);
    await shot(page, 'meetings-live');

    await page.getByTestId('meeting-pause').click();
    expect((await waitForCall(page, 'pause_meeting'))[0].args).toEqual({ paused: true });
    await page.waitForFunction(() => document.querySelector('[data-testid=meeting-state]')?.textContent === 'Paused');
    await page.getByTestId('meeting-pause').click();
    expect((await waitForCall(page, 'pause_meeting', 2))[1].args).toEqual({ paused: false });

    await page.getByTestId('meeting-stop').click();
    await waitForCall(page, 'stop_meeting');
    await page.waitForFunction(() => document.querySelector('[data-testid=meeting-control]')?.getAttribute('data-state') === 'transcribing');
    // The shell finishes the transcript: idle again, and the list has it.
    await page.evaluate((m) => (window.__shell.state.meetings = [m]), done);
    await emit(page, 'meeting', { state: 'idle', dir: null, microphone: null, systemAudio: null, notice: null });
    await page.getByTestId('meeting-item').waitFor();
    await page.getByTestId('meeting-item').getByRole('button').first().click();
    const transcript = page.getByTestId('meeting-transcript');
    await transcript.waitFor();
    expect(await transcript.textContent()).toContain('Speaker 1 Can you hear me?');
    await shot(page, 'meetings-transcript');

    // Rename a speaker after the fact: the transcript (and the exports, made
    // from the kept transcript by the core) say the new name.
    expect(await page.getByTestId('speaker-rename').allTextContents()).toEqual(['Speaker 1', 'You']);
    await page.getByTestId('speaker-rename').first().click();
    await page.getByTestId('speaker-name').fill('Ann');
    await shot(page, 'meetings-rename');
    await page.getByTestId('speaker-save').click();
    expect((await waitForCall(page, 'rename_meeting_speaker'))[0].args).toEqual({ dir: DIR, from: 'Speaker 1', to: 'Ann' });
    await page.waitForFunction(() => document.querySelector('[data-testid=meeting-transcript]')?.textContent?.includes('Ann Can you hear me?'));
    expect(await page.getByTestId('speaker-rename').allTextContents()).toEqual(['Ann', 'You']);

    // The recording plays in the page (both sides mixed by the core).
    await page.getByTestId('meeting-play').click();
    expect((await waitForCall(page, 'meeting_audio'))[0].args).toEqual({ dir: DIR });
    await expectPlayable(page, 'meeting-audio-player');

    await page.getByTestId('meeting-export-srt').click();
    const [dialog] = await waitForCall(page, 'plugin:dialog|save');
    expect((dialog.args.options as { defaultPath: string }).defaultPath).toBe('meeting-2026-12-04T10-00-00.srt');
    expect((await waitForCall(page, 'export_meeting'))[0].args).toEqual({
      dir: DIR,
      format: 'srt',
      path: '/home/user/meeting-2026-12-04T10-00-00.srt',
    });
    expect(problems).toEqual([]);
    await close();
  });

  it('says why a meeting cannot start, and offers to finish one cut off', async () => {
    const f = { ...baseFixture(), meetings: [cutOff], fail: { start_meeting: 'system audio cannot be recorded here: it needs a PulseAudio server' } };
    const { page, close } = await open(h, f, { hash: 'meetings' });
    // While the model loads and the devices open, the page says so.
    await emit(page, 'meeting', { state: 'starting', dir: null, microphone: null, systemAudio: null, notice: null });
    await page.waitForFunction(() => document.querySelector('[data-testid=meeting-state]')?.textContent?.includes('Starting'));
    await emit(page, 'meeting', { state: 'idle', dir: null, microphone: null, systemAudio: null, notice: null });
    await page.getByTestId('meeting-start').click();
    await page.getByTestId('meeting-error').waitFor();
    expect(await page.getByTestId('meeting-error').textContent()).toContain('needs a PulseAudio server');

    const item = page.getByTestId('meeting-item');
    expect(await item.getAttribute('data-unfinished')).toBe('true');
    await item.getByRole('button').first().click();
    expect(await item.textContent()).toContain('the system audio stopped');
    await page.getByTestId('meeting-finish').click();
    expect((await waitForCall(page, 'finish_meeting'))[0].args).toEqual({ dir: cutOff.dir });
    await page.waitForFunction(() => document.querySelector('[data-testid=meeting-control]')?.getAttribute('data-state') === 'transcribing');
    await close();
  });
});
