// Hotkeys as the shell stores them ("ctrl+shift+space": modifiers ctrl, shift,
// alt, super in that order, then one key name that global-hotkey parses), made
// from browser KeyboardEvents, and shown to people as "Ctrl+Shift+Space".

export type ComboResult =
  | { kind: 'combo'; combo: string }
  /** Only modifiers held so far: show them while the user builds the combo. */
  | { kind: 'partial'; modifiers: string[] }
  | { kind: 'cancel' }
  | { kind: 'invalid'; reason: string };

const MODIFIER_CODES = new Set([
  'ControlLeft', 'ControlRight', 'ShiftLeft', 'ShiftRight', 'AltLeft', 'AltRight',
  'MetaLeft', 'MetaRight', 'OSLeft', 'OSRight', 'AltGraph',
]);

/** Keys that are fine on their own as a global hotkey (nobody types them in text). */
const SOLO_OK = /^(f([1-9]|1[0-9]|2[0-4])|pause|scrolllock|insert|printscreen)$/;

export interface KeyLike {
  code: string;
  key: string;
  ctrlKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  metaKey: boolean;
}

function modifiers(e: KeyLike): string[] {
  const m: string[] = [];
  if (e.ctrlKey) m.push('ctrl');
  if (e.shiftKey) m.push('shift');
  if (e.altKey) m.push('alt');
  if (e.metaKey) m.push('super');
  return m;
}

/** The key name for a physical key code (layout-independent, as global-hotkey
 *  registers physical keys): KeyK → k, Digit1 → 1, ArrowUp → up, Space → space. */
export function keyName(code: string): string | null {
  if (!code || code === 'Unidentified') return null;
  if (/^Key[A-Z]$/.test(code)) return code.slice(3).toLowerCase();
  if (/^Digit[0-9]$/.test(code)) return code.slice(5);
  if (/^Arrow(Up|Down|Left|Right)$/.test(code)) return code.slice(5).toLowerCase();
  return code.toLowerCase();
}

/** Turns one keydown into a combo (or says why not). */
export function comboFromEvent(e: KeyLike): ComboResult {
  const mods = modifiers(e);
  if (MODIFIER_CODES.has(e.code) || ['Control', 'Shift', 'Alt', 'Meta', 'OS'].includes(e.key)) {
    return { kind: 'partial', modifiers: mods };
  }
  if (e.code === 'Escape' && mods.length === 0) return { kind: 'cancel' };
  const key = keyName(e.code);
  if (!key) return { kind: 'invalid', reason: 'That key cannot be used; try another.' };
  if (mods.length === 0 && !SOLO_OK.test(key)) {
    return {
      kind: 'invalid',
      reason: 'Add a modifier (Ctrl, Shift, Alt or Super), or use a function key such as F9.',
    };
  }
  return { kind: 'combo', combo: [...mods, key].join('+') };
}

const DISPLAY: Record<string, string> = {
  ctrl: 'Ctrl', control: 'Ctrl', shift: 'Shift', alt: 'Alt', super: 'Super', cmd: 'Super',
  space: 'Space', enter: 'Enter', tab: 'Tab', backspace: 'Backspace', escape: 'Esc',
  up: '↑', down: '↓', left: '←', right: '→', pageup: 'Page Up', pagedown: 'Page Down',
  backquote: '`', minus: '-', equal: '=', bracketleft: '[', bracketright: ']',
  backslash: '\\', semicolon: ';', quote: "'", comma: ',', period: '.', slash: '/',
  insert: 'Insert', delete: 'Delete', home: 'Home', end: 'End', pause: 'Pause',
  scrolllock: 'Scroll Lock', printscreen: 'Print Screen', capslock: 'Caps Lock',
};

/** "ctrl+shift+space" → "Ctrl+Shift+Space"; "alt+f9" → "Alt+F9". */
export function displayHotkey(combo: string): string {
  if (!combo) return '';
  return combo
    .split('+')
    .filter(Boolean)
    .map((part) => {
      const p = part.toLowerCase();
      if (DISPLAY[p]) return DISPLAY[p];
      if (/^f\d{1,2}$/.test(p)) return p.toUpperCase();
      if (/^numpad/.test(p)) return `Num ${p.slice(6)}`;
      return p.length === 1 ? p.toUpperCase() : p.charAt(0).toUpperCase() + p.slice(1);
    })
    .join('+');
}

/** The Home page's one-line hint for the current mode. */
export function hotkeyHint(combo: string, mode: 'push_to_talk' | 'toggle'): string {
  const k = displayHotkey(combo);
  return mode === 'toggle' ? `Press ${k} to start, press again to stop` : `Hold ${k} to dictate`;
}
