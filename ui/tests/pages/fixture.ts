// Shell data the page tests start from; each test copies and adjusts it.
import type { Fixture } from './fake-shell';
import type { FileJob, HistoryEntry } from '../../src/lib/types';
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
