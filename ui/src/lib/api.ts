// The only module that talks to the Tauri shell: typed wrappers over the
// commands and events of docs/ipc.md, plus the dialog and drag-drop helpers.
// Everything else in the UI imports from here, so a contract change is one edit.

import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import { getCurrentWebview } from '@tauri-apps/api/webview';
import { open, save } from '@tauri-apps/plugin-dialog';
import type {
  CatalogRow,
  Device,
  DictationEvent,
  DownloadUpdate,
  ExportFormat,
  FileJob,
  HistoryEntry,
  InstallProgress,
  Level,
  Model,
  Quant,
  Settings,
  Status,
  UpdateInfo,
} from './types';

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

export const api = {
  getStatus: () => invoke<Status>('get_status'),
  getSettings: () => invoke<Settings>('get_settings'),
  saveSettings: (settings: Settings) => invoke<Settings>('save_settings', { settings }),
  dismissNotice: () => invoke<void>('dismiss_notice'),

  startDictation: () => invoke<void>('start_dictation'),
  stopDictation: () => invoke<void>('stop_dictation'),
  cancelDictation: () => invoke<void>('cancel_dictation'),

  listDevices: () => invoke<Device[]>('list_devices'),

  listModels: () => invoke<Model[]>('list_models'),
  installDefaultModel: () => invoke<void>('install_default_model'),
  importModel: (path: string, quant: Quant) => invoke<Model>('import_model', { path, quant }),
  setDefaultModel: (name: string) => invoke<void>('set_default_model', { name }),
  removeModel: (name: string) => invoke<void>('remove_model', { name }),

  historyList: (query: string | null, limit: number, offset: number) =>
    invoke<HistoryEntry[]>('history_list', { query, limit, offset }),
  historyDelete: (id: number) => invoke<void>('history_delete', { id }),
  historyRetry: (id: number, model: string | null) =>
    invoke<HistoryEntry>('history_retry', { id, model }),
  /** WAV bytes. Tauri hands raw responses over as an ArrayBuffer; a JSON
   *  `Vec<u8>` would arrive as number[], so accept both. */
  historyAudio: async (id: number): Promise<Uint8Array> => {
    const raw = await invoke<ArrayBuffer | number[] | Uint8Array>('history_audio', { id });
    return raw instanceof Uint8Array ? raw : new Uint8Array(raw as ArrayBuffer);
  },

  copyText: (text: string) => invoke<void>('copy_text', { text }),
  pasteText: (text: string) => invoke<void>('paste_text', { text }),

  transcribeFiles: (paths: string[]) => invoke<FileJob[]>('transcribe_files', { paths }),
  listFileJobs: () => invoke<FileJob[]>('list_file_jobs'),
  cancelFileJob: (id: number) => invoke<void>('cancel_file_job', { id }),
  clearFileJobs: () => invoke<void>('clear_file_jobs'),
  catalogModels: () => invoke<CatalogRow[]>('catalog_models'),
  downloadModel: (name: string) => invoke<void>('download_model', { name }),
  pauseDownload: (name: string) => invoke<void>('pause_download', { name }),
  cancelDownload: (name: string) => invoke<void>('cancel_download', { name }),
  useModel: (name: string, usedFor: 'dictation' | 'files' | 'both') => invoke<void>('use_model', { name, usedFor }),
  importVocabulary: (path: string) => invoke<string[]>('import_vocabulary', { path }),
  exportVocabulary: (path: string, words: string[]) => invoke<void>('export_vocabulary', { path, words }),
  exportTranscript: (id: number, format: ExportFormat, path: string) =>
    invoke<void>('export_transcript', { id, format, path }),
  renderTranscript: (id: number, format: ExportFormat) =>
    invoke<string>('render_transcript', { id, format }),

  checkForUpdates: () => invoke<UpdateInfo | null>('check_for_updates'),
  installUpdate: () => invoke<void>('install_update'),
};

/** Event name → payload, as in docs/ipc.md. */
export interface ShellEvents {
  status: Status;
  level: Level;
  dictation: DictationEvent;
  'file-job': FileJob;
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

/** Open dialog for a vocabulary file; null when cancelled. */
export async function pickVocabularyFile(): Promise<string | null> {
  const picked = await open({
    multiple: false,
    directory: false,
    title: 'Import a vocabulary (one word or phrase per line)',
    filters: [{ name: 'Text', extensions: ['txt', '*'] }],
  });
  return Array.isArray(picked) ? (picked[0] ?? null) : picked;
}

/** Save dialog for the vocabulary; null when cancelled. */
export async function pickVocabularySavePath(): Promise<string | null> {
  return save({
    title: 'Export the vocabulary',
    defaultPath: 'utter-vocabulary.txt',
    filters: [{ name: 'Text', extensions: ['txt'] }],
  });
}
