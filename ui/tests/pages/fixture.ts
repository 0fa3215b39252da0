// Shell data the page tests start from; each test copies and adjusts it.
import type { Fixture } from './fake-shell';
import type { CatalogRow, FileJob, HistoryEntry } from '../../src/lib/types';
import { defaultSettings, queuedJob } from '../builders';

const DAY = 86_400_000;
const now = Date.now();

export function historyEntry(id: number, over: Partial<HistoryEntry> = {}): HistoryEntry {
  return {
    id,
    kind: 'dictation',
    text: `Entry number ${id}`,
    createdMs: now - id * 60_000,
    durationMs: 4_200,
    model: 'whisper-base',
    language: 'en',
    audioPath: `/data/rec/${id}.wav`,
    sourceName: null,
    error: null,
    rawText: null,
    rewrite: null,
    warning: null,
    ...over,
  };
}

export function fileJob(id: number, over: Partial<FileJob> = {}): FileJob {
  return queuedJob(id, `/home/user/Audio/meeting-${id}.m4a`, over);
}

export function baseFixture(): Fixture {
  return {
    status: {
      state: 'idle',
      model: 'whisper-base',
      modelArch: 'whisper',
      backend: 'cpu',
      backendFallback: null,
      languages: ['en', 'de', 'fr'],
      detectsLanguage: true,
      takesVocabulary: true,
      hotkey: 'ctrl+shift+space',
      mode: 'push_to_talk',
      lastText: 'Meet me at the station at half past five.',
      error: null,
      notice: null,
      capabilities: [],
    },
    settings: { ...defaultSettings(), theme: 'light' },
    computeDevices: [
      { kind: 'cpu', name: 'CPU', description: 'AMD Ryzen 7' },
      { kind: 'vulkan', name: 'Vulkan0', description: 'Radeon 780M' },
    ],
    devices: [
      { name: 'Built-in Microphone', isDefault: true },
      { name: 'USB Headset', isDefault: false },
    ],
    models: [
      { name: 'whisper-base', kind: 'speech', arch: 'whisper', variant: 'q8_0', sizeBytes: 147_000_000, isDefault: true, languages: ['en', 'de'] },
      { name: 'whisper-small-en', kind: 'speech', arch: 'whisper', variant: null, sizeBytes: 487_600_000, isDefault: false, languages: ['en'] },
      { name: 'silero-vad', kind: 'vad', arch: 'silero', variant: 'v5', sizeBytes: 2_300_000, isDefault: true, languages: [] },
    ],
    history: [
      historyEntry(1, { text: 'Hello team, the release is ready for review.' }),
      historyEntry(2, {
        kind: 'file',
        text: 'Welcome to the quarterly planning meeting.',
        sourceName: 'planning.mp3',
        durationMs: 1_840_000,
        createdMs: now - 2 * DAY,
      }),
      historyEntry(3, { text: 'Buy milk and hello to the neighbours.', audioPath: null, createdMs: now - DAY }),
    ],
    fileJobs: [],
  };
}

export function catalogRow(name: string, over: Partial<CatalogRow> = {}): CatalogRow {
  return {
    name,
    displayName: name,
    description: `The ${name} model.`,
    arch: 'whisper',
    parameters: '74M',
    sizeBytes: 147_000_000,
    speedScore: 80,
    accuracyScore: 60,
    languages: ['en'],
    streaming: false,
    translate: false,
    detectsLanguage: false,
    license: 'MIT',
    installed: false,
    isDictationDefault: false,
    isFilesDefault: false,
    recommendedForDictation: null,
    recommendedForFiles: null,
    download: null,
    ...over,
  };
}

export function catalogFixture() {
  const f = baseFixture();
  f.catalog = [
    catalogRow('whisper-base', { installed: true, isDictationDefault: true, isFilesDefault: true, languages: ['en', 'de'], detectsLanguage: true }),
    catalogRow('whisper-small.en', {
      displayName: 'Whisper small (English)',
      parameters: '244M',
      sizeBytes: 487_600_000,
      accuracyScore: 75,
      recommendedForDictation: '244M parameters: fast enough for dictation on 2 CPU cores; accuracy 75/100',
    }),
    catalogRow('parakeet-tdt-de', {
      arch: 'parakeet',
      languages: ['de', 'fr'],
      streaming: true,
      sizeBytes: 2_400_000_000,
      recommendedForFiles: '600M parameters: the most accurate that is practical for files on 2 CPU cores; accuracy 90/100',
    }),
  ];
  return f;
}
