// Types of the IPC contract between the UI and the Tauri shell (docs/ipc.md).
// Keep these in step with that document: field names are camelCase JSON.

export type AppState = 'loading' | 'no_model' | 'idle' | 'recording' | 'transcribing' | 'error';
export type Mode = 'push_to_talk' | 'toggle';

export interface Status {
  state: AppState;
  model: string | null;
  modelArch: string | null;
  languages: string[];
  detectsLanguage: boolean;
  takesVocabulary: boolean;
  hotkey: string;
  mode: Mode;
  lastText: string | null;
  error: string | null;
  notice: string | null;
  /** What works in this desktop session (hotkey, ptt, paste, type, clipboard). */
  capabilities: Capability[];
}

/** One capability of this session: working or not; `detail` says how, or why not and what to do. */
export interface Capability {
  name: string;
  ok: boolean;
  detail: string;
}

export type OutputMethod = 'paste' | 'type' | 'clipboard';
export type PasteKeys = 'ctrl+v' | 'ctrl+shift+v' | 'shift+insert';
export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  version: number;
  hotkey: string;
  mode: Mode;
  inputDevice: string | null;
  language: string;
  model: string | null;
  output: OutputMethod;
  pasteKeys: PasteKeys;
  restoreClipboard: boolean;
  trailingSpace: boolean;
  sounds: boolean;
  autostart: boolean;
  showOverlay: boolean;
  checkUpdates: boolean;
  vadThreshold: number;
  silenceMs: number;
  keepAudioDays: number;
  engineIdleUnloadMinutes: number;
  theme: Theme;
  vocabulary: string[];
  replacements: Replacement[];
  spokenPunctuation: boolean;
  cleanUp: boolean;
}

/** "heard → written": whole words, any case; `regex` marks an advanced pattern rule. */
export interface Replacement {
  heard: string;
  written: string;
  regex: boolean;
}

/** A newer release than the running one. */
export interface UpdateInfo {
  version: string;
  notes: string | null;
}

export interface Device {
  name: string;
  isDefault: boolean;
}

export interface Model {
  name: string;
  kind: 'speech' | 'vad';
  arch: string;
  variant: string | null;
  sizeBytes: number;
  isDefault: boolean;
  languages: string[];
}

/** Weight formats a converted model can be written in (`utter models import --quant`). */
export type Quant = 'f16' | 'q8_0' | 'q5_1' | 'q5_0' | 'q4_0';

export const QUANTS: { value: Quant; label: string }[] = [
  { value: 'f16', label: 'f16 (as converted)' },
  { value: 'q8_0', label: 'q8_0 (half the size)' },
  { value: 'q5_1', label: 'q5_1' },
  { value: 'q5_0', label: 'q5_0' },
  { value: 'q4_0', label: 'q4_0 (smallest)' },
];

export interface HistoryEntry {
  id: number;
  kind: 'dictation' | 'file';
  text: string;
  createdMs: number;
  durationMs: number;
  model: string;
  language: string | null;
  audioPath: string | null;
  sourceName: string | null;
  /** Why the transcription failed; the recording is kept for a retry. */
  error: string | null;
  /** What the engine heard, where replacements or clean-up changed it. */
  rawText: string | null;
}

export interface Segment {
  startMs: number;
  endMs: number;
  text: string;
}

export type FileJobState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface FileJob {
  id: number;
  path: string;
  name: string;
  state: FileJobState;
  fraction: number;
  error: string | null;
  durationMs: number | null;
  segments: Segment[];
  historyId: number | null;
}

export type ExportFormat = 'txt' | 'srt' | 'vtt' | 'json';

export interface InstallProgress {
  stage: string;
  fraction: number | null;
  done: boolean;
  error: string | null;
}

export interface Level {
  rms: number;
}

/** One dictation event (`tag = "event"`); only the fields the UI reads are typed. */
export interface DictationEvent {
  event: string;
  text?: string;
  message?: string;
  [field: string]: unknown;
}

/** Where a catalog model's download stands (event `model-download`). */
export type DownloadState =
  | { state: 'queued' }
  | { state: 'downloading'; downloaded: number; total: number; bytesPerSec: number; etaSecs: number | null }
  | { state: 'verifying' }
  | { state: 'paused'; downloaded: number; total: number }
  | { state: 'failed'; error: string }
  | { state: 'installed' };

/** One catalog model on the Models page. */
export interface CatalogRow {
  name: string;
  displayName: string;
  description: string;
  arch: string;
  parameters: string | null;
  sizeBytes: number;
  speedScore: number | null;
  accuracyScore: number | null;
  languages: string[];
  streaming: boolean;
  translate: boolean;
  detectsLanguage: boolean;
  license: string;
  installed: boolean;
  isDictationDefault: boolean;
  isFilesDefault: boolean;
  /** Why this model suits this computer, when it is the pick. */
  recommendedForDictation: string | null;
  recommendedForFiles: string | null;
  download: DownloadState | null;
}
