import { describe, expect, it } from 'vitest';
import {
  allModes,
  baseUrlProblem,
  budgetMs,
  budgetSeconds,
  editBuiltIn,
  effectiveBaseUrl,
  formatMs,
  isEdited,
  modeIdConflict,
  modeName,
  newMode,
  newModeId,
  noticeText,
  ownModeIndex,
  providerGroups,
  rewriteNote,
  seconds,
  testSummary,
  validModeId,
  validateProfileModes,
  validateRewrite,
  withoutMode,
} from '../../src/lib/rewrite';
import type { Notice, Profile, RewriteConfig, RewriteMode } from '../../src/lib/types';
import { builtInModes, defaultRewrite, providerInfos } from '../builders';

const builtIns = builtInModes();
const providers = providerInfos();
const info = (kind: string) => providers.find((p) => p.kind === kind);

describe('noticeText (the Rust Display texts of crates/rewrite/src/outcome.rs)', () => {
  it.each<[Notice, string]>([
    [{ kind: 'not-configured', reason: 'no model is chosen' }, 'AI rewriting is not set up: no model is chosen.'],
    [{ kind: 'key-missing', provider: 'OpenAI' }, 'No API key for OpenAI is saved; add one in Settings → AI.'],
    [{ kind: 'keychain-failed', detail: 'locked' }, 'The API key could not be read: locked.'],
    [{ kind: 'nothing-said' }, 'There was no text to rewrite.'],
    [{ kind: 'timed-out', afterMs: 2000 }, 'The model did not finish within 2 s.'],
    [{ kind: 'timed-out', afterMs: 1500 }, 'The model did not finish within 1.5 s.'],
    [{ kind: 'timed-out', afterMs: 10000 }, 'The model did not finish within 10 s.'],
    [
      { kind: 'unreachable', url: 'http://localhost:11434/v1', detail: 'connection refused' },
      'Could not reach the server at http://localhost:11434/v1: connection refused.',
    ],
    [{ kind: 'server-error', status: 500, detail: 'model crashed' }, 'The server answered with error 500: model crashed.'],
    [{ kind: 'server-error', status: 401, detail: null }, 'The server refused the API key (error 401).'],
    [{ kind: 'server-error', status: 403, detail: 'no' }, 'The server refused the API key (error 403): no.'],
    [{ kind: 'server-error', status: 404, detail: null }, 'The server does not know this model or address (error 404).'],
    [{ kind: 'server-error', status: 429, detail: null }, 'The server is rate-limiting requests (error 429).'],
    [
      { kind: 'server-error', status: 307, detail: null },
      'The server redirected the request elsewhere (status 307); set its final address.',
    ],
    [{ kind: 'stream-error', message: 'overloaded' }, 'The server reported an error: overloaded.'],
    [{ kind: 'connection-closed' }, 'The connection closed before the answer was complete.'],
    [
      { kind: 'unreadable', detail: 'not JSON' },
      "The server's answer could not be read (not JSON); check the server address.",
    ],
    [{ kind: 'empty-answer' }, "The model's answer was empty."],
    [{ kind: 'truncated' }, "The model's answer ran past the length allowed for this text and was cut off."],
    [
      { kind: 'too-long', answerChars: 900, inputChars: 20 },
      "The model's answer was far longer than what you said (900 characters for 20).",
    ],
    [{ kind: 'refusal' }, 'The model answered with a refusal instead of the text.'],
    [{ kind: 'failed', detail: 'cannot start a thread' }, 'The rewrite stopped unexpectedly: cannot start a thread.'],
  ])('%j', (notice, sentence) => {
    expect(noticeText(notice)).toBe(sentence);
  });

  it('reads seconds as a person does', () => {
    expect(seconds(200)).toBe('0.2');
    expect(seconds(60000)).toBe('60');
    expect(seconds(2250)).toBe('2.3');
  });
});

describe('the test and the times', () => {
  it('says how long the answer took', () => {
    const answered = { result: 'answered', text: 'So this is a quick test.', model: 'm', firstTokenMs: 210, totalMs: 840 } as const;
    expect(testSummary(answered)).toBe('Answered in 840 ms, first words after 210 ms');
    expect(testSummary({ result: 'failed', notice: { kind: 'timed-out', afterMs: 2000 } })).toBe(
      'No answer used: The model did not finish within 2 s.',
    );
    expect(formatMs(12_500)).toBe('12.5 s');
  });

  it('turns the budget between seconds and ms', () => {
    expect(budgetSeconds(2000)).toBe(2);
    expect(budgetSeconds(250)).toBe(0.3);
    expect(budgetMs(0.2)).toBe(200);
    expect(budgetMs(1.25)).toBe(1250);
  });
});

