// A fake Tauri shell for page tests, bundled to one IIFE and loaded into the
// page as an init script, so it is in place before the app's first invoke or
// listen. It answers docs/ipc.md commands from a fixture, records every call
// for the tests to inspect, and lets tests emit shell events.

import { mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import { emit } from '@tauri-apps/api/event';
import type {
  CatalogRow,
  FileJob,
  HistoryEntry,
  Model,
  PackagedRow,
  RecentApp,
  ServerStatus,
  MeetingStatus,
  MeetingSummary,
  Settings,
  Status,
  Device,
  ComputeDevice,
  UpdateInfo,
  ProviderConfig,
  ProviderInfo,
  ProviderKind,
  RewriteMode,
  RewriteTest,
} from '../../src/lib/types';
import { baseName } from '../../src/lib/paths';
import { builtInModes, providerInfos, queuedJob } from '../builders';

export interface Fixture {
  status: Status;
  settings: Settings;
  devices: Device[];
  computeDevices: ComputeDevice[];
  models: Model[];
  history: HistoryEntry[];
  fileJobs: FileJob[];
  /** The model catalog (catalog_models). */
  catalog?: CatalogRow[];
  /** The models from the package index (packaged_models). */
  packaged?: PackagedRow[];
  /** The apps dictated into lately (recent_apps). */
  recentApps?: RecentApp[];
  /** Settings → Server (server_status; default: off). */
  server?: ServerStatus;
  /** The meeting in progress (meeting_status; default: idle) and the past ones (list_meetings). */
  meeting?: MeetingStatus;
  meetings?: MeetingSummary[];
  /** Commands that reject, with their message. */
  fail?: Record<string, string>;
  /** What the open dialog answers (null = cancelled). */
  dialogOpen?: string | string[] | null;
  /** What check_for_updates answers (null = up to date). */
  update?: UpdateInfo | null;
  /** rewrite_providers (default: the real list) and rewrite_built_in_modes (the five). */
  providers?: ProviderInfo[];
  builtInModes?: RewriteMode[];
  /** What rewrite_models answers. */
  rewriteModels?: string[];
  /** What rewrite_test answers. */
  rewriteTest?: RewriteTest;
  /** The providers whose API key the keychain holds (save_api_key adds, delete_api_key removes). */
  savedKeys?: ProviderKind[];
  /** Commands answered only after this many ms (to see a page while it waits). */
  delays?: Record<string, number>;
}

export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

declare global {
  interface Window {
    __UTTER_FIXTURE__: Fixture;
    __shell: {
      calls: Call[];
      /** For each get_status: whether the page listened for `status` events by then. */
      statusReads: boolean[];
      state: Fixture;
      emit: (event: string, payload: unknown) => Promise<void>;
    };
  }
}

const state: Fixture = window.__UTTER_FIXTURE__;
const calls: Call[] = [];
const listening = new Set<string>();
const statusReads: boolean[] = [];
let nextJobId = 100;

function wav(): ArrayBuffer {
  // 0.1 s of silence, 16 kHz mono 16-bit: enough for <audio> to accept it.
  const samples = 1600;
  const buf = new ArrayBuffer(44 + samples * 2);
  const v = new DataView(buf);
  const text = (o: number, s: string) => [...s].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)));
  text(0, 'RIFF');
  v.setUint32(4, 36 + samples * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, 16000, true);
  v.setUint32(28, 32000, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  text(36, 'data');
  v.setUint32(40, samples * 2, true);
  return buf;
}


const idleMeeting: MeetingStatus = { state: 'idle', dir: null, microphone: null, systemAudio: null, notice: null };

