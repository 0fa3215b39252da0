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
export type { Snippet } from './generated/Snippet';
export type { UpdateInfo } from './generated/UpdateInfo';
export type { InputDevice as Device } from './generated/InputDevice';
export type { ComputeDevice } from './generated/ComputeDevice';
export type { ModelSummary as Model } from './generated/ModelSummary';
export type { PackagedRow } from './generated/PackagedRow';
export type { Quant } from './generated/Quant';
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

export type { MicMode } from './generated/MicMode';
export type { RecentApp } from './generated/RecentApp';
export type { ServerStatus } from './generated/ServerStatus';
export type { MeetingLevels } from './generated/MeetingLevels';
export type { MeetingState } from './generated/MeetingState';
export type { MeetingStatus } from './generated/MeetingStatus';
export type { MeetingSummary } from './generated/MeetingSummary';
export type { MeetingTurn } from './generated/MeetingTurn';
export type { ServerClient } from './generated/ServerClient';
export type { Mode as RewriteMode } from './generated/Mode';
export type { ProviderConfig } from './generated/ProviderConfig';
export type { ProviderInfo } from './generated/ProviderInfo';
export type { ProviderKind } from './generated/ProviderKind';
export type { KeyUse } from './generated/KeyUse';
export type { RewriteConfig } from './generated/RewriteConfig';

export type { Notice } from './generated/Notice';
export type { RewriteTest } from './generated/RewriteTest';
export type { RewriteReport } from './generated/RewriteReport';
export type { CommandStarted } from './generated/CommandStarted';
export type { Profile } from './generated/Profile';
export type { Settings } from './generated/Settings';
export type { Entry as HistoryEntry } from './generated/Entry';
export type { Stamped as DictationEvent } from './generated/Stamped';

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
