import { describe, expect, it } from 'vitest';
import {
  PROFILES_MAX,
  appsSummary,
  globEscape,
  moveItem,
  newProfile,
  normalizeProfiles,
  overrideSummary,
  parseProfileError,
  profileForApp,
  profileMadeFor,
  profilesForSave,
  uniqueName,
  validateProfiles,
} from '../../src/lib/profiles';
import type { Profile } from '../../src/lib/types';
import { builtinProfiles } from '../builders';

const profile = (over: Partial<Profile>): Profile => ({ name: 'P', apps: ['p'], vocabulary: [], ...over });

describe('making a profile for a recent app', () => {
  it('matches the app by its name only, escaping glob marks', () => {
    expect(globEscape('org.gnome.Terminal')).toBe('org.gnome.Terminal');
    expect(globEscape('odd*app?[1]')).toBe('odd[*]app[?][[]1[]]');
  });

  it('starts from the profile the app got, under a name not taken yet', () => {
    const profiles = normalizeProfiles(builtinProfiles());
    const made = profileForApp({ app: 'XTerm', profile: 'X terminals (Shift+Insert)' }, profiles);
    expect(made).toEqual({ name: 'XTerm', apps: ['XTerm'], vocabulary: [], pasteKeys: 'shift+insert' });
    const chat = profileForApp({ app: 'Slack', profile: null }, [profile({ name: 'slack' })]);
    expect(chat).toEqual({ name: 'Slack (2)', apps: ['Slack'], vocabulary: [] });
    // A profile that is gone (renamed in the draft) gives nothing to start from.
    expect(profileForApp({ app: 'foot', profile: 'Old name' }, profiles)).toEqual({ name: 'foot', apps: ['foot'], vocabulary: [] });
  });

  it('finds the profile made for that app alone, in any case; one for a family of apps is not one', () => {
    const profiles = [...normalizeProfiles(builtinProfiles()), profile({ name: 'Mine', apps: ['Firefox'] })];
    expect(profileMadeFor('firefox', profiles)).toBe(2);
    expect(profileMadeFor('xterm', profiles)).toBe(-1); // the X terminals' profile names six
    expect(profileMadeFor('XTerm', [profile({ apps: ['xterm', ' '] })])).toBe(0);
    expect(profileMadeFor('odd*', [profile({ apps: ['odd[*]'] })])).toBe(0);
    expect(profileMadeFor('odd', [profile({ apps: [] })])).toBe(-1);
  });

  it('names new profiles apart', () => {
    expect(uniqueName('New profile', [])).toBe('New profile');
    expect(uniqueName('New profile', [profile({ name: 'new profile' }), profile({ name: 'New profile (2)' })])).toBe('New profile (3)');
    expect(newProfile([])).toEqual({ name: 'New profile', apps: [], vocabulary: [] });
  });
});

describe('the list as edited and as saved', () => {
  it('gives every profile a vocabulary list and drops unset overrides; saving leaves an empty one out', () => {
    const read = [{ name: 'T', apps: ['kitty'], pasteKeys: 'ctrl+shift+v', output: undefined } as Profile];
    const edited = normalizeProfiles(read);
    expect(edited).toEqual([{ name: 'T', apps: ['kitty'], pasteKeys: 'ctrl+shift+v', vocabulary: [] }]);
    expect('output' in edited[0]).toBe(false);
    expect(profilesForSave(edited)).toEqual([{ name: 'T', apps: ['kitty'], pasteKeys: 'ctrl+shift+v' }]);
    expect('vocabulary' in profilesForSave(edited)[0]).toBe(false);
    expect(profilesForSave([profile({ vocabulary: ['Kubernetes'] })])[0].vocabulary).toEqual(['Kubernetes']);
    expect(normalizeProfiles(undefined)).toEqual([]);
  });

  it('moves an item in place, ignoring moves off the ends', () => {
    const items = ['a', 'b', 'c'];
    moveItem(items, 2, 0);
    expect(items).toEqual(['c', 'a', 'b']);
    moveItem(items, 0, 1);
    expect(items).toEqual(['a', 'c', 'b']);
    moveItem(items, 0, -1);
    moveItem(items, 2, 3);
    expect(items).toEqual(['a', 'c', 'b']);
  });
});

