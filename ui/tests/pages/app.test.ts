// Whole-window behaviour: navigation, banners, theme, the Home page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture, catalogFixture } from './fixture';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

describe('navigation', () => {
  for (const scheme of ['light', 'dark'] as const) {
    it(`reaches every page from the sidebar (${scheme}) without errors`, async () => {
      const f = baseFixture();
      f.settings.theme = 'system';
      f.fileJobs = [];
      const { page, problems, close } = await open(h, f, { colorScheme: scheme });
      await page.getByTestId('home-state').waitFor();
      for (const [id, title] of [
        ['history', 'History'],
        ['files', 'Files'],
        ['models', 'Models'],
        ['settings', 'Settings'],
        ['home', 'Home'],
      ]) {
        await page.getByTestId(`nav-${id}`).click();
        await page.locator('h1', { hasText: title }).waitFor();
        expect(await page.getByTestId(`nav-${id}`).getAttribute('aria-current')).toBe('page');
        expect(page.url()).toContain(`#/${id}`);
        await page.waitForTimeout(150);
        await shot(page, `${id}-${scheme}`);
      }
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe(scheme);
      expect(problems).toEqual([]);
      await close();
    });
  }

  it('sidebar links are keyboard operable (focus, Enter)', async () => {
    const { page, close } = await open(h, baseFixture());
    await page.getByTestId('home-state').waitFor();
    await page.getByTestId('nav-settings').focus();
    await page.keyboard.press('Enter');
    await page.locator('h1', { hasText: 'Settings' }).waitFor();
    await close();
  });
});

describe('theme', () => {
  it('uses the saved theme over the system preference', async () => {
    const f = baseFixture();
    f.settings.theme = 'dark';
    const { page, close } = await open(h, f, { colorScheme: 'light' });
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(22, 24, 28)');
    // A change from another window applies at once.
    await emit(page, 'settings-changed', { ...f.settings, theme: 'light' });
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'light');
    await close();
  });
});

describe('first run', () => {
  it('offers the default model on every page and shows install progress and errors', async () => {
    const f = baseFixture();
    f.status = { ...f.status, state: 'no_model', model: null, modelArch: null, lastText: null };
    const { page, problems, close } = await open(h, f, { hash: 'history' });
    const banner = page.getByTestId('first-run');
    await banner.waitFor();
    expect(await banner.textContent()).toContain('No speech model installed');
    for (const p of ['files', 'models', 'settings', 'home']) {
      await page.getByTestId(`nav-${p}`).click();
      await banner.waitFor();
    }
    await shot(page, 'first-run');
    await page.getByTestId('install-default').click();
    await waitForCall(page, 'install_default_model');

    await emit(page, 'install-progress', { stage: 'Downloading whisper-base', fraction: 0.42, done: false, error: null });
    const progress = page.getByTestId('install-progress');
    await page.waitForFunction(() => document.querySelector('[data-testid=install-progress]')?.textContent?.includes('42%'));
    expect(await progress.textContent()).toContain('Downloading whisper-base');
    expect(await page.getByTestId('install-default').isDisabled()).toBe(true);
    await shot(page, 'first-run-progress');

    await emit(page, 'install-progress', { stage: 'Downloading', fraction: 0.5, done: true, error: 'network unreachable: check your connection' });
    await page.getByTestId('install-error').waitFor();
    expect(await page.getByTestId('install-error').textContent()).toContain('network unreachable');
    expect(await page.getByTestId('install-default').textContent()).toContain('Retry');

    await page.getByTestId('install-default').click();
    await waitForCall(page, 'install_default_model', 2);
    await emit(page, 'install-progress', { stage: 'Verifying', fraction: 1, done: false, error: null });
    await page.evaluate(() => {
      window.__shell.state.status = { ...window.__shell.state.status, state: 'idle', model: 'whisper-base' };
    });
    await emit(page, 'install-progress', { stage: 'Done', fraction: 1, done: true, error: null });
    await page.getByTestId('first-run').waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Ready');
    expect(problems).toEqual([]);
    await close();
  });

  it('offers the catalog model recommended for this computer as a second way in', async () => {
    const f = catalogFixture();
    f.status = { ...f.status, state: 'no_model', model: null, modelArch: null, lastText: null };
    const { page, problems, close } = await open(h, f, { hash: 'home' });
    const rec = page.getByTestId('first-run-recommended');
    await rec.waitFor();
    expect(await rec.textContent()).toContain('Whisper small (English)');
    expect(await rec.textContent()).toContain('fast enough for dictation on 2 CPU cores');
    await page.getByTestId('first-run-download-recommended').click();
    expect((await waitForCall(page, 'download_model'))[0].args).toEqual({ name: 'whisper-small.en' });
    await emit(page, 'model-download', {
      name: 'whisper-small.en',
      state: { state: 'downloading', downloaded: 50_000_000, total: 487_600_000, bytesPerSec: 5_000_000, etaSecs: 88 },
    });
    await page.waitForFunction(() => document.querySelector('[data-testid=first-run-recommended]')?.textContent?.includes('50 MB of 488 MB'));
    expect(await page.getByTestId('first-run-download-recommended').isDisabled()).toBe(true);
    await emit(page, 'model-download', { name: 'whisper-small.en', state: { state: 'failed', error: 'download failed from every source: no network' } });
    await page.getByTestId('first-run-download-error').waitFor();
    expect(await page.getByTestId('first-run-download-error').textContent()).toContain('no network');
    expect(await page.getByTestId('first-run-download-recommended').textContent()).toContain('Retry');
    expect(problems).toEqual([]);
    await close();
  });

  it('shows a rejected install command readably', async () => {
    const f = baseFixture();
    f.status = { ...f.status, state: 'no_model', model: null };
    f.fail = { install_default_model: 'not enough disk space: 120 MB free, 150 MB needed' };
    const { page, close } = await open(h, f);
    await page.getByTestId('install-default').click();
    await page.getByTestId('install-error').waitFor();
    expect(await page.getByTestId('install-error').textContent()).toContain('not enough disk space');
    await close();
  });
});

