// Types of the IPC contract between the UI and the Tauri shell (docs/ipc.md).
// Generated from the Rust types by ts-rs into ./generated/, with the commands'
// signatures in ./generated/commands.ts (`cargo test` writes them; CI fails
// when they are stale): never edit those by hand.
// This file only gives them the names the UI uses.

export type { AppState } from './generated/AppState';
export type { TriggerMode as Mode } from './generated/TriggerMode';
export type { Status } from './generated/Status';
export type { Capability } from './generated/Capability';
export type { OutputMethod } from './generated/OutputMethod';
export type { PasteKeys } from './generated/PasteKeys';
export type { Theme } from './generated/Theme';
export type { Replacement } from './generated/Replacement';
export type { UpdateInfo } from './generated/UpdateInfo';
export type { InputDevice as Device } from './generated/InputDevice';
export type { ComputeDevice } from './generated/ComputeDevice';
export type { ModelSummary as Model } from './generated/ModelSummary';
export type { PackagedRow } from './generated/PackagedRow';
export type { Quant } from './generated/Quant';
export type { Entry as HistoryEntry } from './generated/Entry';
export type { Segment } from './generated/Segment';
export type { JobState as FileJobState } from './generated/JobState';
export type { FileJob } from './generated/FileJob';
export type { Format as ExportFormat } from './generated/Format';
export type { UseFor } from './generated/UseFor';
export type { InstallProgress } from './generated/InstallProgress';
export type { Level } from './generated/Level';
export type { DownloadState } from './generated/DownloadState';
export type { DownloadUpdate } from './generated/DownloadUpdate';
export type { CatalogRow } from './generated/CatalogRow';

// Issue 31's types, spelled here until `cargo test` writes them into ./generated/ (MicMode,
// Profile, RecentApp, and Settings and DictationEvent with them): the shapes of
// crates/core/src/{settings.rs, profiles.rs, app/recent_apps.rs, dictation/events.rs}. Written so
// that they agree with the generated files once those exist; then this block becomes
// re-exports again (`Settings` and `Stamped as DictationEvent` from ./generated/).
import type { OutputMethod } from './generated/OutputMethod';
import type { PasteKeys } from './generated/PasteKeys';
import type { Settings as GeneratedSettings } from './generated/Settings';
import type { Stamped } from './generated/Stamped';

/** Ready: open while dictation is on (nothing said at the press is lost); on_press: opened at each press. */
export type MicMode = 'ready' | 'on_press';

/** One app's (or family of apps') overrides; an unset field is absent and keeps the settings. */
export interface Profile {
  name: string;
  /** Case-insensitive globs against the focused app's names. */
  apps: string[];
  output?: OutputMethod;
  pasteKeys?: PasteKeys;
  trailingSpace?: boolean;
  /** false: a final period is left off (chat apps). */
  finalPeriod?: boolean;
  /** "auto" or a language code. */
  language?: string;
  /** Absent when empty. */
  vocabulary: string[];
  spokenPunctuation?: boolean;
  cleanUp?: boolean;
}

/** An app dictated into lately, and the profile its last dictation followed. */
export interface RecentApp {
  app: string;
  profile: string | null;
}

export type Settings = Omit<GeneratedSettings, 'microphone' | 'profiles'> & { microphone: MicMode; profiles: Profile[] };

/** A dictation event; `partial_text` carries the words so far, settled and tentative. */
export type DictationEvent =
  | Exclude<Stamped, { event: 'partial_text' | 'recording_started' }>
  | ({ t_ms: number } & (
      | { event: 'partial_text'; id: number; settled: string; tentative: string }
      | { event: 'recording_started'; id: number; audio_path: string; app?: string; profile?: string }
    ));

import type { Quant } from './generated/Quant';

/**
 * The weight formats offered on import, with what each means to a user. `null` leaves the
 * choice to Utter: q8_0 for a converted folder (the same words as f16 in about half the size,
 * docs/benchmarks.md), and a file already in the engine's format as it is.
 */
export const QUANTS: { value: Quant | null; label: string }[] = [
  { value: null, label: 'q8_0 (recommended: half the size, same words)' },
  { value: 'f16', label: 'f16 (as converted, twice the size)' },
  { value: 'q5_1', label: 'q5_1' },
  { value: 'q5_0', label: 'q5_0 (smaller, same words in our tests)' },
  { value: 'q4_0', label: 'q4_0 (smallest, loses words)' },
];
