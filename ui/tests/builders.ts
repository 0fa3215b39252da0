// Test data shared by the unit and page tests: the shell's default settings
// (as utter-core's Settings::default), a file job as the shell queues it, and
// the AI providers and built-in modes (as utter-rewrite's providers() and
// built_in_modes()).
import { baseName } from '../src/lib/paths';
import type { FileJob, Profile, ProviderInfo, RewriteConfig, RewriteMode, Settings } from '../src/lib/types';

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
    microphone: 'on_press',
    language: 'auto',
    model: null,
    output: 'paste',
    pasteKeys: 'ctrl+v',
    restoreClipboard: true,
    pasteFallback: 'clipboard',
    trailingSpace: true,
    submit: 'none',
    spokenSubmit: false,
    submitWords: [],
    sounds: true,
    autostart: false,
    showOverlay: true,
    checkUpdates: true,
    vadThreshold: 0.5,
    silenceMs: 600,
    stopOnSilenceMs: null,
    translate: false,
    duckOtherAudio: null,
    editCommands: true,
    keepAudioDays: 30,
    maxAudioMinutes: 480,
    engineIdleUnloadMinutes: 10,
    serverEnabled: false,
    serverPort: 2022,
    wyomingEnabled: false,
    wyomingPort: 10300,
    compute: 'auto',
    theme: 'system',
    vocabulary: [],
    replacements: [],
    snippets: [],
    spokenPunctuation: false,
    cleanUp: false,
    profiles: builtinProfiles(),
    rewrite: defaultRewrite(),
    commandKey: 'ctrl+shift+e',
    meetingKey: null,
  };
}

/** RewriteConfig::default: off, Ollama without a model, 2 s, clean-up. */
export function defaultRewrite(): RewriteConfig {
  return {
    enabled: false,
    provider: { kind: 'ollama', baseUrl: null, model: '', timeBudgetMs: 2000 },
    mode: 'clean-up',
    modes: [],
    commandPrompt: null,
  };
}

/** crates/rewrite/src/provider.rs `providers()`: local ones first. */
export function providerInfos(): ProviderInfo[] {
  const local = (kind: ProviderInfo['kind'], label: string, defaultBaseUrl: string): ProviderInfo => ({
    kind, label, defaultBaseUrl, local: true, keyUse: 'never',
  });
  const hosted = (kind: ProviderInfo['kind'], label: string, defaultBaseUrl: string): ProviderInfo => ({
    kind, label, defaultBaseUrl, local: false, keyUse: 'required',
  });
  return [
    local('ollama', 'Ollama', 'http://localhost:11434/v1'),
    local('lm-studio', 'LM Studio', 'http://localhost:1234/v1'),
    local('llama-cpp', 'llama.cpp server', 'http://localhost:8080/v1'),
    local('vllm', 'vLLM', 'http://localhost:8000/v1'),
    hosted('openai', 'OpenAI', 'https://api.openai.com/v1'),
    hosted('openrouter', 'OpenRouter', 'https://openrouter.ai/api/v1'),
    hosted('groq', 'Groq', 'https://api.groq.com/openai/v1'),
    hosted('anthropic', 'Anthropic', 'https://api.anthropic.com/v1'),
    { kind: 'custom', label: 'Custom server', defaultBaseUrl: '', local: false, keyUse: 'optional' },
  ];
}

/** crates/rewrite/src/modes.rs `built_in_modes()` (the prompts shortened: the UI only shows them). */
export function builtInModes(): RewriteMode[] {
  return [
    { id: 'clean-up', name: 'Clean-up', prompt: 'Tidy the dictation: drop filler words, false starts and stutters.' },
    { id: 'formal', name: 'Formal', prompt: 'Rewrite the text in a clear, courteous, professional register.' },
    { id: 'email', name: 'Email', prompt: 'Shape the text into the body of a short email.' },
    { id: 'bullet-list', name: 'Bullet list', prompt: 'Turn the text into a list: one point per line.' },
    { id: 'code-comment', name: 'Code comment', prompt: 'Turn the text into a concise comment for source code.' },
  ];
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
    speakers: false,
    ...over,
  };
}
