// Settings → AI (the optional rewrite of each dictation), and how a rewrite
// shows in History, on Home and in the overlay.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { calls, emit, open, shot, start, waitForCall, type Harness } from './harness';
import { baseFixture, historyEntry } from './fixture';
import type { RewriteConfig, Settings } from '../../src/lib/types';

let h: Harness;
beforeAll(async () => {
  h = await start();
});
afterAll(async () => {
  await h?.close();
});

const saved = async (page: Page, n = 1) => (await waitForCall(page, 'save_settings', n))[n - 1].args.settings as Settings;

describe('settings → AI', () => {
  it('is off by default; turning it on says where the words go and waits for a yes', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    const enabled = page.getByTestId('ai-enabled');
    await enabled.waitFor();
    expect(await enabled.isChecked()).toBe(false);
    // Providers grouped, the ones on this computer first.
    const groups = await page.$$eval('[data-testid=ai-provider] optgroup', (gs) =>
      gs.map((g) => [g.getAttribute('label'), [...g.querySelectorAll('option')].map((o) => o.value)]),
    );
    expect(groups).toEqual([
      ['On this computer', ['ollama', 'lm-studio', 'llama-cpp', 'vllm']],
      ['Hosted, with your key', ['openai', 'openrouter', 'groq', 'anthropic', 'custom']],
    ]);
    expect(await page.getByTestId('ai-base-url').getAttribute('placeholder')).toBe('http://localhost:11434/v1');

    // A local server: the sentence says the words stay here. Cancel leaves it off.
    await enabled.check();
    await page.getByTestId('ai-destination').waitFor();
    expect(await page.getByTestId('ai-destination').textContent()).toContain('a server on this computer; it does not leave this computer');
    await page.getByTestId('ai-confirm-cancel').click();
    expect(await enabled.isChecked()).toBe(false);
    expect(await page.getByTestId('ai-confirm').count()).toBe(0);

    // A hosted one: the question names it, and nothing is on until the yes.
    await page.getByTestId('ai-provider').selectOption('openai');
    expect(await page.getByTestId('ai-base-url').getAttribute('placeholder')).toBe('https://api.openai.com/v1');
    await enabled.check();
    await page.getByTestId('ai-confirm').waitFor();
    await page.getByText('sent over the internet to OpenAI').waitFor();
    expect(await page.getByTestId('ai-destination').textContent()).toBe(
      "What you dictate will be sent over the internet to OpenAI (https://api.openai.com/v1) with your API key, and handled under OpenAI's terms and privacy policy.",
    );
    await shot(page, 'settings-ai-confirm');
    // Unanswered, a save keeps it off.
    await page.getByTestId('settings-save').click();
    expect((await saved(page)).rewrite.enabled).toBe(false);
    await page.getByTestId('toast').waitFor();

    await page.getByTestId('ai-confirm-on').click();
    expect(await enabled.isChecked()).toBe(true);
    expect(await page.getByTestId('ai-confirm').count()).toBe(0);
    // On needs a model: caught beside its field before the shell sees it.
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-ai-model').waitFor();
    expect(await page.getByTestId('error-ai-model').textContent()).toContain('Choose a model');
    expect(await calls(page, 'save_settings')).toHaveLength(1);
    await page.getByTestId('ai-model').fill('gpt-4o-mini');
    await page.getByTestId('settings-save').click();
    const s = await saved(page, 2);
    expect(s.rewrite).toEqual({
      enabled: true,
      provider: { kind: 'openai', baseUrl: null, model: 'gpt-4o-mini', timeBudgetMs: 2000 },
      mode: 'clean-up',
      modes: [],
      commandPrompt: null,
    } satisfies RewriteConfig);
    expect(s).toEqual({ ...f.settings, rewrite: s.rewrite });
    // Nothing was sent to a server along the way.
    expect(await calls(page, 'rewrite_test')).toHaveLength(0);
    expect(await calls(page, 'rewrite_models')).toHaveLength(0);

    // Another provider while on: the words would go elsewhere, so the question comes again.
    await page.getByTestId('ai-provider').selectOption('groq');
    await page.getByTestId('ai-confirm').waitFor();
    await page.getByText('sent over the internet to Groq').waitFor();
    await page.getByTestId('ai-confirm-cancel').click();
    expect(await enabled.isChecked()).toBe(false);
    expect(problems).toEqual([]);
    await close();
  });

  it('lists the server’s models into the choices, and Test shows the time or why it failed', async () => {
    const f = baseFixture();
    f.rewriteModels = ['llama3.2:3b', 'qwen2.5:7b'];
    f.rewriteTest = { result: 'answered', text: 'So this is a quick test of the rewrite.', model: 'qwen2.5:7b', firstTokenMs: 210, totalMs: 840 };
    f.delays = { rewrite_test: 400 };
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('ai-provider').selectOption('llama-cpp');
    // No key for a server on this computer.
    expect(await page.getByTestId('ai-key-input').count()).toBe(0);
    await page.getByTestId('ai-base-url').fill('http://127.0.0.1:9999/v1');
    await page.getByTestId('ai-list-models').click();
    const choices = page.getByTestId('ai-model-choices');
    await choices.waitFor();
    expect((await waitForCall(page, 'rewrite_models'))[0].args).toEqual({
      provider: { kind: 'llama-cpp', baseUrl: 'http://127.0.0.1:9999/v1', model: '', timeBudgetMs: 2000 },
    });
    expect(await choices.locator('option').allTextContents()).toEqual(['2 models on the server', 'llama3.2:3b', 'qwen2.5:7b']);
    await choices.selectOption('qwen2.5:7b');
    expect(await page.getByTestId('ai-model').inputValue()).toBe('qwen2.5:7b');
    expect(await page.$$eval('#ai-model-list option', (o) => o.map((x) => (x as HTMLOptionElement).value))).toEqual(['llama3.2:3b', 'qwen2.5:7b']);
    await page.getByTestId('ai-budget').fill('1.5');

    const test = page.getByTestId('ai-test');
    await test.click();
    // Disabled while the call runs (up to the time budget).
    expect(await test.isDisabled()).toBe(true);
    expect(await test.textContent()).toContain('Testing…');
    await page.getByTestId('ai-test-time').waitFor();
    expect(await page.getByTestId('ai-test-time').textContent()).toBe('Answered in 840 ms, first words after 210 ms');
    expect(await page.getByTestId('ai-test-text').textContent()).toBe('So this is a quick test of the rewrite.');
    expect(await test.isDisabled()).toBe(false);
    expect((await calls(page, 'rewrite_test'))[0].args).toEqual({
      provider: { kind: 'llama-cpp', baseUrl: 'http://127.0.0.1:9999/v1', model: 'qwen2.5:7b', timeBudgetMs: 1500 },
    });
    await shot(page, 'settings-ai-tested');

    // A failed test: the notice, as a sentence.
    await page.evaluate(() => {
      window.__shell.state.rewriteTest = { result: 'failed', notice: { kind: 'timed-out', afterMs: 1500 } };
      window.__shell.state.fail = { rewrite_models: 'The server answered with error 503.' };
    });
    await test.click();
    await page.getByTestId('ai-test-notice').waitFor();
    expect(await page.getByTestId('ai-test-notice').textContent()).toBe('The model did not finish within 1.5 s.');
    expect(await page.getByTestId('ai-test-time').count()).toBe(0);
    // Listing that fails says why.
    await page.getByTestId('ai-list-models').click();
    await page.getByTestId('ai-models-error').waitFor();
    expect(await page.getByTestId('ai-models-error').textContent()).toBe('The server answered with error 503.');

    await page.getByTestId('settings-save').click();
    expect((await saved(page)).rewrite.provider).toEqual({
      kind: 'llama-cpp',
      baseUrl: 'http://127.0.0.1:9999/v1',
      model: 'qwen2.5:7b',
      timeBudgetMs: 1500,
    });
    expect(problems).toEqual([]);
    await close();
  });

  it('saves an API key in the system keychain, never in the settings, and clears the field', async () => {
    const f = baseFixture();
    const key = 'sk-test-0123456789abcdef';
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('ai-provider').selectOption('openai');
    const input = page.getByTestId('ai-key-input');
    await input.waitFor();
    expect((await waitForCall(page, 'api_key_saved'))[0].args).toEqual({ kind: 'openai' });
    expect(await input.getAttribute('type')).toBe('password');
    await input.fill(key);
    // Enter saves the key; it does not submit the settings.
    await input.press('Enter');
    expect((await waitForCall(page, 'save_api_key'))[0].args).toEqual({ kind: 'openai', key });
    await page.getByTestId('ai-key-saved').waitFor();
    expect(await page.getByTestId('ai-key-saved').textContent()).toBe('Saved in the system keychain');
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    expect(await page.getByTestId('ai-key-input').count()).toBe(0);

    // Replace: an empty field again; the saved key is never shown.
    await page.getByTestId('ai-key-replace').click();
    expect(await page.getByTestId('ai-key-input').inputValue()).toBe('');
    expect(await page.getByTestId('ai-key-save').isDisabled()).toBe(true);
    await page.getByTestId('ai-key-cancel').click();
    expect(await page.content()).not.toContain(key);

    // The settings go without it.
    await page.getByTestId('ai-model').fill('gpt-4o-mini');
    await page.getByTestId('settings-save').click();
    const s = await saved(page);
    expect(JSON.stringify(s)).not.toContain(key);
    expect(s.rewrite.provider).toEqual({ kind: 'openai', baseUrl: null, model: 'gpt-4o-mini', timeBudgetMs: 2000 });

    // Another provider asks the keychain again; back to OpenAI: saved, and Remove deletes it.
    await page.getByTestId('ai-provider').selectOption('ollama');
    expect(await page.getByTestId('ai-key-saved').count()).toBe(0);
    await page.getByTestId('ai-provider').selectOption('openai');
    await page.getByTestId('ai-key-remove').click();
    expect((await waitForCall(page, 'delete_api_key'))[0].args).toEqual({ kind: 'openai' });
    await page.getByTestId('ai-key-input').waitFor();
    expect(problems).toEqual([]);
    await close();
  });

  it('edits a built-in mode’s prompt as a same-id mode, adds and removes own modes, and a profile picks one', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'settings' });
    const mode = (id: string) => page.locator(`[data-testid=ai-mode-item][data-id="${id}"]`);
    await mode('formal').waitFor();
    expect(await page.getByTestId('ai-mode-title').allTextContents()).toEqual(['Clean-up', 'Formal', 'Email', 'Bullet list', 'Code comment']);
    expect(await page.getByTestId('ai-mode').locator('option').allTextContents()).toEqual([
      'Clean-up', 'Formal', 'Email', 'Bullet list', 'Code comment', 'None (spoken commands only)',
    ]);

    await mode('formal').getByTestId('ai-mode-edit').click();
    const prompt = mode('formal').getByTestId('ai-mode-prompt');
    expect(await prompt.inputValue()).toBe('Rewrite the text in a clear, courteous, professional register.');
    await prompt.fill('Write it as a lawyer would.');
    expect(await mode('formal').getByTestId('ai-mode-tag').textContent()).toBe('Built-in, edited');
    await mode('formal').getByTestId('ai-mode-restore').waitFor();
    await shot(page, 'settings-ai-mode-editor');

    // An own mode: its name ready to type over; its id is what profiles and the CLI use.
    await page.getByTestId('ai-mode-add').click();
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'ai-mode-name');
    await page.keyboard.type('Haiku');
    const own = page.locator('[data-testid=ai-mode-item][data-index="5"]');
    await own.getByTestId('ai-mode-id').fill('haiku');
    await own.getByTestId('ai-mode-id').press('Tab');
    // Without instructions it is caught before the shell sees it.
    await page.getByTestId('settings-save').click();
    await own.getByTestId('ai-mode-error').waitFor();
    expect(await own.getByTestId('ai-mode-error').textContent()).toContain('Write what the model should do');
    expect(await calls(page, 'save_settings')).toHaveLength(0);
    await own.getByTestId('ai-mode-prompt').fill('Three short lines.');
    // An id another mode has is refused.
    await own.getByTestId('ai-mode-id').fill('email');
    await own.getByTestId('ai-mode-id').press('Tab');
    expect(await own.getByTestId('ai-mode-error').textContent()).toContain('“Email” has the id “email”');
    expect(await own.getByTestId('ai-mode-id').inputValue()).toBe('haiku');
    await page.getByTestId('ai-mode').selectOption('haiku');

    // A profile turns the rewrite off in its apps; another uses a mode of its own.
    const terminals = page.locator('[data-testid=profile][data-index="0"]');
    await terminals.locator('summary').click();
    const options = await terminals.getByTestId('profile-rewrite').locator('option').allTextContents();
    expect(options).toEqual(['Settings’ mode (Haiku)', 'Off', 'Clean-up', 'Formal', 'Email', 'Bullet list', 'Code comment', 'Haiku']);
    await terminals.getByTestId('profile-rewrite').selectOption('off');
    expect(await terminals.getByTestId('profile-summary').textContent()).toContain('no AI rewrite');
    const kitty = page.locator('[data-testid=profile][data-index="1"]');
    await kitty.locator('summary').click();
    await kitty.getByTestId('profile-rewrite').selectOption('formal');
    await shot(page, 'settings-ai-modes');

    await page.getByTestId('settings-save').click();
    let s = await saved(page);
    expect(s.rewrite.modes).toEqual([
      { id: 'formal', name: 'Formal', prompt: 'Write it as a lawyer would.' },
      { id: 'haiku', name: 'Haiku', prompt: 'Three short lines.' },
    ]);
    expect(s.rewrite.mode).toBe('haiku');
    expect(s.profiles[0].rewrite).toBe('off');
    expect(s.profiles[1].rewrite).toBe('formal');
    await page.getByTestId('toast').waitFor();

    // Restore brings our prompt back; removing the mode in use falls back to clean-up, and a
    // profile still naming it is caught.
    await mode('formal').getByTestId('ai-mode-restore').click();
    expect(await mode('formal').getByTestId('ai-mode-tag').textContent()).toBe('Built-in');
    // The saved profiles came back as new rows: open the first again.
    if (!(await terminals.evaluate((d) => (d as HTMLDetailsElement).open))) await terminals.locator('summary').click();
    await terminals.getByTestId('profile-rewrite').selectOption('haiku');
    await mode('haiku').getByTestId('ai-mode-remove').click();
    expect(await page.getByTestId('ai-mode').inputValue()).toBe('clean-up');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-profile-0-rewrite').waitFor();
    expect(await page.getByTestId('error-profile-0-rewrite').textContent()).toContain('no AI mode “haiku” any more');
    await terminals.getByTestId('profile-rewrite').selectOption('');
    await page.getByTestId('settings-save').click();
    s = await saved(page, 2);
    expect(s.rewrite.modes).toEqual([]);
    expect(s.rewrite.mode).toBe('clean-up');
    expect(s.profiles[0].rewrite).toBeUndefined();
    expect(problems).toEqual([]);
    await close();
  });

  it('shows the shell’s refusal of the AI settings in the AI section', async () => {
    const f = baseFixture();
    f.fail = { save_settings: 'invalid setting `rewrite`: the server address `http://x` is not usable: bad port' };
    const { page, close } = await open(h, f, { hash: 'settings' });
    await page.getByTestId('ai-budget').fill('3');
    await page.getByTestId('settings-save').click();
    await page.getByTestId('error-rewrite').waitFor();
    expect(await page.getByTestId('error-rewrite').textContent()).toContain('is not usable: bad port');
    await close();
  });
});