function handle(cmd: string, args: Record<string, unknown>): unknown {
  const fail = state.fail?.[cmd];
  if (fail) throw fail;
  switch (cmd) {
    case 'get_status':
      statusReads.push(listening.has('status'));
      return state.status;
    case 'get_settings':
      return state.settings;
    case 'save_settings':
      state.settings = args.settings as Settings;
      return state.settings;
    case 'recent_apps':
      return state.recentApps ?? [];
    case 'server_status':
      // A test may change what the shell reports while the page polls.
      return (
        (window as unknown as { __fakeServer?: ServerStatus }).__fakeServer ??
        state.server ?? { state: 'off', url: null, wyomingUrl: null, error: null, clients: [] }
      );
    case 'dismiss_notice':
      state.status = { ...state.status, notice: null };
      return null;
    case 'start_dictation':
    case 'stop_dictation':
    case 'cancel_dictation':
    case 'install_default_model':
    case 'copy_text':
    case 'paste_text':
    case 'cancel_file_job':
    case 'clear_file_jobs':
    case 'export_transcript':
      return null;
    case 'list_devices':
      return state.devices;
    case 'list_compute_devices':
      return state.computeDevices;
    case 'list_models':
      return state.models;
    case 'packaged_models':
      return state.packaged ?? [];
    case 'install_packaged_model':
      state.packaged = (state.packaged ?? []).map((p) => (p.name === args.name ? { ...p, installed: true } : p));
      return null;
    case 'import_model': {
      const m: Model = {
        name: baseName(String(args.path)),
        kind: 'speech',
        arch: 'whisper',
        variant: null,
        sizeBytes: 1000,
        isDefault: false,
        languages: [],
      };
      state.models = [...state.models, m];
      return m;
    }
    case 'set_default_model':
      state.models = state.models.map((m) => ({ ...m, isDefault: m.kind === 'speech' ? m.name === args.name : m.isDefault }));
      return null;
    case 'remove_model':
      state.models = state.models.filter((m) => m.name !== args.name);
      return null;
    case 'history_list': {
      const q = (args.query as string | null)?.toLowerCase() ?? null;
      const hits = state.history.filter((h) => q == null || h.text.toLowerCase().includes(q));
      const offset = args.offset as number;
      return hits.slice(offset, offset + (args.limit as number));
    }
    case 'history_delete':
      state.history = state.history.filter((h) => h.id !== args.id);
      return null;
    case 'history_retry': {
      const h = state.history.find((x) => x.id === args.id)!;
      return { ...h, text: `retried with ${args.model ?? h.model}`, model: (args.model as string | null) ?? h.model, error: null };
    }
    case 'history_audio':
      return wav();
    case 'transcribe_files':
      return (args.paths as string[]).map((p) => queuedJob(nextJobId++, p, { speakers: args.speakers === true }));
    case 'list_file_jobs':
      return state.fileJobs;
    case 'render_transcript':
      return '';
    case 'rewrite_providers':
      return state.providers ?? providerInfos();
    case 'rewrite_built_in_modes':
      return state.builtInModes ?? builtInModes();
    case 'rewrite_destination':
      return destination(args.provider as ProviderConfig);
    case 'rewrite_models':
      return state.rewriteModels ?? [];
    case 'rewrite_test':
      return state.rewriteTest ?? { result: 'failed', notice: { kind: 'not-configured', reason: 'no model is chosen' } };
    case 'api_key_saved':
      return (state.savedKeys ?? []).includes(args.kind as ProviderKind);
    case 'save_api_key':
      state.savedKeys = [...(state.savedKeys ?? []).filter((k) => k !== args.kind), args.kind as ProviderKind];
      return null;
    case 'delete_api_key': {
      const had = (state.savedKeys ?? []).includes(args.kind as ProviderKind);
      state.savedKeys = (state.savedKeys ?? []).filter((k) => k !== args.kind);
      return had;
    }
    case 'check_for_updates':
      return state.update ?? null;
    case 'install_update':
      return null;
    case 'catalog_models':
      return state.catalog ?? [];
    case 'download_model':
    case 'pause_download':
    case 'cancel_download':
      // The shell answers at once; progress arrives as model-download events (emitted by the tests).
      return null;
    case 'use_model': {
      const used = args.usedFor as string;
      state.catalog = (state.catalog ?? []).map((r) => ({
        ...r,
        isDictationDefault: used !== 'files' ? r.name === args.name : r.isDictationDefault,
        isFilesDefault: used !== 'dictation' ? r.name === args.name : r.isFilesDefault,
      }));
      return null;
    }
    case 'import_vocabulary':
      return ['Kubernetes', 'Anna Åberg'];
    case 'export_vocabulary':
      return null;
    case 'import_snippets':
      // "my address" is in the page's list already: the import keeps the list's.
      return [
        { trigger: 'My Address', text: 'elsewhere', inSentence: false },
        { trigger: 'sign off', text: 'Best,\nAnna', inSentence: false },
      ];
    case 'export_snippets':
      return null;
    case 'plugin:dialog|open':
      return state.dialogOpen ?? null;
    case 'meeting_status':
      return state.meeting ?? idleMeeting;
    case 'start_meeting':
      state.meeting = { ...idleMeeting, state: 'recording', dir: '/data/meetings/2026-12-04T10-00-00', microphone: 'Built-in Microphone', systemAudio: 'Monitor of Speakers' };
      return state.meeting;
    case 'pause_meeting':
      state.meeting = { ...(state.meeting ?? idleMeeting), state: args.paused ? 'paused' : 'recording' };
      return state.meeting;
    case 'stop_meeting':
    case 'finish_meeting':
      state.meeting = { ...(state.meeting ?? idleMeeting), state: 'transcribing' };
      return state.meeting;
    case 'list_meetings':
      return state.meetings ?? [];
    case 'export_meeting':
      return null;
    case 'meeting_audio':
      return wav();
    case 'rename_meeting_speaker': {
      const { dir, from, to } = args as { dir: string; from: string; to: string };
      const meetings = (state.meetings ?? []).map((m) =>
        m.dir === dir ? { ...m, turns: m.turns.map((t) => (t.speaker === from ? { ...t, speaker: to } : t)) } : m,
      );
      state.meetings = meetings;
      return meetings.find((m) => m.dir === dir);
    }
    case 'plugin:dialog|save': {
      const o = args.options as { defaultPath?: string };
      return `/home/user/${o.defaultPath ?? 'out'}`;
    }
    default:
      throw `fake shell: unknown command ${cmd}`;
  }
}

