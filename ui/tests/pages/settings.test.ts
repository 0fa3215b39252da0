// The Settings page: every field round-trips through save_settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture } from './fixture';
import type { Settings } from '../../src/lib/types';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

describe('settings', () => {
  it('records a hotkey, edits fields and saves the edited values', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    const hotkey = page.getByTestId('hotkey-input');
    await hotkey.waitFor();
    expect(await hotkey.inputValue()).toBe('Ctrl+Shift+Space');

    await hotkey.focus();
    expect(await hotkey.inputValue()).toBe('Press a shortcut…');
    await page.keyboard.press('Control+Shift+KeyK');
    expect(await hotkey.getAttribute('data-combo')).toBe('ctrl+shift+k');
    expect(await hotkey.inputValue()).toBe('Ctrl+Shift+K');

    // Escape puts back what was there before this recording.
    await page.getByTestId('mode-select').focus();
    await hotkey.focus();
    await page.keyboard.press('Escape');
    expect(await hotkey.getAttribute('data-combo')).toBe('ctrl+shift+k');

    // A bare letter is refused with a reason.
    await page.getByTestId('mode-select').focus();
    await hotkey.focus();
    await page.keyboard.press('KeyJ');
    await page.getByTestId('hotkey-problem').waitFor();
    await page.keyboard.press('Alt+F9');
    expect(await hotkey.getAttribute('data-combo')).toBe('alt+f9');

    await page.getByTestId('mode-select').selectOption('toggle');
    await page.getByTestId('device-select').selectOption('USB Headset');
    await page.getByTestId('language-select').selectOption('de');
    await page.getByTestId('output-select').selectOption('paste');
    await page.getByTestId('paste-keys-select').selectOption('ctrl+shift+v');
    await page.getByTestId('restore-clipboard').uncheck();
    await page.getByTestId('trailing-space').uncheck();
    await page.getByTestId('sounds').uncheck();
    await page.getByTestId('autostart').check();
    await page.getByTestId('show-overlay').uncheck();
    await page.getByTestId('vad-sensitivity').fill('70');
    await page.getByTestId('silence-ms').fill('900');
    await page.getByTestId('keep-audio-days').fill('0');
    // The engine's GPU devices are offered (the CPU is the "CPU" choice).
    const computeOptions = await page.getByTestId('compute-select').locator('option').allTextContents();
    expect(computeOptions).toEqual(['Auto', 'CPU', 'Vulkan0 · Radeon 780M']);
    await page.getByTestId('compute-select').selectOption('Vulkan0');
    await page.getByTestId('theme-select').selectOption('dark');
    await shot(page, 'settings-edited');

    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    const expected: Settings = {
      ...f.settings,
      hotkey: 'alt+f9',
      mode: 'toggle',
      inputDevice: 'USB Headset',
      language: 'de',
      pasteKeys: 'ctrl+shift+v',
      restoreClipboard: false,
      trailingSpace: false,
      sounds: false,
      autostart: true,
      showOverlay: false,
      checkUpdates: true,
      vadThreshold: 0.3,
      silenceMs: 900,
      keepAudioDays: 0,
      compute: 'Vulkan0',
      theme: 'dark',
    };
    expect(save.args).toEqual({ settings: expected });
    await page.getByTestId('toast').waitFor();
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    expect(await page.getByTestId('settings-save').isDisabled()).toBe(true);

    // "System default" is sent as null.
    await page.getByTestId('device-select').selectOption('');
    await page.getByTestId('settings-save').click();
    const saves = await waitForCall(page, 'save_settings', 2);
    expect((saves[1].args.settings as Settings).inputDevice).toBeNull();
    expect(problems).toEqual([]);
    await close();
  });

  it('teaches Utter your words: vocabulary with import and export, replacement rules, punctuation and clean-up', async () => {
    const f = baseFixture();
    f.settings.vocabulary = ['Dashwood'];
    f.dialogOpen = '/home/user/words.txt';
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    const input = page.getByTestId('vocab-input');
    await input.waitFor();
    // Enter adds the word; it does not submit the form.
    await input.fill('Kubernetes');
    await input.press('Enter');
    expect(await page.getByTestId('vocab-word').allTextContents()).toEqual(['Dashwood', 'Kubernetes']);
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await input.fill('kubernetes');
    await page.getByTestId('vocab-add').click();
    expect(await page.getByTestId('vocab-note').textContent()).toContain('already in the list');
    await page.getByRole('button', { name: 'Remove Dashwood' }).click();
    // The import adds only the words not there yet.
    await page.getByTestId('vocab-import').click();
    expect((await waitForCall(page, 'import_vocabulary'))[0].args).toEqual({ path: '/home/user/words.txt' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=vocab-word]').length === 2);
    expect(await page.getByTestId('vocab-word').allTextContents()).toEqual(['Kubernetes', 'Anna Åberg']);
    await page.getByTestId('vocab-export').click();
    expect((await waitForCall(page, 'export_vocabulary'))[0].args).toEqual({
      path: '/home/user/utter-vocabulary.txt',
      words: ['Kubernetes', 'Anna Åberg'],
    });

    // A rule without its heard text is caught before the shell sees it.
    await page.getByTestId('rule-add').click();
    await page.getByTestId('settings-save').click();
    expect(await page.getByTestId('error-replacements').textContent()).toContain('Rule 1');
    await page.getByTestId('rule-heard').fill('get hub');
    await page.getByTestId('rule-written').fill('GitHub');
    await page.getByTestId('rule-add').click();
    await page.getByTestId('rule-heard').nth(1).fill('(\\d+) percent');
    await page.getByTestId('rule-written').nth(1).fill('$1%');
    await page.getByTestId('rule-regex').nth(1).check();
    await page.getByTestId('spoken-punctuation').check();
    await page.getByTestId('clean-up').check();
    await shot(page, 'settings-your-words');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect(save.args).toEqual({
      settings: {
        ...f.settings,
        vocabulary: ['Kubernetes', 'Anna Åberg'],
        replacements: [
          { heard: 'get hub', written: 'GitHub', regex: false },
          { heard: '(\\d+) percent', written: '$1%', regex: true },
        ],
        spokenPunctuation: true,
        cleanUp: true,
      },
    });
    expect(await page.getByTestId('vocab-unsupported').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('says when the model cannot read a vocabulary', async () => {
    const f = baseFixture();
    f.status.takesVocabulary = false;
    f.status.model = 'parakeet-tdt';
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('vocab-unsupported').waitFor();
    expect(await page.getByTestId('vocab-unsupported').textContent()).toContain('parakeet-tdt does not read a vocabulary as a prompt: these words correct what sounds like them');
    await close();
  });

  it('shows the shell rejection beside its field', async () => {
    const f = baseFixture();
    f.fail = { save_settings: 'invalid setting `hotkey`: cannot parse hotkey `alt+f9`: already taken by the system' };
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('mode-select').selectOption('toggle');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-hotkey').waitFor();
    expect(await page.getByTestId('error-hotkey').textContent()).toContain('already taken');
    expect(await page.getByTestId('settings-error').textContent()).toContain('invalid setting `hotkey`');
    await shot(page, 'settings-rejected');
    await close();
  });

  it('catches out-of-range values before asking the shell', async () => {
    const { page, close } = await open(h, baseFixture(), { hash: 'settings' });
    await page.getByTestId('silence-ms').fill('100');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-silence').waitFor();
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await close();
  });

  it('checks for updates on request and installs only on a click', async () => {
    const f = baseFixture();
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('update-check').click();
    await page.getByText('Utter is up to date.').waitFor();
    expect(await calls(page, 'install_update')).toHaveLength(0);

    await emit(page, 'update-available', { version: '9.9.9', notes: null });
    await page.getByText('Version 9.9.9 is available.').waitFor();
    await page.getByTestId('update-install').click();
    await waitForCall(page, 'install_update');

    // The check at start can be switched off; the setting is saved with the rest.
    await page.getByTestId('check-updates').uncheck();
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect((save.args.settings as Settings).checkUpdates).toBe(false);
    await close();
  });

  it('shows why an update check failed', async () => {
    const f = baseFixture();
    f.fail = { check_for_updates: 'cannot check for updates: offline' };
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('update-check').click();
    await page.getByTestId('update-error').waitFor();
    expect(await page.getByTestId('update-error').textContent()).toContain('offline');
    await close();
  });

  it('follows settings-changed and offers Auto only when the model detects languages', async () => {
    const f = baseFixture();
    f.status.detectsLanguage = false;
    f.status.languages = ['en', 'de'];
    f.settings.language = 'en';
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('language-select').waitFor();
    const langs = await page.$$eval('[data-testid=language-select] option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(langs).toEqual(['en', 'de']);
    await emit(page, 'settings-changed', { ...f.settings, mode: 'toggle', silenceMs: 1200 });
    await page.waitForFunction(() => (document.querySelector('[data-testid=silence-ms]') as HTMLInputElement).value === '1200');
    expect(await page.getByTestId('mode-select').inputValue()).toBe('toggle');
    await close();
  });
});