describe('validateProfiles (mirror of the shell)', () => {
  it('accepts the built-ins', () => {
    expect(validateProfiles(normalizeProfiles(builtinProfiles()), false)).toBeNull();
  });

  it.each([
    [profile({ name: ' ' }), 'name'],
    [profile({ apps: [] }), 'apps'],
    [profile({ apps: ['  '] }), 'apps'],
    [profile({ language: 'German' }), 'language'],
    [profile({ vocabulary: [' '] }), 'vocabulary'],
  ] as [Profile, keyof Profile][])('rejects %o in %s', (p, field) => {
    const problem = validateProfiles([profile({ name: 'First' }), p], false);
    expect(problem).toMatchObject({ index: 1, field });
  });

  it('refuses Shift+Insert on macOS only, and too many profiles', () => {
    const xterm = [profile({ pasteKeys: 'shift+insert' })];
    expect(validateProfiles(xterm, false)).toBeNull();
    expect(validateProfiles(xterm, true)).toMatchObject({ index: 0, field: 'pasteKeys' });
    const many = Array.from({ length: PROFILES_MAX + 1 }, (_, i) => profile({ name: `p${i}` }));
    expect(validateProfiles(many, false)).toMatchObject({ index: null, field: null });
  });
});

describe('parseProfileError', () => {
  const profiles = [profile({ name: 'Chat' }), profile({ name: 'broken' })];
  it.each([
    ['invalid setting `profiles`: profile `broken`: `[xterm` is not a valid pattern: unclosed character class', 1, 'apps'],
    ['invalid setting `profiles`: profile `broken` matches no app (add an app name or pattern)', 1, 'apps'],
    ['invalid setting `profiles`: profile `Chat`: `German` is not `auto` or a language code', 0, 'language'],
    ['invalid setting `profiles`: profile `Chat`: an empty vocabulary entry', 0, 'vocabulary'],
    ['invalid setting `profiles`: profile `Chat`: stdout is not an output for an app', 0, 'output'],
    ['invalid setting `profiles`: profile `Chat`: something new', 0, null],
    ['invalid setting `profiles`: profile `Gone`: something', null, null],
    ['invalid setting `profiles`: 101 profiles; at most 100', null, null],
    ["invalid setting `profiles`: `Chat`: there is no rewrite mode `haiku` (use a mode's id or `off`)", 0, 'rewrite'],
  ])('%s', (message, index, field) => {
    expect(parseProfileError(message, profiles)).toEqual({ index, field, message });
  });
});

describe('summaries', () => {
  it('says what a profile changes and for which apps', () => {
    expect(overrideSummary(profile({}), false)).toBe('changes nothing yet');
    expect(overrideSummary(profile({ pasteKeys: 'ctrl+v', finalPeriod: false, language: 'de', vocabulary: ['a', 'b'] }), true)).toBe(
      'paste with Cmd+V · no final period · German (de) · 2 words',
    );
    expect(overrideSummary(profile({ output: 'type', trailingSpace: false, spokenPunctuation: true, cleanUp: false }), false)).toBe(
      'types · no space after · spoken punctuation on · fillers kept',
    );
    expect(overrideSummary(profile({ rewrite: 'off' }), false)).toBe('no AI rewrite');
    expect(overrideSummary(profile({ rewrite: 'email' }), false)).toBe('AI: email');
    expect(appsSummary(['xterm', 'uxterm'])).toBe('xterm, uxterm');
    expect(appsSummary(['a', 'b', 'c', 'd', 'e', 'f'])).toBe('a, b, c, d and 2 more');
    expect(appsSummary([])).toBe('no apps yet');
  });
});
