// Per-app profiles (Settings → Apps): rules matching the focused app's names
// (case-insensitive globs) that override some settings for it. The first
// matching profile applies; an unset field keeps the settings' value. The
// shell checks them again on save (crates/core/src/profiles.rs).

import { pasteKeysLabel, pasteKeysProblem } from './platform';
import { languageName } from './settings';
import type { OutputMethod, Profile, RecentApp } from './types';

/** From crates/core/src/profiles.rs (generated: crates/app/src/ui_limits.rs). */
import { PROFILES_MAX } from './generated/limits';
export { PROFILES_MAX };

/** The settings a profile may override, each absent when unset. */
export const OVERRIDES = [
  'output', 'pasteKeys', 'trailingSpace', 'finalPeriod', 'language', 'spokenPunctuation', 'cleanUp', 'snippets', 'rewrite',
] as const;
export type Override = (typeof OVERRIDES)[number];

/** A profile problem: which profile (null: the list as a whole), which of its fields (null: the profile). */
export interface ProfileProblem {
  index: number | null;
  field: keyof Profile | null;
  message: string;
}

/** A glob that matches `name` only (`*`, `?`, `[`, `]` taken literally, as glob's Pattern::escape). */
export function globEscape(name: string): string {
  return name.replace(/[*?[\]]/g, (c) => `[${c}]`);
}

/** The profile made for this app alone (its only pattern is the app's name), or -1.
 *  A profile for a family of apps (the built-in terminals) is not one: the user
 *  may still want one for this app. */
export function profileMadeFor(app: string, profiles: Profile[]): number {
  const names = [app.toLowerCase(), globEscape(app).toLowerCase()];
  return profiles.findIndex((p) => {
    const apps = p.apps.map((a) => a.trim().toLowerCase()).filter(Boolean);
    return apps.length > 0 && apps.every((a) => names.includes(a));
  });
}

/** `wanted`, or `wanted (2)`, `(3)`… when a profile has that name (any case). */
export function uniqueName(wanted: string, profiles: Profile[]): string {
  const taken = new Set(profiles.map((p) => p.name.toLowerCase()));
  if (!taken.has(wanted.toLowerCase())) return wanted;
  for (let n = 2; ; n++) {
    const name = `${wanted} (${n})`;
    if (!taken.has(name.toLowerCase())) return name;
  }
}

/** A new profile for `recent.app`: the pattern is the app's name, and it starts
 *  from the profile the app follows now (so a terminal keeps its paste keys
 *  until the user changes them). It goes first to apply before that one. */
export function profileForApp(recent: RecentApp, profiles: Profile[]): Profile {
  const base = recent.profile === null ? undefined : profiles.find((p) => p.name === recent.profile);
  const made: Profile = {
    name: uniqueName(recent.app, profiles),
    apps: [globEscape(recent.app)],
    vocabulary: [...(base?.vocabulary ?? [])],
  };
  if (base) for (const key of OVERRIDES) copyOverride(made, base, key);
  return made;
}

function copyOverride<K extends Override>(to: Profile, from: Profile, key: K) {
  if (from[key] !== undefined) to[key] = from[key];
}

/** A blank profile for "Add a profile". */
export function newProfile(profiles: Profile[]): Profile {
  return { name: uniqueName('New profile', profiles), apps: [], vocabulary: [] };
}

/** The profiles as the page edits them: every profile with its vocabulary list
 *  (the shell leaves an empty one out), unset overrides absent. */
export function normalizeProfiles(profiles: Profile[] | undefined): Profile[] {
  return (profiles ?? []).map((p) => {
    const out: Profile = { ...p, apps: [...(p.apps ?? [])], vocabulary: [...(p.vocabulary ?? [])] };
    for (const key of OVERRIDES) if (out[key] === undefined || out[key] === null) delete out[key];
    return out;
  });
}

/** The profiles as the shell writes them: an empty vocabulary left out (and
 *  nothing unset), so an unchanged list saves as it was read. */
export function profilesForSave(profiles: Profile[]): Profile[] {
  return normalizeProfiles(profiles).map((p) => {
    if ((p.vocabulary ?? []).length > 0) return p;
    const { vocabulary: _empty, ...rest } = p;
    return rest as Profile;
  });
}

/** Moves item `from` to `to` in place (reordering the profiles). */
export function moveItem<T>(items: T[], from: number, to: number): void {
  if (from === to || from < 0 || to < 0 || from >= items.length || to >= items.length) return;
  const [item] = items.splice(from, 1);
  items.splice(to, 0, item);
}