describe('modes: built-ins, their edits and the user’s own', () => {
  const mine: RewriteMode = { id: 'haiku', name: 'Haiku', prompt: 'Three lines.' };

  it('lists the built-ins (an edit in their place), then the user’s modes in order', () => {
    const edit = { id: 'formal', name: 'Formal', prompt: 'Very formal.' };
    const all = allModes(builtIns, [mine, edit]);
    expect(all.map((m) => m.id)).toEqual(['clean-up', 'formal', 'email', 'bullet-list', 'code-comment', 'haiku']);
    expect(all[1].prompt).toBe('Very formal.');
    expect(isEdited('formal', [mine, edit], builtIns)).toBe(true);
    expect(isEdited('email', [mine, edit], builtIns)).toBe(false);
    expect(isEdited('haiku', [mine, edit], builtIns)).toBe(false);
  });

  it('writes an edited prompt as a same-id mode, and restoring removes it', () => {
    const formal = builtIns[1];
    let modes = editBuiltIn([mine], formal, 'Write like a lawyer.');
    expect(modes).toEqual([mine, { id: 'formal', name: 'Formal', prompt: 'Write like a lawyer.' }]);
    modes = editBuiltIn(modes, formal, 'Write like a judge.');
    expect(modes).toEqual([mine, { id: 'formal', name: 'Formal', prompt: 'Write like a judge.' }]);
    // Back to our words: nothing left to restore.
    expect(editBuiltIn(modes, formal, formal.prompt)).toEqual([mine]);
    expect(withoutMode(modes, 'formal')).toEqual([mine]);
  });

  it('finds the user’s own modes among the edits', () => {
    const modes = [{ id: 'email', name: 'Email', prompt: 'x' }, mine, { id: 'b', name: 'B', prompt: 'y' }];
    expect(ownModeIndex(modes, builtIns, 0)).toBe(1);
    expect(ownModeIndex(modes, builtIns, 1)).toBe(2);
    expect(ownModeIndex(modes, builtIns, 2)).toBe(-1);
  });

  it('gives a new mode a name and an id no mode has', () => {
    expect(newModeId('Meeting notes!', [])).toBe('meeting-notes');
    expect(newModeId('Café au lait', [])).toBe('cafe-au-lait');
    expect(newModeId('Formal', builtIns.map((m) => m.id))).toBe('formal-2');
    expect(newModeId('Off', [])).toBe('off-2');
    expect(newModeId('!!!', [])).toBe('mode');
    const all = allModes(builtIns, [{ id: 'my-mode', name: 'My mode', prompt: 'p' }]);
    expect(newMode(all)).toEqual({ id: 'my-mode-2', name: 'My mode 2', prompt: '' });
  });

  it('refuses an id that another mode, "off" or "command" has', () => {
    const all = allModes(builtIns, [mine]);
    expect(modeIdConflict('formal', all, 5)).toContain('“Formal” has the id “formal”');
    expect(modeIdConflict('haiku', all, 5)).toBeNull();
    expect(modeIdConflict('off', all, 5)).toContain('turns rewriting off');
    expect(modeIdConflict('command', all, 5)).toContain('spoken commands');
  });

  it('checks ids as the shell does', () => {
    expect(validModeId('clean-up')).toBe(true);
    expect(validModeId('mode-2')).toBe(true);
    expect(validModeId('My Mode')).toBe(false);
    expect(validModeId('-x')).toBe(false);
    expect(validModeId('x-')).toBe(false);
    expect(validModeId('')).toBe(false);
    expect(validModeId('a'.repeat(41))).toBe(false);
  });

  it('names modes', () => {
    expect(modeName('formal', builtIns)).toBe('Formal');
    expect(modeName('off', builtIns)).toBe('None');
    expect(modeName('gone', builtIns)).toBe('gone');
  });
});

