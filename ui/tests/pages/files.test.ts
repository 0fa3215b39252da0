// The Files page: adding files, the queue following file-job events, transcripts and export.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture, fileJob } from './fixture';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

const segments = [
  { startMs: 0, endMs: 4200, text: ' Welcome to the quarterly planning meeting.' },
  { startMs: 65_300, endMs: 70_000, text: ' Next item: the budget.' },
];

describe('files', () => {
  it('follows a job from queued to a transcript with timestamps, and exports it', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'files' });
    await page.getByTestId('drop-zone').waitFor();
    await shot(page, 'files-empty');

    await emit(page, 'file-job', fileJob(7));
    const row = page.getByTestId('file-job');
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('queued');

    await emit(page, 'file-job', fileJob(7, { state: 'running', fraction: 0.4, durationMs: 1_840_000 }));
    await page.waitForFunction(() => document.querySelector('[data-testid=file-job-progress]')?.getAttribute('aria-valuenow') === '40');
    expect(await row.textContent()).toContain('40%');
    expect(await row.getByTestId('file-job-state').textContent()).toBe('Transcribing');
    await shot(page, 'files-running');

    await row.getByTestId('file-job-cancel').click();
    expect((await waitForCall(page, 'cancel_file_job'))[0].args).toEqual({ id: 7 });

    await emit(page, 'file-job', fileJob(7, { state: 'done', fraction: 1, durationMs: 1_840_000, segments, historyId: 12 }));
    // The first finished job opens by itself.
    const transcript = page.getByTestId('transcript');
    await transcript.waitFor();
    expect(await page.getByTestId('segment-time').allTextContents()).toEqual(['[00:00]', '[01:05]']);
    expect(await transcript.textContent()).toContain('Next item: the budget.');
    // A late progress event must not reopen the finished job.
    await emit(page, 'file-job', fileJob(7, { state: 'running', fraction: 0.9 }));
    await page.waitForTimeout(100);
    expect(await row.getAttribute('data-state')).toBe('done');
    await shot(page, 'files-transcript');

    await page.getByTestId('export-srt').click();
    const [dialog] = await waitForCall(page, 'plugin:dialog|save');
    expect((dialog.args.options as { defaultPath: string }).defaultPath).toBe('meeting-7.srt');
    expect((await waitForCall(page, 'export_transcript'))[0].args).toEqual({
      id: 7,
      format: 'srt',
      path: '/home/user/meeting-7.srt',
    });
    for (const fmt of ['txt', 'vtt', 'json']) await page.getByTestId(`export-${fmt}`).click();
    const exports = await waitForCall(page, 'export_transcript', 4);
    expect(exports.map((e) => e.args.format)).toEqual(['srt', 'txt', 'vtt', 'json']);

    await page.getByTestId('copy-all').click();
    expect((await waitForCall(page, 'copy_text'))[0].args).toEqual({
      text: 'Welcome to the quarterly planning meeting.\nNext item: the budget.',
    });
    expect(problems).toEqual([]);
    await close();
  });

  it('adds files from the picker and from a drop, and shows failures', async () => {
    const f = baseFixture();
    f.dialogOpen = ['/home/user/a.mp3', '/home/user/b.mkv'];
    f.fileJobs = [fileJob(1, { state: 'failed', error: 'cannot decode /home/user/Audio/meeting-1.m4a: unsupported codec' })];
    const { page, close } = await open(h, f, { hash: 'files' });
    await page.getByTestId('file-job-error').waitFor();
    expect(await page.getByTestId('file-job-error').textContent()).toContain('unsupported codec');

    await page.getByTestId('choose-files').click();
    const [openCall] = await waitForCall(page, 'plugin:dialog|open');
    expect((openCall.args.options as { multiple: boolean }).multiple).toBe(true);
    expect((await waitForCall(page, 'transcribe_files'))[0].args).toEqual({ paths: ['/home/user/a.mp3', '/home/user/b.mkv'], speakers: false });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=file-job]').length === 3);

    await emit(page, 'tauri://drag-drop', { paths: ['/tmp/dropped.wav'], position: { x: 10, y: 10 } });
    expect((await waitForCall(page, 'transcribe_files', 2))[1].args).toEqual({ paths: ['/tmp/dropped.wav'], speakers: false });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=file-job]').length === 4);

    await page.getByTestId('clear-finished').click();
    await waitForCall(page, 'clear_file_jobs');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=file-job]').length === 3);
    expect(await calls(page, 'transcribe_files')).toHaveLength(2);
    await close();
  });

  it('asks for speakers when the toggle is on, and shows and copies who said what', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'files' });
    await page.getByTestId('files-speakers').check();
    await emit(page, 'tauri://drag-drop', { paths: ['/tmp/call.wav'], position: { x: 10, y: 10 } });
    expect((await waitForCall(page, 'transcribe_files'))[0].args).toEqual({ paths: ['/tmp/call.wav'], speakers: true });
    const said = [
      { startMs: 0, endMs: 2000, text: ' Shall we start?', speaker: 'Speaker 1' },
      { startMs: 2500, endMs: 4000, text: ' Yes, the budget.', speaker: 'Speaker 2' },
    ];
    await emit(page, 'file-job', fileJob(9, { state: 'done', fraction: 1, durationMs: 4000, segments: said, speakers: true }));
    await page.getByTestId('file-job').last().click();
    await page.getByTestId('segment-speaker').first().waitFor();
    expect(await page.getByTestId('segment-speaker').allTextContents()).toEqual(['Speaker 1', 'Speaker 2']);
    await page.getByTestId('copy-all').click();
    expect((await waitForCall(page, 'copy_text'))[0].args).toEqual({ text: 'Speaker 1: Shall we start?\nSpeaker 2: Yes, the budget.' });
    expect(problems).toEqual([]);
    await close();
  });
});
