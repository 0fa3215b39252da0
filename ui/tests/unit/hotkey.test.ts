import { describe, expect, it } from 'vitest';
import { comboFromEvent, displayHotkey, hotkeyHint, keyName, type KeyLike } from '../../src/lib/hotkey';

const key = (code: string, mods: Partial<KeyLike> = {}, k = ''): KeyLike => ({
  code,
  key: k || code,
  ctrlKey: false,
  shiftKey: false,
  altKey: false,
  metaKey: false,
  ...mods,
});

describe('comboFromEvent', () => {
  it('builds modifiers in a fixed order plus the physical key', () => {
    expect(comboFromEvent(key('KeyK', { ctrlKey: true, shiftKey: true }, 'K'))).toEqual({ kind: 'combo', combo: 'ctrl+shift+k' });
    expect(comboFromEvent(key('Space', { metaKey: true, altKey: true, ctrlKey: true }, ' '))).toEqual({
      kind: 'combo',
      combo: 'ctrl+alt+super+space',
    });
  });

  it('uses the physical key, not the layout character', () => {
    // AZERTY: the key labelled A sits where Q is; global-hotkey registers physical keys.
    expect(comboFromEvent(key('KeyQ', { altKey: true }, 'a'))).toEqual({ kind: 'combo', combo: 'alt+q' });
    expect(comboFromEvent(key('Digit1', { ctrlKey: true, shiftKey: true }, '!'))).toEqual({ kind: 'combo', combo: 'ctrl+shift+1' });
  });

  it('reports modifiers alone as partial', () => {
    expect(comboFromEvent(key('ControlLeft', { ctrlKey: true }, 'Control'))).toEqual({ kind: 'partial', modifiers: ['ctrl'] });
    expect(comboFromEvent(key('ShiftRight', { ctrlKey: true, shiftKey: true }, 'Shift'))).toEqual({
      kind: 'partial',
      modifiers: ['ctrl', 'shift'],
    });
  });

  it('cancels on a bare Escape but accepts Escape with modifiers', () => {
    expect(comboFromEvent(key('Escape'))).toEqual({ kind: 'cancel' });
    expect(comboFromEvent(key('Escape', { ctrlKey: true }))).toEqual({ kind: 'combo', combo: 'ctrl+escape' });
  });

  it('refuses typing keys without a modifier but allows function keys', () => {
    expect(comboFromEvent(key('KeyA')).kind).toBe('invalid');
    expect(comboFromEvent(key('Space')).kind).toBe('invalid');
    expect(comboFromEvent(key('F9'))).toEqual({ kind: 'combo', combo: 'f9' });
    expect(comboFromEvent(key('Pause'))).toEqual({ kind: 'combo', combo: 'pause' });
    expect(comboFromEvent(key('Unidentified', { ctrlKey: true })).kind).toBe('invalid');
  });
});

describe('keyName', () => {
  it('maps codes to names global-hotkey parses', () => {
    expect(keyName('ArrowUp')).toBe('up');
    expect(keyName('Backquote')).toBe('backquote');
    expect(keyName('Numpad5')).toBe('numpad5');
    expect(keyName('PageDown')).toBe('pagedown');
  });
});

describe('displayHotkey', () => {
  it('shows combos the way people write them', () => {
    expect(displayHotkey('ctrl+shift+space')).toBe('Ctrl+Shift+Space');
    expect(displayHotkey('alt+f9')).toBe('Alt+F9');
    expect(displayHotkey('super+k')).toBe('Super+K');
    expect(displayHotkey('ctrl+up')).toBe('Ctrl+↑');
    expect(displayHotkey('')).toBe('');
  });

  it('words the hint for the mode', () => {
    expect(hotkeyHint('ctrl+shift+space', 'push_to_talk')).toBe('Hold Ctrl+Shift+Space to dictate');
    expect(hotkeyHint('alt+f9', 'toggle')).toBe('Press Alt+F9 to start, press again to stop');
  });
});
