// The words so far while the user speaks, from the shell's `dictation` events:
// `partial_text` carries the settled words (they stay) and the tentative ones
// (the next run may still change them), and `rewriting` says the text is with
// the language model now. Home and the overlay both follow it.

import type { DictationEvent } from './types';

export interface LiveText {
  /** The dictation these words belong to. */
  id: number;
  settled: string;
  tentative: string;
  /** The focused app at the press and the profile it got, where the desktop tells them. */
  app: string | null;
  profile: string | null;
  /** Set once the text is with the language model (the `rewriting` event): the mode's id. */
  rewriting?: string;
}

/** The live text after `e`: a new dictation starts empty, `partial_text`
 *  replaces the words (both parts: each run sends the whole text so far),
 *  and the dictation's end (delivered, cancelled, failed) clears it. A
 *  `partial_text` may come without its `recording_started` (the overlay's
 *  window is created at the first recording, after that event went). */
export function nextLiveText(prev: LiveText | null, e: DictationEvent): LiveText | null {
  switch (e.event) {
    case 'recording_started':
      return { id: e.id, settled: '', tentative: '', app: e.app ?? null, profile: e.profile ?? null };
    case 'partial_text': {
      const same = prev !== null && prev.id === e.id;
      return {
        id: e.id,
        settled: e.settled,
        tentative: e.tentative,
        app: same ? prev.app : null,
        profile: same ? prev.profile : null,
      };
    }
    case 'rewriting': {
      // The words stay up while the model rewrites them.
      const same = prev !== null && prev.id === e.id;
      return same
        ? { ...prev, rewriting: e.mode }
        : { id: e.id, settled: '', tentative: '', app: null, profile: null, rewriting: e.mode };
    }
    case 'text_delivered':
    case 'cancelled':
    case 'error':
      return null;
    default:
      return prev;
  }
}

/** What goes between the settled and the tentative words: one space, unless
 *  either side is empty or already brings its own. */
export function liveSeparator(settled: string, tentative: string): string {
  if (!settled || !tentative) return '';
  return /\s$/.test(settled) || /^\s/.test(tentative) ? '' : ' ';
}

/** True when there are words to show. */
export function hasWords(live: LiveText | null): live is LiveText {
  return !!live && (live.settled.trim() !== '' || live.tentative.trim() !== '');
}
