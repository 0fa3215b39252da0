import { describe, expect, it } from 'vitest';
import {
  COMMON_LANGUAGES,
  languageName,
  languageOptions,
  parseShellError,
  sensitivityFromThreshold,
  snippetProblem,
  thresholdFromSensitivity,
  validateSettings,
} from '../../src/lib/settings';
import type { Settings } from '../../src/lib/types';
import { defaultSettings } from '../builders';

const defaults: Settings = defaultSettings();

describe('snippetProblem (mirror of crates/postprocess/src/snippets.rs)', () => {
  const snippet = (trigger: string, text: string, inSentence = false) => ({ trigger, text, inSentence });

  it('accepts multi-line texts with placeholders and other braces', () => {
    expect(snippetProblem([snippet('my address', '12 Main St\nSpringfield\n{date} {time}'), snippet('main fn', 'fn main() {}')])).toBeNull();
    expect(snippetProblem([snippet('my address', 'x', true)])).toBeNull();
  });

  it.each([
    [[snippet(' ', 'x')], 'Snippet 1: say what triggers it'],
    [[snippet('sign off', '  \n ')], 'write the text it inserts'],
    [[snippet('sign off', 'on {today}')], '{today} is not a placeholder'],
    [[snippet('thanks', 'Thank you!', true)], 'two words or more'],
    [[snippet('my address', 'a'), snippet('My-Address', 'b')], 'are the same trigger'],
  ])('refuses %j', (snippets, message) => {
    expect(snippetProblem(snippets)).toContain(message);
    expect(validateSettings({ ...defaultSettings(), snippets })?.field).toBe('snippets');
  });
});

describe('validateSettings (mirror of the shell)', () => {
  it('accepts the defaults', () => {
    expect(validateSettings(defaults)).toBeNull();
  });

  it.each([
    [{ hotkey: '' }, 'hotkey'],
    [{ hotkey: 'ctrl+' }, 'hotkey'],
    [{ language: 'English' }, 'language'],
    [{ vadThreshold: 0.99 }, 'vadThreshold'],
    [{ silenceMs: 100 }, 'silenceMs'],
    [{ silenceMs: 3001 }, 'silenceMs'],
    [{ silenceMs: 650.5 }, 'silenceMs'],
    [{ stopOnSilenceMs: 400 }, 'stopOnSilenceMs'],
    [{ stopOnSilenceMs: 30001 }, 'stopOnSilenceMs'],
    [{ keepAudioDays: -1 }, 'keepAudioDays'],
    [{ keepAudioDays: 4000 }, 'keepAudioDays'],
    [{ maxAudioMinutes: 0 }, 'maxAudioMinutes'],
    [{ maxAudioMinutes: 20000 }, 'maxAudioMinutes'],
    [{ engineIdleUnloadMinutes: -1 }, 'engineIdleUnloadMinutes'],
    [{ engineIdleUnloadMinutes: 1441 }, 'engineIdleUnloadMinutes'],
    [{ engineIdleUnloadMinutes: 1.5 }, 'engineIdleUnloadMinutes'],
    [{ serverPort: 80 }, 'serverPort'],
    [{ serverPort: 70000 }, 'serverPort'],
    [{ inputDevice: '' }, 'inputDevice'],
  ] as [Partial<Settings>, keyof Settings][])('rejects %o in %s', (change, field) => {
    expect(validateSettings({ ...defaults, ...change })?.field).toBe(field);
  });

  it('refuses Shift+Insert on macOS only, and an unknown microphone mode', () => {
    expect(validateSettings({ ...defaults, pasteKeys: 'shift+insert' }, false)).toBeNull();
    expect(validateSettings({ ...defaults, pasteKeys: 'shift+insert' }, true)?.field).toBe('pasteKeys');
    expect(validateSettings({ ...defaults, microphone: 'on_press' })).toBeNull();
    expect(validateSettings({ ...defaults, microphone: 'always' as Settings['microphone'] })?.field).toBe('microphone');
  });

  it('needs a command shortcut other than the dictation one, or none', () => {
    expect(validateSettings({ ...defaults, commandKey: null })).toBeNull();
    expect(validateSettings({ ...defaults, commandKey: 'ctrl+' })?.field).toBe('commandKey');
    expect(validateSettings({ ...defaults, commandKey: 'shift+ctrl+space' })?.message).toContain('must differ');
  });

  it('accepts the range edges', () => {
    expect(validateSettings({ ...defaults, silenceMs: 200, keepAudioDays: 0, vadThreshold: 0.1 })).toBeNull();
    expect(validateSettings({ ...defaults, silenceMs: 3000, keepAudioDays: 3650, vadThreshold: 0.9 })).toBeNull();
    expect(validateSettings({ ...defaults, stopOnSilenceMs: 500 })).toBeNull();
    expect(validateSettings({ ...defaults, stopOnSilenceMs: 30000 })).toBeNull();
  });

  it('finds the field in a shell rejection', () => {
    expect(parseShellError('invalid setting `silenceMs`: must be between 200 and 3000 ms').field).toBe('silenceMs');
    expect(parseShellError('disk full').field).toBeNull();
  });
});

describe('languages', () => {
  it('offers auto only when the model detects languages', () => {
    expect(languageOptions({ languages: ['en', 'de'], detectsLanguage: true }, 'auto')[0]).toBe('auto');
    const noDetect = languageOptions({ languages: ['en', 'de'], detectsLanguage: false }, 'en');
    expect(noDetect).not.toContain('auto');
    expect(noDetect).toEqual(['de', 'en'].sort((a, b) => languageName(a).localeCompare(languageName(b))));
  });

  it('falls back to common languages and keeps the current value', () => {
    const opts = languageOptions({ languages: [], detectsLanguage: false }, 'auto');
    expect(opts[0]).toBe('auto');
    expect(opts).toEqual(expect.arrayContaining(COMMON_LANGUAGES));
    expect(languageOptions({ languages: ['en'], detectsLanguage: false }, 'xx')).toContain('xx');
    expect(languageName('de')).toBe('German (de)');
    expect(languageName('qq')).toBe('qq');
  });
});

describe('sensitivity scale', () => {
  it('is the inverse of the threshold', () => {
    expect(sensitivityFromThreshold(0.5)).toBe(50);
    expect(sensitivityFromThreshold(0.3)).toBe(70);
    expect(thresholdFromSensitivity(70)).toBe(0.3);
    expect(thresholdFromSensitivity(sensitivityFromThreshold(0.65))).toBe(0.65);
  });
});
