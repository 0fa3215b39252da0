import { describe, expect, it } from 'vitest';
import { isMacPlatform, pasteKeyOptions, pasteKeysLabel, pasteKeysProblem } from '../../src/lib/platform';

const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko)';
const WEBKITGTK = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

describe('isMacPlatform', () => {
  it('reads navigator.platform first, the user agent only when it is empty', () => {
    expect(isMacPlatform('MacIntel', SAFARI)).toBe(true);
    expect(isMacPlatform('Linux x86_64', WEBKITGTK)).toBe(false);
    expect(isMacPlatform('Win32', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Edg/126')).toBe(false);
    // A platform that is set wins over a user agent that mentions a Mac.
    expect(isMacPlatform('Linux x86_64', SAFARI)).toBe(false);
    expect(isMacPlatform('', SAFARI)).toBe(true);
    expect(isMacPlatform('', WEBKITGTK)).toBe(false);
  });
});

describe('paste keys', () => {
  it('offers no Shift+Insert on macOS unless it is the value already set', () => {
    expect(pasteKeyOptions(false, 'ctrl+v').map((o) => o.value)).toEqual(['ctrl+v', 'ctrl+shift+v', 'shift+insert']);
    expect(pasteKeyOptions(true, 'ctrl+v').map((o) => o.value)).toEqual(['ctrl+v', 'ctrl+shift+v']);
    expect(pasteKeyOptions(true, undefined).map((o) => o.value)).toEqual(['ctrl+v', 'ctrl+shift+v']);
    const kept = pasteKeyOptions(true, 'shift+insert');
    expect(kept.map((o) => o.label)).toEqual(['Cmd+V', 'Ctrl+Shift+V', 'Shift+Insert (not on macOS)']);
  });

  it('names the keys as each system has them and refuses Shift+Insert on macOS', () => {
    expect(pasteKeysLabel('ctrl+v', false)).toBe('Ctrl+V');
    expect(pasteKeysLabel('ctrl+v', true)).toBe('Cmd+V');
    expect(pasteKeysProblem('shift+insert', false)).toBeNull();
    expect(pasteKeysProblem('shift+insert', true)).toContain('macOS');
    expect(pasteKeysProblem(undefined, true)).toBeNull();
  });
});