/** ProviderConfig::destination's sentence, for the providers' default addresses. */
function destination(p: ProviderConfig): string {
  const info = (state.providers ?? providerInfos()).find((x) => x.kind === p.kind);
  const label = info?.label ?? p.kind;
  const url = (p.baseUrl?.trim() || info?.defaultBaseUrl || '').replace(/\/+$/, '');
  if (/^https?:\/\/(localhost|127\.[\d.]+|\[::1\])(:|\/|$)/.test(url)) {
    return `What you dictate will be sent to ${label} at ${url}, a server on this computer; it does not leave this computer.`;
  }
  if (info?.keyUse === 'required') {
    return `What you dictate will be sent over the internet to ${label} (${url}) with your API key, and handled under ${label}'s terms and privacy policy.`;
  }
  return `What you dictate will be sent to the server at ${url}, with your API key if you saved one.`;
}

mockWindows('main');
mockIPC(
  (cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args: JSON.parse(JSON.stringify(args)) });
    const delay = state.delays?.[cmd];
    if (delay) return new Promise((ok) => setTimeout(ok, delay)).then(() => handle(cmd, args));
    return handle(cmd, args);
  },
  { shouldMockEvents: true },
);

// Note which events the page listens for (the mock answers `listen` itself).
type Internals = { invoke: (cmd: string, args?: unknown, options?: unknown) => Promise<unknown> };
const internals = (window as unknown as { __TAURI_INTERNALS__: Internals }).__TAURI_INTERNALS__;
const mockedInvoke = internals.invoke;
internals.invoke = (cmd, args, options) => {
  // The mock registers the listener as it is invoked.
  if (cmd === 'plugin:event|listen') listening.add((args as { event: string }).event);
  return mockedInvoke(cmd, args, options);
};

window.__shell = { calls, statusReads, state, emit: (event, payload) => emit(event, payload) };