describe('validateRewrite (mirror of RewriteConfig::validate)', () => {
  const config = (over: Partial<RewriteConfig> = {}): RewriteConfig => ({ ...defaultRewrite(), ...over });
  const on = (provider: Partial<RewriteConfig['provider']> = {}, over: Partial<RewriteConfig> = {}) =>
    config({ enabled: true, provider: { kind: 'llama-cpp', baseUrl: null, model: 'qwen', timeBudgetMs: 2000, ...provider }, ...over });
  const check = (c: RewriteConfig) => validateRewrite(c, builtIns, info(c.provider.kind));

  it('accepts the defaults (off, no model yet) and a set-up provider', () => {
    expect(check(config())).toBeNull();
    expect(check(on())).toBeNull();
    expect(check(on({}, { mode: 'off' }))).toBeNull();
  });

  it('needs a model, an address and a budget in range only when on', () => {
    expect(check(on({ model: '  ' }))?.field).toBe('model');
    expect(check(config({ provider: { ...defaultRewrite().provider, timeBudgetMs: 100 } }))).toBeNull();
    expect(check(on({ timeBudgetMs: 100 }))?.field).toBe('budget');
    expect(check(on({ timeBudgetMs: 60_001 }))?.field).toBe('budget');
    expect(check(on({ timeBudgetMs: NaN }))?.message).toContain('between 0.2 and 60 seconds');
    // An emptied field is caught even while off: the file holds a number.
    expect(check(config({ provider: { ...defaultRewrite().provider, timeBudgetMs: NaN } }))?.field).toBe('budget');
    expect(check(on({ kind: 'custom' }))?.field).toBe('baseUrl');
    expect(check(on({ kind: 'custom', baseUrl: 'http://10.0.0.2:8000/v1/' }))).toBeNull();
  });

  it('refuses a mode the shell would refuse, naming it', () => {
    const mode = (m: Partial<RewriteMode>) => config({ modes: [{ id: 'mine', name: 'Mine', prompt: 'Do it.', ...m }] });
    expect(check(mode({ id: 'My Mode' }))).toMatchObject({ field: 'modes', modeId: 'My Mode' });
    expect(check(mode({ id: 'off' }))?.message).toContain('“off” is not a mode’s id');
    expect(check(mode({ name: ' ' }))?.message).toContain('needs a name of 1 to 60 characters');
    expect(check(mode({ name: 'n'.repeat(61) }))?.field).toBe('modes');
    expect(check(mode({ prompt: '' }))?.message).toContain('Write what the model should do');
    expect(check(mode({ prompt: 'p'.repeat(4001) }))?.message).toContain('At most 4000 characters');
    expect(check(mode({ prompt: 'p'.repeat(4000) }))).toBeNull();
    const twice = config({ modes: [{ id: 'a', name: 'A', prompt: 'x' }, { id: 'a', name: 'B', prompt: 'y' }] });
    expect(check(twice)?.message).toContain('Two modes have the id “a”');
  });

  it('needs the mode used after dictation to exist, and a command prompt, when set, to be usable', () => {
    expect(check(config({ mode: 'gone' }))?.field).toBe('mode');
    // The built-ins not loaded: the shell has to say.
    expect(validateRewrite(config({ mode: 'clean-up' }), [], info('ollama'))).toBeNull();
    expect(check(config({ mode: 'mine', modes: [{ id: 'mine', name: 'Mine', prompt: 'x' }] }))).toBeNull();
    expect(check(config({ commandPrompt: '   ' }))?.field).toBe('commandPrompt');
  });

  it('checks the server address as ProviderConfig::base_url does', () => {
    const p = (kind: string, baseUrl: string | null) => baseUrlProblem({ kind: kind as 'custom', baseUrl, model: 'm', timeBudgetMs: 2000 }, info(kind));
    expect(p('ollama', null)).toBeNull();
    expect(p('custom', null)).toContain('Enter the server’s address');
    expect(p('custom', 'ftp://host/v1')).toContain('http:// or https://');
    expect(p('custom', 'not a url')).toContain('is not a web address');
    expect(p('custom', 'https://user:pw@host/v1')).toContain('user name or password');
    expect(p('custom', 'https://host/v1?x=1')).toContain('“?” or “#”');
    expect(effectiveBaseUrl({ kind: 'ollama', baseUrl: ' ', model: '', timeBudgetMs: 2000 }, info('ollama'))).toBe('http://localhost:11434/v1');
    expect(effectiveBaseUrl({ kind: 'ollama', baseUrl: 'http://h:1/v1//', model: '', timeBudgetMs: 2000 }, info('ollama'))).toBe('http://h:1/v1');
  });

  it('finds a profile whose AI mode is gone', () => {
    const profiles: Profile[] = [
      { name: 'Term', apps: ['xterm'], rewrite: 'off' },
      { name: 'Mail', apps: ['thunderbird'], rewrite: 'email' },
      { name: 'Chat', apps: ['slack'], rewrite: 'haiku' },
    ];
    expect(validateProfileModes(profiles.slice(0, 2), builtIns)).toBeNull();
    expect(validateProfileModes(profiles, builtIns)).toEqual({
      index: 2,
      field: 'rewrite',
      message: 'Chat: there is no AI mode “haiku” any more; choose another.',
    });
  });
});

describe('providers and reports', () => {
  it('groups the providers: this computer first, then hosted ones', () => {
    const groups = providerGroups(providers);
    expect(groups.map((g) => g.label)).toEqual(['On this computer', 'Hosted, with your key']);
    expect(groups[0].providers.map((p) => p.kind)).toEqual(['ollama', 'lm-studio', 'llama-cpp', 'vllm']);
    expect(groups[1].providers.map((p) => p.kind)).toEqual(['openai', 'openrouter', 'groq', 'anthropic', 'custom']);
  });

  it('says how a dictation’s rewrite went', () => {
    expect(rewriteNote(null)).toBeNull();
    expect(rewriteNote({ mode: 'formal', dictated: 'hi there', model: 'qwen2.5:3b', ms: 800 })).toEqual({
      kind: 'rewritten',
      model: 'qwen2.5:3b',
      dictated: 'hi there',
      selection: null,
      command: false,
    });
    expect(rewriteNote({ mode: 'formal', dictated: 'hi', notice: { kind: 'timed-out', afterMs: 2000 }, ms: 2000 })).toEqual({
      kind: 'kept',
      sentence: 'The model did not finish within 2 s.',
      command: false,
    });
    expect(rewriteNote({ mode: 'command', dictated: 'shorter', selection: 'a long text', model: 'm', ms: 5 })).toMatchObject({
      kind: 'rewritten',
      selection: 'a long text',
      command: true,
    });
  });
});