describe('notice', () => {
  it('shows the shell notice until dismissed', async () => {
    const f = baseFixture();
    f.status.notice = 'settings.json was invalid (line 3); it was backed up to settings.json.bad and defaults restored';
    const { page, close } = await open(h, f);
    await page.getByTestId('notice').waitFor();
    expect(await page.getByTestId('notice-text').textContent()).toContain('backed up');
    await shot(page, 'notice');
    await page.getByTestId('notice-dismiss').click();
    await page.getByTestId('notice').waitFor({ state: 'detached' });
    expect(await calls(page, 'dismiss_notice')).toHaveLength(1);
    await close();
  });

  it('appears when a status event brings one', async () => {
    const f = baseFixture();
    const { page, close } = await open(h, f);
    await page.getByTestId('home-state').waitFor();
    expect(await page.getByTestId('notice').count()).toBe(0);
    await emit(page, 'status', { ...f.status, notice: 'Microphone “USB Headset” is gone; using the system default' });
    await page.getByTestId('notice').waitFor();
    await close();
  });
});

describe('home', () => {
  it('says what does not work in this session and what to do instead', async () => {
    const f = baseFixture();
    const { page, close } = await open(h, f);
    await page.getByTestId('home-state').waitFor();
    expect(await page.getByTestId('home-capabilities').count()).toBe(0);
    await emit(page, 'status', {
      ...f.status,
      capabilities: [
        { name: 'hotkey', ok: false, detail: 'this is a Wayland session (sway); bind `utter ptt press` in your compositor' },
        { name: 'clipboard', ok: true, detail: 'the text is left on the clipboard' },
      ],
    });
    await page.getByTestId('capability-hotkey').waitFor();
    expect(await page.getByTestId('capability-hotkey').textContent()).toContain('utter ptt press');
    expect(await page.getByTestId('capability-clipboard').count()).toBe(0);
    expect(await page.getByTestId('home-detail').textContent()).toContain('utter ptt toggle');
    await close();
  });

  it('shows state, hint, model and last text with working buttons', async () => {
    const f = baseFixture();
    const { page, close } = await open(h, f);
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Ready');
    expect(await page.getByTestId('home-detail').textContent()).toBe('Hold Ctrl+Shift+Space to dictate');
    expect(await page.getByTestId('home-model').textContent()).toContain('whisper-base');
    expect(await page.getByTestId('home-backend-fallback').count()).toBe(0);
    expect(await page.getByTestId('last-text').textContent()).toBe(f.status.lastText);

    await page.getByTestId('last-copy').click();
    expect((await waitForCall(page, 'copy_text'))[0].args).toEqual({ text: f.status.lastText });
    await page.getByTestId('toast').waitFor();
    await page.getByTestId('last-paste').click();
    expect((await waitForCall(page, 'paste_text'))[0].args).toEqual({ text: f.status.lastText });

    await page.getByTestId('dictation-toggle').click();
    await waitForCall(page, 'start_dictation');
    await emit(page, 'status', { ...f.status, state: 'recording' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.getAttribute('data-state') === 'recording');
    for (const rms of [0.05, 0.12, 0.2]) await emit(page, 'level', { rms });
    await page.waitForFunction(() => Number(document.querySelector('[data-testid=level-meter]')?.getAttribute('data-lit')) > 10);
    await emit(page, 'dictation', { event: 'partial_text', id: 1, settled: 'Meet me', tentative: 'at' });
    await page.getByTestId('live-text').waitFor();
    await shot(page, 'home-recording');
    await page.getByTestId('dictation-toggle').click();
    await waitForCall(page, 'stop_dictation');

    await emit(page, 'status', { ...f.status, state: 'transcribing' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Transcribing…');
    await emit(page, 'status', { ...f.status, state: 'idle', lastText: 'A brand new sentence.' });
    await page.waitForFunction(() => document.querySelector('[data-testid=last-text]')?.textContent === 'A brand new sentence.');
    await close();
  });

  it('says where the model runs and why a GPU build fell back to the CPU', async () => {
    const f = baseFixture();
    f.status = { ...f.status, backend: 'vulkan' };
    const { page, close } = await open(h, f);
    await page.waitForFunction(() => document.querySelector('[data-testid=home-model]')?.textContent?.includes('on VULKAN'));
    const reason = 'this build can use Vulkan but found no usable device';
    await emit(page, 'status', { ...f.status, backend: 'cpu', backendFallback: reason });
    await page.getByTestId('home-backend-fallback').waitFor();
    expect(await page.getByTestId('home-model').textContent()).toContain('on CPU');
    expect(await page.getByTestId('home-backend-fallback').textContent()).toBe(`Fell back to the CPU: ${reason}`);
    await close();
  });

  it('words toggle mode and shows errors readably', async () => {
    const f = baseFixture();
    f.status = { ...f.status, mode: 'toggle', hotkey: 'alt+f9', state: 'error', error: 'Microphone “USB Headset” disconnected' };
    f.fail = { start_dictation: 'no microphone found' };
    const { page, close } = await open(h, f);
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.getAttribute('data-state') === 'error');
    expect(await page.getByTestId('home-detail').textContent()).toContain('USB Headset” disconnected');
    await shot(page, 'home-error');
    await page.getByTestId('dictation-toggle').click();
    await page.getByTestId('home-error').waitFor();
    expect(await page.getByTestId('home-error').textContent()).toBe('no microphone found');
    await emit(page, 'status', { ...f.status, state: 'idle', error: null });
    await page.waitForFunction(
      () => document.querySelector('[data-testid=home-detail]')?.textContent === 'Press Alt+F9 to start, press again to stop',
    );
    await close();
  });
});

describe('live text', () => {
  it('shows the words so far on Home while recording: settled as they are, tentative muted and italic', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f);
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Ready');
    // The status is read only once its listener is in place (no change can fall between).
    expect(await page.evaluate(() => window.__shell.statusReads)).not.toContain(false);
    await emit(page, 'status', { ...f.status, state: 'recording' });
    await emit(page, 'dictation', {
      event: 'recording_started',
      id: 4,
      audio_path: '/rec/4.wav',
      app: 'XTerm',
      profile: 'X terminals (Shift+Insert)',
    });
    await page.getByTestId('live-app').waitFor();
    expect(await page.getByTestId('live-app').textContent()).toContain('Into XTerm · profile “X terminals (Shift+Insert)”');
    expect(await page.getByTestId('live-text').count()).toBe(0);

    await emit(page, 'dictation', { event: 'partial_text', id: 4, settled: 'Meet me at', tentative: 'the stadium' });
    await page.getByTestId('live-text').waitFor();
    expect(await page.getByTestId('live-settled').textContent()).toBe('Meet me at');
    expect(await page.getByTestId('live-tentative').textContent()).toBe('the stadium');
    expect(await page.getByTestId('live-text').textContent()).toBe('Meet me at the stadium');
    const style = (id: string) =>
      page.$eval(`[data-testid=${id}]`, (e) => {
        const c = getComputedStyle(e);
        return { italic: c.fontStyle, color: c.color };
      });
    const settled = await style('live-settled');
    const tentative = await style('live-tentative');
    expect(settled.italic).toBe('normal');
    expect(tentative.italic).toBe('italic');
    expect(tentative.color).not.toBe(settled.color);

    // The next run settles more words and changes the tentative ones.
    await emit(page, 'dictation', { event: 'partial_text', id: 4, settled: 'Meet me at the station', tentative: 'at half' });
    await page.waitForFunction(() => document.querySelector('[data-testid=live-settled]')?.textContent === 'Meet me at the station');
    expect(await page.getByTestId('live-tentative').textContent()).toBe('at half');
    await shot(page, 'home-live-text');

    // They stay while transcribing, and go when the text is delivered.
    await emit(page, 'status', { ...f.status, state: 'transcribing' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.getAttribute('data-state') === 'transcribing');
    expect(await page.getByTestId('live-text').count()).toBe(1);
    await emit(page, 'dictation', {
      event: 'text_delivered', id: 4, text: 'Meet me at the station at half past five.', output: 'paste', engine_ms: 80, segments: 1, raw_text: null, error: null,
    });
    await page.getByTestId('live-text').waitFor({ state: 'detached' });
    await emit(page, 'status', { ...f.status, state: 'idle' });

    // A new dictation starts with no words of the last one.
    await emit(page, 'status', { ...f.status, state: 'recording' });
    await emit(page, 'dictation', { event: 'recording_started', id: 5, audio_path: '/rec/5.wav' });
    await page.waitForTimeout(100);
    expect(await page.getByTestId('live-text').count()).toBe(0);
    expect(await page.getByTestId('live-app').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });
});

describe('overlay', () => {
  it('counts down a hands-free stop, and drops the countdown when speech resumes', async () => {
    const f = baseFixture();
    f.status.state = 'recording';
    const { page, problems, close } = await open(h, f, { path: 'overlay.html', viewport: { width: 400, height: 56 } });
    await page.waitForFunction(() => document.querySelector('[data-testid=overlay]')?.getAttribute('data-state') === 'recording');
    expect(await page.getByTestId('overlay-countdown').count()).toBe(0);
    await emit(page, 'dictation', { event: 'stopping_on_silence', id: 3, left_ms: 2000 });
    await page.getByTestId('overlay-countdown').waitFor();
    expect(await page.getByTestId('overlay-countdown').textContent()).toBe('stops in 2 s');
    await emit(page, 'dictation', { event: 'stopping_on_silence', id: 3, left_ms: null });
    await page.getByTestId('overlay-countdown').waitFor({ state: 'detached' });
    expect(problems).toEqual([]);
    await close();
  });

  it('shows the last two lines of the words so far, the newest at the bottom, without taking focus', async () => {
    const f = baseFixture();
    f.status.state = 'recording';
    const { page, problems, close } = await open(h, f, { path: 'overlay.html', viewport: { width: 400, height: 56 } });
    await page.waitForFunction(() => document.querySelector('[data-testid=overlay]')?.getAttribute('data-state') === 'recording');
    expect(await page.evaluate(() => window.__shell.statusReads)).toEqual([true]);
    expect(await page.getByTestId('overlay-live').count()).toBe(0);

    // The overlay's window may come up after recording_started went: words come all the same.
    const settled = 'It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness,';
    await emit(page, 'dictation', { event: 'partial_text', id: 9, settled, tentative: 'it was the epoch of belief' });
    await page.getByTestId('overlay-live').waitFor();
    expect(await page.getByTestId('overlay-live-settled').textContent()).toBe(settled);
    expect(await page.getByTestId('overlay-live-tentative').textContent()).toBe('it was the epoch of belief');
    const geometry = await page.evaluate(() => {
      const box = document.querySelector('[data-testid=overlay-live]')!.getBoundingClientRect();
      const text = document.querySelector('[data-testid=overlay-live-text]')!.getBoundingClientRect();
      const charRect = (id: string, at: 'first' | 'last') => {
        const node = document.querySelector(`[data-testid=${id}]`)!.firstChild as Text;
        const range = document.createRange();
        const i = at === 'first' ? 0 : node.length - 1;
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        return range.getBoundingClientRect();
      };
      const first = charRect('overlay-live-settled', 'first');
      const last = charRect('overlay-live-tentative', 'last');
      const lineHeight = parseFloat(getComputedStyle(document.querySelector('[data-testid=overlay-live]')!).lineHeight);
      return { box: { top: box.top, bottom: box.bottom, height: box.height }, textHeight: text.height, first: first.bottom, last: last.bottom, lineHeight };
    });
    // A box of two lines; the text is longer and ends at its bottom, its start cut off above.
    expect(geometry.box.height).toBe(2 * geometry.lineHeight);
    expect(geometry.textHeight).toBeGreaterThan(2 * geometry.lineHeight);
    expect(geometry.last).toBeLessThanOrEqual(geometry.box.bottom + 0.5);
    expect(geometry.last).toBeGreaterThan(geometry.box.top + geometry.lineHeight);
    expect(geometry.first).toBeLessThanOrEqual(geometry.box.top);
    const italic = await page.$eval('[data-testid=overlay-live-tentative]', (e) => getComputedStyle(e).fontStyle);
    expect(italic).toBe('italic');
    await shot(page, 'overlay-live-text');

    // Still there, with the spinner, while transcribing; gone once delivered.
    await emit(page, 'status', { ...f.status, state: 'transcribing' });
    await page.waitForFunction(() => document.querySelector('[data-testid=overlay]')?.getAttribute('data-state') === 'transcribing');
    expect(await page.getByTestId('overlay-live').count()).toBe(1);
    await shot(page, 'overlay-live-transcribing');
    await emit(page, 'dictation', { event: 'text_delivered', id: 9, text: settled, output: 'paste', engine_ms: 1, segments: 1, raw_text: null, error: null });
    await page.getByTestId('overlay-live').waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
    expect(await page.locator('button, input, select, a, [tabindex]').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('shows a live level while recording and a spinner while transcribing', async () => {
    const f = baseFixture();
    f.settings.theme = 'dark';
    const { page, problems, close } = await open(h, f, { path: 'overlay.html', viewport: { width: 220, height: 56 } });
    await page.getByTestId('overlay').waitFor();
    await emit(page, 'status', { ...f.status, state: 'recording' });
    for (const rms of [0.02, 0.1, 0.3, 0.15, 0.05, 0.2]) await emit(page, 'level', { rms });
    await page.waitForFunction(() => document.querySelector('[data-testid=overlay]')?.getAttribute('data-state') === 'recording');
    const heights = await page.$$eval('[data-testid=overlay-bars] > span', (els) => els.map((e) => (e as HTMLElement).style.height));
    expect(heights.filter((x) => x !== '12%').length).toBeGreaterThan(3);
    await shot(page, 'overlay-recording');
    await emit(page, 'status', { ...f.status, state: 'transcribing' });
    await page.getByText('Transcribing…').waitFor();
    await shot(page, 'overlay-transcribing');
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
    expect(await page.locator('button, input, select, a').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });
});
