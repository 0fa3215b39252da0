// Test data shared by the unit and page tests: the shell's default settings
// (as utter-core's Settings::default) and a file job as the shell queues it.
import { baseName } from '../src/lib/paths';
import type { FileJob, Profile, Settings } from '../src/lib/types';

/** The built-in terminal profiles (crates/core/src/profiles.rs `builtin()`), as
 *  the shell sends them: unset overrides and an empty vocabulary left out. */
export function builtinProfiles(): Profile[] {
  return [
    {
      name: 'X terminals (Shift+Insert)',
      apps: ['xterm', 'uxterm', '*rxvt*', 'st', 'st-256color', 'mintty'],
      pasteKeys: 'shift+insert',
    } as Profile,
    {
      name: 'Terminals (Ctrl+Shift+V)',
      apps: [
        'gnome-terminal*', 'org.gnome.Terminal', 'org.gnome.Console', 'kgx', 'org.gnome.Ptyxis', 'ptyxis',
        'konsole', 'org.kde.konsole', 'lxterminal', 'qterminal', 'xfce4-terminal', 'mate-terminal', 'tilix',
        'com.gexperts.Tilix', 'terminator', 'alacritty', 'kitty', 'foot', 'footclient', 'wezterm*',
        'org.wezfurlong.wezterm', 'ghostty', 'com.mitchellh.ghostty', 'terminology', 'tabby', 'hyper',
      ],
      pasteKeys: 'ctrl+shift+v',
    } as Profile,
  ];
}

export function defaultSettings(): Settings {
  return {
    version: 2,
    hotkey: 'ctrl+shift+space',
    mode: 'push_to_talk',
    inputDevice: null,
    microphone: 'ready',
    language: 'auto',
    model: null,
    output: 'paste',
    pasteKeys: 'ctrl+v',
    restoreClipboard: true,
    trailingSpace: true,
    sounds: true,
    autostart: false,
    showOverlay: true,
    checkUpdates: true,
    vadThreshold: 0.5,
    silenceMs: 600,
    keepAudioDays: 30,
    engineIdleUnloadMinutes: 10,
    compute: 'auto',
    theme: 'system',
    vocabulary: [],
    replacements: [],
    spokenPunctuation: false,
    cleanUp: false,
    profiles: builtinProfiles(),
  };
}

/** A job just queued for `path`, with `over` applied. */
export function queuedJob(id: number, path: string, over: Partial<FileJob> = {}): FileJob {
  return {
    id,
    path,
    name: baseName(path),
    state: 'queued',
    fraction: 0,
    error: null,
    durationMs: null,
    segments: [],
    historyId: null,
    ...over,
  };
}
