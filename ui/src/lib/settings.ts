// Settings logic the UI needs before asking the shell: a mirror of the
// shell's validation (so mistakes show beside the field at once; the shell
// still has the last word), the language list, and the sensitivity scale.

import { pasteKeysProblem } from './platform';
import type { Settings, Snippet, Status } from './types';

export interface FieldError {
  field: keyof Settings;
  message: string;
}

/** From crates/core/src/settings.rs (generated: crates/app/src/ui_limits.rs). */
import { STOP_ON_SILENCE_MAX_MS, STOP_ON_SILENCE_MIN_MS, VOCABULARY_MAX } from './generated/limits';
export { STOP_ON_SILENCE_MAX_MS, STOP_ON_SILENCE_MIN_MS, VOCABULARY_MAX };

const HOTKEY_RE = /^((ctrl|shift|alt|super)\+)*[a-z0-9]+$/;

/** The first problem, or null. Ranges follow crates/core/src/settings.rs; `mac`: the
 *  app runs on macOS, which has no Shift+Insert. Profiles are checked by lib/profiles.ts. */
export function validateSettings(s: Settings, mac = false): FieldError | null {
  if (!s.hotkey || !HOTKEY_RE.test(s.hotkey)) {
    return { field: 'hotkey', message: 'Record a shortcut: modifiers plus one key, e.g. Ctrl+Shift+Space.' };
  }
  if (s.commandKey !== null && !HOTKEY_RE.test(s.commandKey)) {
    return { field: 'commandKey', message: 'Record a command shortcut: modifiers plus one key, e.g. Ctrl+Shift+E.' };
  }
  if (s.commandKey !== null && sameCombo(s.commandKey, s.hotkey)) {
    return { field: 'commandKey', message: 'The command shortcut must differ from the dictation shortcut.' };
  }
  if (s.meetingKey !== null && !HOTKEY_RE.test(s.meetingKey)) {
    return { field: 'meetingKey', message: 'Record a meeting shortcut: modifiers plus one key, e.g. Ctrl+Alt+M.' };
  }
  if (s.meetingKey !== null && sameCombo(s.meetingKey, s.hotkey)) {
    return { field: 'meetingKey', message: 'The meeting shortcut must differ from the dictation shortcut.' };
  }
  if (s.meetingKey !== null && s.rewrite.enabled && s.commandKey !== null && sameCombo(s.meetingKey, s.commandKey)) {
    return { field: 'meetingKey', message: 'The meeting shortcut must differ from the AI command shortcut.' };
  }
  if (s.mode !== 'push_to_talk' && s.mode !== 'toggle') {
    return { field: 'mode', message: 'Choose push-to-talk or toggle.' };
  }
  if (s.language !== 'auto' && !/^[a-z]{2,3}$/.test(s.language)) {
    return { field: 'language', message: `“${s.language}” is not a language code.` };
  }
  if (!['paste', 'type', 'clipboard'].includes(s.output)) {
    return { field: 'output', message: 'Choose how text is delivered.' };
  }
  if (!['ctrl+v', 'ctrl+shift+v', 'shift+insert'].includes(s.pasteKeys)) {
    return { field: 'pasteKeys', message: 'Choose a paste keystroke.' };
  }
  if (s.duckOtherAudio !== null && (!Number.isInteger(s.duckOtherAudio) || s.duckOtherAudio < 0 || s.duckOtherAudio > 100)) {
    return { field: 'duckOtherAudio', message: 'Lower other audio to 0 (mute) to 100 %.' };
  }
  if (!['none', 'enter', 'ctrl_enter', 'shift_enter'].includes(s.submit)) {
    return { field: 'submit', message: 'Choose the key pressed after the text.' };
  }
  const keys = pasteKeysProblem(s.pasteKeys, mac);
  if (keys) return { field: 'pasteKeys', message: keys };
  if (s.microphone !== 'ready' && s.microphone !== 'on_press') {
    return { field: 'microphone', message: 'Choose when the microphone is open.' };
  }
  if (!(s.vadThreshold >= 0.05 && s.vadThreshold <= 0.95)) {
    return { field: 'vadThreshold', message: 'Sensitivity is out of range.' };
  }
  if (!Number.isInteger(s.silenceMs) || s.silenceMs < 200 || s.silenceMs > 3000) {
    return { field: 'silenceMs', message: 'Pause length must be 200 to 3000 ms.' };
  }
  if (
    s.stopOnSilenceMs !== null &&
    (!Number.isInteger(s.stopOnSilenceMs) || s.stopOnSilenceMs < STOP_ON_SILENCE_MIN_MS || s.stopOnSilenceMs > STOP_ON_SILENCE_MAX_MS)
  ) {
    const [min, max] = [STOP_ON_SILENCE_MIN_MS / 1000, STOP_ON_SILENCE_MAX_MS / 1000];
    return { field: 'stopOnSilenceMs', message: `Stop after ${min} to ${max} seconds of silence.` };
  }
  if (!Number.isInteger(s.keepAudioDays) || s.keepAudioDays < 0 || s.keepAudioDays > 3650) {
    return { field: 'keepAudioDays', message: 'Keep audio for 0 (forever) to 3650 days.' };
  }
  if (!Number.isInteger(s.maxAudioMinutes) || s.maxAudioMinutes < 1 || s.maxAudioMinutes > 10080) {
    return { field: 'maxAudioMinutes', message: 'The longest file: 1 to 10080 minutes (a week).' };
  }
  if (!Number.isInteger(s.engineIdleUnloadMinutes) || s.engineIdleUnloadMinutes < 0 || s.engineIdleUnloadMinutes > 1440) {
    return { field: 'engineIdleUnloadMinutes', message: 'Unload the model after 0 (never) to 1440 idle minutes.' };
  }
  if (!Number.isInteger(s.serverPort) || s.serverPort < 1024 || s.serverPort > 65535) {
    return { field: 'serverPort', message: 'The server port must be 1024 to 65535 (lower ports need administrator rights).' };
  }
  if (!Number.isInteger(s.wyomingPort) || s.wyomingPort < 1024 || s.wyomingPort > 65535) {
    return { field: 'wyomingPort', message: 'The Wyoming port must be 1024 to 65535 (lower ports need administrator rights).' };
  }
  if (s.wyomingEnabled && s.wyomingPort === s.serverPort) {
    return { field: 'wyomingPort', message: "The Wyoming port must differ from the server's port." };
  }
  if (s.vocabulary.length > VOCABULARY_MAX) {
    return { field: 'vocabulary', message: `At most ${VOCABULARY_MAX} words; put the most important first.` };
  }
  const badWord = s.vocabulary.find((w) => !w.trim() || w.length > 100);
  if (badWord !== undefined) {
    return { field: 'vocabulary', message: `“${badWord}”: each entry is a word or phrase of 1 to 100 characters.` };
  }
  const blankRule = s.replacements.findIndex((r) => !r.heard.trim());
  if (blankRule >= 0) {
    return { field: 'replacements', message: `Rule ${blankRule + 1}: say what is heard, or remove the rule.` };
  }
  const snippet = snippetProblem(s.snippets);
  if (snippet) return { field: 'snippets', message: snippet };
  if (s.inputDevice === '') {
    return { field: 'inputDevice', message: 'Choose a microphone.' };
  }
  return null;
}

