// What the UI must know of the OS it runs on: macOS has no Shift+Insert paste
// (Mac keyboards have no Insert key; the shell refuses it there) and pastes
// with Cmd+V where Linux and Windows use Ctrl+V.

import type { PasteKeys } from './types';

/** macOS, from `navigator.platform` ("MacIntel"), or from the user agent
 *  where the platform is empty (it is deprecated, and may be some day). */
export function isMacPlatform(platform: string, userAgent: string): boolean {
  if (platform) return /^mac/i.test(platform);
  return /Macintosh|Mac OS X/i.test(userAgent);
}

export function isMac(): boolean {
  return typeof navigator !== 'undefined' && isMacPlatform(navigator.platform ?? '', navigator.userAgent ?? '');
}

export function pasteKeysLabel(keys: PasteKeys, mac: boolean): string {
  switch (keys) {
    case 'ctrl+v':
      return mac ? 'Cmd+V' : 'Ctrl+V';
    case 'ctrl+shift+v':
      return 'Ctrl+Shift+V';
    case 'shift+insert':
      return mac ? 'Shift+Insert (not on macOS)' : 'Shift+Insert';
  }
}

/** The paste keystrokes to offer: no Shift+Insert on macOS, unless it is the
 *  value already there (so the select shows it, and the user can change it). */
export function pasteKeyOptions(mac: boolean, current: PasteKeys | null | undefined): { value: PasteKeys; label: string }[] {
  const keys: PasteKeys[] = ['ctrl+v', 'ctrl+shift+v'];
  if (!mac || current === 'shift+insert') keys.push('shift+insert');
  return keys.map((value) => ({ value, label: pasteKeysLabel(value, mac) }));
}

/** Why these paste keys cannot be used here, or null. */
export function pasteKeysProblem(keys: PasteKeys | null | undefined, mac: boolean): string | null {
  return mac && keys === 'shift+insert'
    ? 'Shift+Insert does not exist on macOS (Mac keyboards have no Insert key): choose Cmd+V.'
    : null;
}
