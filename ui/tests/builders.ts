// Test data shared by the unit and page tests: the shell's default settings
// (as utter-core's Settings::default) and a file job as the shell queues it.
import { baseName } from '../src/lib/paths';
import type { FileJob, Settings } from '../src/lib/types';

export function defaultSettings(): Settings {
  return {
    version: 2,
    hotkey: 'ctrl+shift+space',
    mode: 'push_to_talk',
    inputDevice: null,
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