/** The first problem the shell would refuse, or null (it has the last word). */
export function validateProfiles(profiles: Profile[], mac: boolean): ProfileProblem | null {
  if (profiles.length > PROFILES_MAX) {
    return { index: null, field: null, message: `${profiles.length} profiles; at most ${PROFILES_MAX}.` };
  }
  for (const [index, p] of profiles.entries()) {
    const name = p.name.trim() || `Profile ${index + 1}`;
    if (!p.name.trim()) return { index, field: 'name', message: 'Give the profile a name.' };
    if (p.apps.every((a) => !a.trim())) {
      return { index, field: 'apps', message: `${name}: add an app name or pattern (e.g. firefox, org.gnome.*).` };
    }
    const keys = pasteKeysProblem(p.pasteKeys, mac);
    if (keys) return { index, field: 'pasteKeys', message: `${name}: ${keys}` };
    if (p.language !== undefined && p.language !== 'auto' && !/^[a-z]{2,3}$/.test(p.language)) {
      return { index, field: 'language', message: `${name}: “${p.language}” is not a language code.` };
    }
    if ((p.vocabulary ?? []).some((w) => !w.trim())) {
      return { index, field: 'vocabulary', message: `${name}: an empty vocabulary entry.` };
    }
  }
  return null;
}

/** The shell's rejection of a profile ("invalid setting `profiles`: profile
 *  `NAME`: …"): which profile, and the field the message is about, so it can
 *  sit beside it. A message naming no profile is about the whole list. */
export function parseProfileError(message: string, profiles: Profile[]): ProfileProblem {
  // "profile `NAME`: …", or for its AI mode "`profiles`: `NAME`: there is no rewrite mode …".
  const m = /profile `([^`]*)`[: ]\s*(.*)$/s.exec(message) ?? /`profiles`: `([^`]*)`: (.*)$/s.exec(message);
  if (!m) return { index: null, field: null, message };
  const index = profiles.findIndex((p) => p.name === m[1]);
  const why = m[2];
  const field: keyof Profile | null = /rewrite mode/.test(why)
    ? 'rewrite'
    : /pattern|matches no app/.test(why)
      ? 'apps'
      : /language/.test(why)
        ? 'language'
        : /vocabulary/.test(why)
          ? 'vocabulary'
          : /paste|insert/i.test(why)
            ? 'pasteKeys'
            : /stdout|output/.test(why)
              ? 'output'
              : null;
  return { index: index >= 0 ? index : null, field, message };
}

const OUTPUT_WORDS: Record<OutputMethod, string> = {
  paste: 'pastes',
  type: 'types',
  clipboard: 'copies only',
  stdout: 'prints',
};

/** What a profile changes, in a few words ("pastes with Ctrl+Shift+V · no final period"). */
export function overrideSummary(p: Profile, mac: boolean): string {
  const parts: string[] = [];
  if (p.output !== undefined) parts.push(OUTPUT_WORDS[p.output]);
  if (p.pasteKeys !== undefined) parts.push(`paste with ${pasteKeysLabel(p.pasteKeys, mac)}`);
  if (p.trailingSpace !== undefined) parts.push(p.trailingSpace ? 'space after' : 'no space after');
  if (p.finalPeriod === false) parts.push('no final period');
  if (p.language !== undefined) parts.push(languageName(p.language));
  const words = p.vocabulary?.length ?? 0;
  if (words > 0) parts.push(words === 1 ? '1 word' : `${words} words`);
  if (p.spokenPunctuation !== undefined) parts.push(`spoken punctuation ${p.spokenPunctuation ? 'on' : 'off'}`);
  if (p.cleanUp !== undefined) parts.push(p.cleanUp ? 'fillers removed' : 'fillers kept');
  if (p.snippets !== undefined) parts.push(p.snippets ? 'snippets on' : 'no snippets');
  if (p.rewrite !== undefined) parts.push(p.rewrite === 'off' ? 'no AI rewrite' : `AI: ${p.rewrite}`);
  return parts.length ? parts.join(' · ') : 'changes nothing yet';
}

/** The patterns in a short line: the first few, then how many more. */
export function appsSummary(apps: string[], shown = 4): string {
  const list = apps.filter((a) => a.trim());
  if (list.length === 0) return 'no apps yet';
  const head = list.slice(0, shown).join(', ');
  return list.length > shown ? `${head} and ${list.length - shown} more` : head;
}
