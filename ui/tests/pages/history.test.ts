// The History page: search, paging and per-entry actions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, expectPlayable, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture, historyEntry } from './fixture';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

describe('history', () => {
  it('lists entries and searches with a debounced query', async () => {
    const { page, problems, close } = await open(h, baseFixture(), { hash: 'history' });
    await page.getByTestId('history-item').first().waitFor();
    expect(await page.getByTestId('history-item').count()).toBe(3);
    expect(await page.getByTestId('history-source').nth(1).textContent()).toBe('planning.mp3');
    expect((await calls(page, 'history_list'))[0].args).toEqual({ query: null, limit: 50, offset: 0 });

    await page.getByTestId('history-search').pressSequentially('hello', { delay: 20 });
    const searches = await waitForCall(page, 'history_list', 2);
    await page.waitForTimeout(400);
    // Typing five letters made one request, not five.
    expect((await calls(page, 'history_list')).length).toBe(2);
    expect(searches[1].args).toEqual({ query: 'hello', limit: 50, offset: 0 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=history-item]').length === 2);
    const texts = await page.getByTestId('history-text').allTextContents();
    expect(texts).toEqual(['Hello team, the release is ready for review.', 'Buy milk and hello to the neighbours.']);

    await page.getByTestId('history-search').fill('zebra');
    await page.getByTestId('history-empty').waitFor();
    expect(await page.getByTestId('history-empty').textContent()).toContain('zebra');
    expect(problems).toEqual([]);
    await close();
  });

  it('copies, pastes, plays, retries with another model and deletes after confirming', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'history' });
    const first = page.getByTestId('history-item').first();
    await first.waitFor();

    await first.getByTestId('history-copy').click();
    expect((await waitForCall(page, 'copy_text'))[0].args).toEqual({ text: f.history[0].text });
    await first.getByTestId('history-paste').click();
    expect((await waitForCall(page, 'paste_text'))[0].args).toEqual({ text: f.history[0].text });

    await first.getByTestId('history-play').click();
    expect((await waitForCall(page, 'history_audio'))[0].args).toEqual({ id: 1 });
    await expectPlayable(page, 'history-audio-player');

    await first.getByTestId('history-retry-model').selectOption('whisper-small-en');
    await first.getByTestId('history-retry').click();
    expect((await waitForCall(page, 'history_retry'))[0].args).toEqual({ id: 1, model: 'whisper-small-en' });
    await page.waitForFunction(() => document.querySelector('[data-testid=history-text]')?.textContent === 'retried with whisper-small-en');
    // The VAD model is not offered for retry.
    const opts = await first.locator('[data-testid=history-retry-model] option').allTextContents();
    expect(opts).toEqual(['Same model', 'whisper-base', 'whisper-small-en']);

    // Entry 3 has no audio left: no Play, a note instead.
    const third = page.getByTestId('history-item').nth(2);
    expect(await third.getByTestId('history-play').count()).toBe(0);
    expect(await third.textContent()).toContain('Audio deleted');
    await shot(page, 'history-actions');

    await first.getByTestId('history-delete').click();
    expect(await calls(page, 'history_delete')).toHaveLength(0);
    await first.getByTestId('history-delete-confirm').click();
    expect((await waitForCall(page, 'history_delete'))[0].args).toEqual({ id: 1 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=history-item]').length === 2);
    expect(problems).toEqual([]);
    await close();
  });

  it('lists a meeting with who said what, plays it and sends a retry to the Meetings page', async () => {
    const f = baseFixture();
    f.history = [
      historyEntry(7, {
        kind: 'meeting',
        text: 'You: shall we start?\nSpeaker 1: yes, the budget first.',
        audioPath: '/data/meetings/2026-12-05-0900',
        durationMs: 1_500_000,
        model: 'whisper-base',
      }),
    ];
    const { page, problems, close } = await open(h, f, { hash: 'history' });
    const item = page.getByTestId('history-item').first();
    await item.waitFor();
    expect(await item.getByTestId('history-source').textContent()).toBe('Meeting');
    // One line per speaker, as stored.
    const text = await item.getByTestId('history-text').evaluate((el) => (el as HTMLElement).innerText);
    expect(text.split('\n')).toEqual(['You: shall we start?', 'Speaker 1: yes, the budget first.']);
    expect(await item.getByTestId('history-retry').count()).toBe(0);
    expect(await item.getByTestId('history-meeting-note').textContent()).toContain('Meetings page');
    await item.getByTestId('history-play').click();
    expect((await waitForCall(page, 'history_audio'))[0].args).toEqual({ id: 7 });
    await expectPlayable(page, 'history-audio-player');
    await page.getByTestId('history-search').fill('budget');
    expect((await waitForCall(page, 'history_list', 2))[1].args).toEqual({ query: 'budget', limit: 50, offset: 0 });
    await item.waitFor();
    expect(problems).toEqual([]);
    await close();
  });

  it('shows a failed dictation with its reason, and a retry that clears it', async () => {
    const f = baseFixture();
    f.history = [
      historyEntry(1, { text: '', error: 'the speech engine crashed twice on this audio' }),
      historyEntry(2, { text: 'Ship it on Friday.', rawText: 'ship it on friday' }),
    ];
    const { page, problems, close } = await open(h, f, { hash: 'history' });
    const failed = page.getByTestId('history-item').first();
    await failed.getByTestId('history-error').waitFor();
    expect(await failed.getByTestId('history-error').textContent()).toContain('crashed twice on this audio');
    expect(await failed.getByTestId('history-error').textContent()).toContain('Retry transcribes it again');
    expect(await failed.getByTestId('history-text').count()).toBe(0);
    // The engine's own text is one click away where replacements changed it.
    const raw = page.getByTestId('history-item').nth(1).getByTestId('history-raw');
    expect(await raw.textContent()).toContain('ship it on friday');

    await failed.getByTestId('history-retry').click();
    expect((await waitForCall(page, 'history_retry'))[0].args).toEqual({ id: 1, model: null });
    await page.waitForFunction(() => document.querySelector('[data-testid=history-text]')?.textContent === 'retried with whisper-base');
    expect(await failed.getByTestId('history-error').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('loads more pages and refreshes on history-changed', async () => {
    const f = baseFixture();
    f.history = Array.from({ length: 60 }, (_, i) => historyEntry(i + 1));
    const { page, close } = await open(h, f, { hash: 'history' });
    await page.getByTestId('history-more').waitFor();
    expect(await page.getByTestId('history-item').count()).toBe(50);
    await page.getByTestId('history-more').click();
    const lists = await waitForCall(page, 'history_list', 2);
    expect(lists[1].args).toEqual({ query: null, limit: 50, offset: 50 });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=history-item]').length === 60);
    expect(await page.getByTestId('history-more').count()).toBe(0);

    await page.evaluate(() => {
      const s = window.__shell.state;
      s.history = [{ ...s.history[0], id: 999, text: 'Fresh from the microphone' }, ...s.history];
    });
    await emit(page, 'history-changed', {});
    const again = await waitForCall(page, 'history_list', 3);
    expect(again[2].args).toEqual({ query: null, limit: 60, offset: 0 });
    await page.waitForFunction(() => document.querySelector('[data-testid=history-text]')?.textContent === 'Fresh from the microphone');
    await close();
  });
});
