// The Settings page: every field round-trips through save_settings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, emit, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture } from './fixture';
import type { Page } from 'playwright-core';
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
    expect(await page.getByTestId('vocab-item').allTextContents()).toEqual(['Dashwood', 'Kubernetes']);
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await input.fill('kubernetes');
    await page.getByTestId('vocab-add').click();
    expect(await page.getByTestId('vocab-note').textContent()).toContain('already in the list');
    await page.getByRole('button', { name: 'Remove Dashwood' }).click();
    // The import adds only the words not there yet.
    await page.getByTestId('vocab-import').click();
    expect((await waitForCall(page, 'import_vocabulary'))[0].args).toEqual({ path: '/home/user/words.txt' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=vocab-item]').length === 2);
    expect(await page.getByTestId('vocab-item').allTextContents()).toEqual(['Kubernetes', 'Anna Åberg']);
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
    // A snippet: caught without its trigger, then saved with several lines.
    await page.getByTestId('snippet-add').click();
    await page.getByTestId('settings-save').click();
    expect(await page.getByTestId('error-snippets').textContent()).toContain('Snippet 1');
    await page.getByTestId('snippet-trigger').fill('my address');
    await page.getByTestId('snippet-text').fill('12 Main Street\nSpringfield\n{date}');
    await page.getByTestId('snippet-in-sentence').check();
    // The import adds the snippets whose trigger is new; the export writes the list.
    await page.getByTestId('snippet-import').click();
    expect((await waitForCall(page, 'import_snippets'))[0].args).toEqual({ path: '/home/user/words.txt' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=snippet]').length === 2);
    expect(await page.getByTestId('snippet-trigger').nth(1).inputValue()).toBe('sign off');
    await page.getByTestId('snippet-export').click();
    expect((await waitForCall(page, 'export_snippets'))[0].args).toEqual({
      path: '/home/user/utter-snippets.txt',
      snippets: [
        { trigger: 'my address', text: '12 Main Street\nSpringfield\n{date}', inSentence: true },
        { trigger: 'sign off', text: 'Best,\nAnna', inSentence: false },
      ],
    });
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
        snippets: [
          { trigger: 'my address', text: '12 Main Street\nSpringfield\n{date}', inSentence: true },
          { trigger: 'sign off', text: 'Best,\nAnna', inSentence: false },
        ],
        spokenPunctuation: true,
        cleanUp: true,
      },
    });
    expect(await page.getByTestId('vocab-unsupported').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('turns the local server on, shows where it runs and who called it, and says why it failed', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('server-section').waitFor();
    await page.getByTestId('server-state').getByText('Off.').waitFor();
    // A port only an administrator may use is caught before the shell sees it.
    await page.getByTestId('server-enabled').check();
    await page.getByTestId('server-port').fill('80');
    await page.getByTestId('settings-save').click();
    expect(await page.getByTestId('settings-error').textContent()).toContain('1024 to 65535');
    await page.getByTestId('server-port').fill('8178');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect(save.args).toEqual({ settings: { ...f.settings, serverEnabled: true, serverPort: 8178 } });
    // Wyoming beside it: on its own port, never the server's.
    await page.getByTestId('wyoming-enabled').check();
    await page.getByTestId('wyoming-port').fill('8178');
    await page.getByTestId('settings-save').click();
    expect(await page.getByTestId('settings-error').textContent()).toContain("differ from the server's port");
    await page.getByTestId('wyoming-port').fill('10300');
    await page.getByTestId('settings-save').click();
    const [, wyoming] = await waitForCall(page, 'save_settings', 2);
    expect(wyoming.args).toEqual({ settings: { ...f.settings, serverEnabled: true, serverPort: 8178, wyomingEnabled: true } });
    // The shell now reports it running, with one client (polled every 2 s).
    await page.evaluate(() => {
      (window as unknown as { __fakeServer: unknown }).__fakeServer = {
        state: 'running',
        url: 'http://127.0.0.1:8178/v1',
        wyomingUrl: 'tcp://127.0.0.1:10300',
        error: null,
        clients: [{ atMs: Date.UTC(2026, 11, 4, 9, 30), client: 'OpenAI/Python 1.99.9', origin: null, method: 'POST', path: '/v1/audio/transcriptions', status: 200 }],
      };
    });
    await page.getByTestId('server-url').waitFor({ timeout: 5000 });
    expect(await page.getByTestId('server-url').textContent()).toBe('http://127.0.0.1:8178/v1');
    expect(await page.getByTestId('wyoming-url').textContent()).toBe('tcp://127.0.0.1:10300');
    expect(await page.getByTestId('server-clients').textContent()).toContain('OpenAI/Python 1.99.9');
    await page.getByTestId('server-section').scrollIntoViewIfNeeded();
    await shot(page, 'settings-server');
    await page.evaluate(() => {
      (window as unknown as { __fakeServer: unknown }).__fakeServer = {
        state: 'failed',
        url: null,
        wyomingUrl: null,
        error: 'cannot listen on 127.0.0.1:8178: Address already in use. Choose another port, or stop the program using 8178.',
        clients: [],
      };
    });
    await page.getByTestId('server-error').waitFor({ timeout: 5000 });
    expect(await page.getByTestId('server-error').textContent()).toContain('Choose another port');
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

  it('turns the meeting shortcut on, refuses the dictation shortcut for it, and saves it', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('meeting-key-on').check();
    const key = page.getByTestId('meeting-key-input');
    expect(await key.getAttribute('data-combo')).toBe('ctrl+alt+m');
    // The dictation shortcut cannot start meetings too.
    await key.focus();
    await page.keyboard.press('Control+Shift+Space');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-meeting-key').waitFor();
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await page.getByTestId('mode-select').focus();
    await key.focus();
    await page.keyboard.press('Control+Alt+KeyN');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect((save.args.settings as Settings).meetingKey).toBe('ctrl+alt+n');
    expect(problems).toEqual([]);
    await close();
  });

  it('turns the hands-free stop on, in seconds, and saves it in ms', async () => {
    const { page, problems, close } = await open(h, baseFixture(), { hash: 'settings' });
    await page.getByTestId('stop-on-silence-on').check();
    const seconds = page.getByTestId('stop-on-silence-seconds');
    expect(await seconds.inputValue()).toBe('2');
    await seconds.fill('0.2');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-stop-on-silence').waitFor();
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await seconds.fill('1.5');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect((save.args.settings as Settings).stopOnSilenceMs).toBe(1500);
    expect(problems).toEqual([]);
    await close();
  });

  it('sets the key pressed after the text, the spoken “send” and English dictation, and saves them', async () => {
    const { page, problems, close } = await open(h, baseFixture(), { hash: 'settings' });
    await page.getByTestId('submit-select').selectOption('ctrl_enter');
    await page.getByTestId('spoken-submit').check();
    await page.getByTestId('translate').check();
    await page.getByTestId('duck-select').selectOption('10');
    await page.getByTestId('edit-commands').uncheck();
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    const saved = save.args.settings as Settings;
    expect(saved.submit).toBe('ctrl_enter');
    expect(saved.spokenSubmit).toBe(true);
    expect(saved.translate).toBe(true);
    expect(saved.duckOtherAudio).toBe(10);
    expect(saved.editCommands).toBe(false);
    expect(problems).toEqual([]);
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

describe('microphone', () => {
  it('shows the microphone opened at each press as the default, and saves a ready one', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    const onPress = page.getByTestId('mic-on-press');
    await onPress.waitFor();
    expect(await onPress.isChecked()).toBe(true);
    const choice = await page.getByTestId('microphone-choice').textContent();
    expect(choice).toContain('Open on each press (recommended)');
    expect(choice).toContain('recording indicator');
    expect(choice).toContain('A word said right at the press is kept');
    await page.getByTestId('mic-ready').check();
    await shot(page, 'settings-microphone');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    // Only the choice changed: the profiles go back as they came.
    expect(save.args).toEqual({ settings: { ...f.settings, microphone: 'ready' } });
    await page.getByTestId('toast').waitFor();
    expect(await page.getByTestId('mic-ready').isChecked()).toBe(true);
    expect(problems).toEqual([]);
    await close();
  });

});

describe('apps', () => {
  const profile = (page: Page, i: number) => page.locator(`[data-testid=profile][data-index="${i}"]`);
  const titles = (page: Page) => page.getByTestId('profile-title').allTextContents();

  it('makes a profile from a recent app, edits, reorders and deletes profiles, and saves them', async () => {
    const f = baseFixture();
    f.recentApps = [
      { app: 'Slack', profile: null },
      { app: 'XTerm', profile: 'X terminals (Shift+Insert)' },
    ];
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('apps-section').waitFor();
    expect(await titles(page)).toEqual(['X terminals (Shift+Insert)', 'Terminals (Ctrl+Shift+V)']);
    expect(await page.getByTestId('profile-summary').first().textContent()).toContain('xterm, uxterm, *rxvt*, st and 2 more · paste with Shift+Insert');
    const rows = page.getByTestId('recent-app');
    await rows.first().waitFor();
    expect(await page.getByTestId('recent-app-name').allTextContents()).toEqual(['Slack', 'XTerm']);
    expect(await rows.nth(0).getByTestId('recent-profile').textContent()).toContain('no profile');
    expect(await rows.nth(1).getByTestId('recent-profile').textContent()).toContain('got “X terminals (Shift+Insert)”');

    // One click: a profile for Slack, first in the list, open, scrolled to, its name ready to type over.
    await rows.nth(0).getByTestId('recent-make').click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'profile-name');
    expect(await profile(page, 0).getAttribute('data-name')).toBe('Slack');
    expect(await profile(page, 0).evaluate((e) => (e as HTMLDetailsElement).open)).toBe(true);
    expect(await profile(page, 0).getByTestId('profile-name').isVisible()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.closest('[data-testid=profile]')?.getAttribute('data-index'))).toBe('0');
    expect(await profile(page, 0).getByTestId('profile-app-item').allTextContents()).toEqual(['Slack']);
    // Made: the row offers the profile instead of another one.
    expect(await rows.nth(0).getByTestId('recent-make').count()).toBe(0);
    await rows.nth(0).getByTestId('recent-show').waitFor();
    await shot(page, 'settings-apps-made');

    const chat = profile(page, 0);
    await page.keyboard.type('Chat');
    await chat.getByTestId('profile-app-input').fill('com.slack.Slack');
    await chat.getByTestId('profile-app-input').press('Enter');
    await chat.getByTestId('profile-final-period').selectOption('off');
    await chat.getByTestId('profile-language').selectOption('de');
    await chat.getByTestId('profile-vocab-input').fill('Kubernetes');
    await chat.getByTestId('profile-vocab-add').click();
    // "Same as settings" names the settings' value.
    expect(await chat.getByTestId('profile-trailing-space').locator('option').first().textContent()).toBe('Same as settings (on)');
    expect(await chat.getByTestId('profile-summary').textContent()).toContain('no final period · German (de) · 1 word');

    // A terminal's profile starts from the one it got, so it keeps pasting with Shift+Insert.
    await rows.nth(1).getByTestId('recent-make').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=profile][data-index="0"]')?.getAttribute('data-name') === 'XTerm');
    const xterm = profile(page, 0);
    expect(await xterm.getByTestId('profile-paste-keys').inputValue()).toBe('shift+insert');
    await xterm.getByTestId('profile-output').selectOption('type');
    expect(await xterm.getByTestId('profile-paste-keys').count()).toBe(0);
    // Chat back to the top.
    await profile(page, 1).getByTestId('profile-up').click();
    expect(await titles(page)).toEqual(['Chat', 'XTerm', 'X terminals (Shift+Insert)', 'Terminals (Ctrl+Shift+V)']);
    // The built-ins are edited and deleted like any other.
    await profile(page, 3).locator('summary').click();
    await profile(page, 3).getByTestId('profile-delete').click();
    await profile(page, 2).locator('summary').click();
    await profile(page, 2).getByTestId('profile-app-remove').nth(5).click();
    expect(await titles(page)).toEqual(['Chat', 'XTerm', 'X terminals (Shift+Insert)']);
    await shot(page, 'settings-apps-edited');

    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect((save.args.settings as Settings).profiles).toEqual([
      { name: 'Chat', apps: ['Slack', 'com.slack.Slack'], finalPeriod: false, language: 'de', vocabulary: ['Kubernetes'] },
      { name: 'XTerm', apps: ['XTerm'], pasteKeys: 'shift+insert', output: 'type' },
      { name: 'X terminals (Shift+Insert)', apps: ['xterm', 'uxterm', '*rxvt*', 'st', 'st-256color'], pasteKeys: 'shift+insert' },
    ]);
    expect(save.args).toEqual({ settings: { ...f.settings, profiles: (save.args.settings as Settings).profiles } });
    await page.getByTestId('toast').waitFor();
    expect(await page.getByTestId('settings-save').isDisabled()).toBe(true);

    // A dictation delivered: the list of recent apps is read again.
    await emit(page, 'dictation', { event: 'text_delivered', id: 2, text: 'Hi', output: 'paste', engine_ms: 1, segments: 1, raw_text: null, error: null });
    await waitForCall(page, 'recent_apps', 2);
    expect(problems).toEqual([]);
    await close();
  });

  it('shows a profile the shell or the page refuses beside its field, opened', async () => {
    const f = baseFixture();
    f.fail = {
      save_settings: 'invalid setting `profiles`: profile `Terminals (Ctrl+Shift+V)`: `[kitty` is not a valid pattern: unclosed character class',
    };
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('apps-section').waitFor();
    expect(await page.getByTestId('recent-empty').textContent()).toContain('Apps you dictate into appear here');
    await page.getByTestId('mic-ready').check();
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-profile-1-apps').waitFor();
    expect(await page.getByTestId('error-profile-1-apps').textContent()).toContain('`[kitty` is not a valid pattern');
    expect(await profile(page, 1).evaluate((e) => (e as HTMLDetailsElement).open)).toBe(true);
    expect(await page.getByTestId('settings-error').textContent()).toContain('invalid setting `profiles`');
    await shot(page, 'settings-apps-rejected');

    // A profile for no app is caught before the shell sees it.
    await page.getByTestId('profile-add').click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'profile-name');
    expect(await profile(page, 2).getAttribute('data-name')).toBe('New profile');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-profile-2-apps').waitFor();
    expect(await page.getByTestId('error-profile-2-apps').textContent()).toContain('add an app name or pattern');
    expect(await calls(page, 'save_settings')).toHaveLength(1);
    expect(problems).toEqual([]);
    await close();
  });

  it('offers no Shift+Insert on macOS, and catches a profile that still has it', async () => {
    const f = baseFixture();
    const mac = `Object.defineProperty(Navigator.prototype, 'platform', { get: () => 'MacIntel' });`;
    const { page, close } = await open(h, f, { hash: 'settings', init: mac });
    const keys = page.getByTestId('paste-keys-select');
    await keys.waitFor();
    expect(await keys.locator('option').allTextContents()).toEqual(['Cmd+V', 'Ctrl+Shift+V']);
    await profile(page, 0).locator('summary').click();
    const options = await profile(page, 0).getByTestId('profile-paste-keys').locator('option').allTextContents();
    expect(options).toEqual(['Same as settings (Cmd+V)', 'Cmd+V', 'Ctrl+Shift+V', 'Shift+Insert (not on macOS)']);
    await page.getByTestId('mic-ready').check();
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-profile-0-paste-keys').waitFor();
    expect(await page.getByTestId('error-profile-0-paste-keys').textContent()).toContain('does not exist on macOS');
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await profile(page, 0).getByTestId('profile-paste-keys').selectOption('ctrl+shift+v');
    await page.getByTestId('settings-save').click();
    const [save] = await waitForCall(page, 'save_settings');
    expect((save.args.settings as Settings).profiles[0].pasteKeys).toBe('ctrl+shift+v');
    await close();
  });
});