/** Placeholders a snippet's text may hold (crates/postprocess/src/snippets.rs). */
const PLACEHOLDERS = ['date', 'time', 'clipboard'];

/** Mirrors the snippet checks of crates/postprocess/src/snippets.rs. */
export function snippetProblem(snippets: Snippet[]): string | null {
  const seen = new Map<string, string>();
  for (const [i, s] of snippets.entries()) {
    const letters = s.trigger.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
    if (!letters) return `Snippet ${i + 1}: say what triggers it, or remove it.`;
    if (!s.text.trim()) return `“${s.trigger.trim()}”: write the text it inserts.`;
    const unknown = [...s.text.matchAll(/\{([a-z_]+)\}/g)].find((m) => !PLACEHOLDERS.includes(m[1]));
    if (unknown) return `“${s.trigger.trim()}”: {${unknown[1]}} is not a placeholder (use {date}, {time} or {clipboard}).`;
    if (s.inSentence && s.trigger.trim().split(/\s+/).length < 2) {
      return `“${s.trigger.trim()}”: a trigger used inside sentences needs two words or more.`;
    }
    const same = seen.get(letters);
    if (same !== undefined) return `“${same}” and “${s.trigger.trim()}” are the same trigger.`;
    seen.set(letters, s.trigger.trim());
  }
  return null;
}

/** The same keys, in any order of modifiers. */
function sameCombo(a: string, b: string): boolean {
  const norm = (c: string) => c.split('+').sort().join('+');
  return norm(a) === norm(b);
}

/** The shell rejects with e.g. "invalid setting `silenceMs`: must be between 200 and 3000 ms".
 *  Pull out the field so the message can sit beside it; unknown shapes stay general. */
export function parseShellError(message: string): { field: keyof Settings | null; message: string } {
  const m = /setting `([A-Za-z]+)`/.exec(message);
  return { field: (m?.[1] as keyof Settings | undefined) ?? null, message };
}

const NAMES: Record<string, string> = {
  en: 'English', de: 'German', fr: 'French', es: 'Spanish', it: 'Italian', pt: 'Portuguese',
  nl: 'Dutch', pl: 'Polish', ru: 'Russian', uk: 'Ukrainian', cs: 'Czech', sv: 'Swedish',
  da: 'Danish', no: 'Norwegian', fi: 'Finnish', tr: 'Turkish', el: 'Greek', hu: 'Hungarian',
  ro: 'Romanian', ar: 'Arabic', he: 'Hebrew', hi: 'Hindi', ja: 'Japanese', ko: 'Korean',
  zh: 'Chinese', vi: 'Vietnamese', th: 'Thai', id: 'Indonesian', ca: 'Catalan', fa: 'Persian',
};

/** Shown when the model does not say which languages it accepts. */
export const COMMON_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'pt', 'nl', 'pl', 'ru', 'uk', 'ja', 'zh'];

export function languageName(code: string): string {
  if (code === 'auto') return 'Detect automatically';
  const name = NAMES[code];
  return name ? `${name} (${code})` : code;
}

/** Options for the language select: "auto" only when the model detects
 *  languages; the current value is always kept so saving never drops it. */
export function languageOptions(status: Pick<Status, 'languages' | 'detectsLanguage'> | null, current: string): string[] {
  const langs = status && status.languages.length > 0 ? [...status.languages] : [...COMMON_LANGUAGES];
  langs.sort((a, b) => languageName(a).localeCompare(languageName(b)));
  const out = status?.detectsLanguage || (!status && current === 'auto') ? ['auto', ...langs] : langs;
  if (current && !out.includes(current)) out.unshift(current);
  return out;
}

/** Slider position (10..90, higher = more sensitive) ⇄ the VAD threshold (lower = more sensitive). */
export function sensitivityFromThreshold(threshold: number): number {
  return Math.round((1 - threshold) * 100);
}

export function thresholdFromSensitivity(sensitivity: number): number {
  return Math.round((100 - sensitivity)) / 100;
}