describe('rewritten dictations', () => {
  it('History says which model rewrote a text, with the dictated words one click away, or why it was kept', async () => {
    const f = baseFixture();
    f.history = [
      historyEntry(1, {
        text: 'Dear Anna, the release is ready for your review.',
        rewrite: { mode: 'email', dictated: 'tell anna the release is ready for review', model: 'qwen2.5:3b', ms: 830 },
      }),
      historyEntry(2, {
        text: 'um the the meeting is at five',
        rewrite: { mode: 'clean-up', dictated: 'um the the meeting is at five', notice: { kind: 'timed-out', afterMs: 2000 }, ms: 2000 },
      }),
      historyEntry(3, { text: 'Plain words.' }),
    ];
    const { page, problems, close } = await open(h, f, { hash: 'history' });
    const item = (i: number) => page.getByTestId('history-item').nth(i);
    await item(0).waitFor();
    const rewrite = item(0).getByTestId('history-rewrite');
    expect(await item(0).getByTestId('history-rewrite-summary').textContent()).toContain('Rewritten by qwen2.5:3b');
    expect(await item(0).getByTestId('history-dictated').isVisible()).toBe(false);
    await item(0).getByTestId('history-rewrite-summary').click();
    expect(await item(0).getByTestId('history-dictated').isVisible()).toBe(true);
    expect(await item(0).getByTestId('history-dictated').textContent()).toBe('tell anna the release is ready for review');
    expect(await rewrite.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await item(1).getByTestId('history-rewrite-kept').textContent()).toContain(
      'Delivered as dictated: The model did not finish within 2 s.',
    );
    expect(await item(2).getByTestId('history-rewrite').count()).toBe(0);
    expect(await item(2).getByTestId('history-rewrite-kept').count()).toBe(0);
    await shot(page, 'history-rewritten');
    expect(problems).toEqual([]);
    await close();
  });

  it('Home says “Rewriting…” while the model works, then which model rewrote the last text', async () => {
    const f = baseFixture();
    const { page, problems, close } = await open(h, f, { hash: 'home' });
    await page.getByTestId('home-state').waitFor();
    await emit(page, 'status', { ...f.status, state: 'recording' });
    await emit(page, 'dictation', { event: 'recording_started', id: 3, audio_path: '/rec/3.wav' });
    await emit(page, 'dictation', { event: 'partial_text', id: 3, settled: 'tell anna the release is ready', tentative: '' });
    await emit(page, 'status', { ...f.status, state: 'transcribing' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Transcribing…');
    await emit(page, 'dictation', { event: 'rewriting', id: 3, mode: 'email' });
    await page.waitForFunction(() => document.querySelector('[data-testid=home-state]')?.textContent === 'Rewriting…');
    expect(await page.getByTestId('home-state').getAttribute('data-state')).toBe('transcribing');
    expect(await page.getByTestId('home-detail').textContent()).toContain('rewriting the text (email)');
    await shot(page, 'home-rewriting');

    const text = 'Dear Anna, the release is ready.';
    await emit(page, 'dictation', {
      event: 'text_delivered', id: 3, text, output: 'paste', engine_ms: 300, segments: 1, raw_text: null, error: null,
      rewrite: { mode: 'email', dictated: 'tell anna the release is ready', model: 'qwen2.5:3b', ms: 700 },
    });
    await emit(page, 'status', { ...f.status, state: 'idle', lastText: text });
    await page.getByTestId('last-rewrite').waitFor();
    expect(await page.getByTestId('home-state').textContent()).toBe('Ready');
    expect(await page.getByTestId('last-text').textContent()).toBe(text);
    expect(await page.getByTestId('last-rewrite-summary').textContent()).toContain('Rewritten by qwen2.5:3b');
    await page.getByTestId('last-rewrite-summary').click();
    expect(await page.getByTestId('last-dictated').textContent()).toBe('tell anna the release is ready');

    // Kept as dictated: why, in a sentence.
    await emit(page, 'dictation', {
      event: 'text_delivered', id: 4, text: 'see you', output: 'paste', engine_ms: 300, segments: 1, raw_text: null, error: null,
      rewrite: { mode: 'clean-up', dictated: 'see you', notice: { kind: 'unreachable', url: 'http://localhost:11434/v1', detail: 'connection refused' }, ms: 3 },
    });
    await emit(page, 'status', { ...f.status, state: 'idle', lastText: 'see you' });
    await page.getByTestId('last-rewrite-kept').waitFor();
    expect(await page.getByTestId('last-rewrite-kept').textContent()).toContain(
      'Delivered as dictated: Could not reach the server at http://localhost:11434/v1: connection refused.',
    );
    expect(await page.getByTestId('last-rewrite').count()).toBe(0);
    expect(problems).toEqual([]);
    await close();
  });

  it('the overlay says “Rewriting…” while the model works', async () => {
    const f = baseFixture();
    f.status.state = 'transcribing';
    const { page, problems, close } = await open(h, f, { path: 'overlay.html', viewport: { width: 220, height: 56 } });
    await page.getByText('Transcribing…').waitFor();
    await emit(page, 'dictation', { event: 'rewriting', id: 5, mode: 'clean-up' });
    await page.getByText('Rewriting…').waitFor();
    expect(await page.getByTestId('overlay-busy').textContent()).toBe('Rewriting…');
    await shot(page, 'overlay-rewriting');
    await emit(page, 'dictation', { event: 'text_delivered', id: 5, text: 'Hi.', output: 'paste', engine_ms: 1, segments: 1, raw_text: null, error: null });
    await page.getByText('Transcribing…').waitFor();
    expect(problems).toEqual([]);
    await close();
  });
});
