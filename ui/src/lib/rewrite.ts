// The AI rewrite (Settings → AI, and how a rewrite went in Home and History):
// a sentence for each notice (the Rust Display texts of crates/rewrite/src/outcome.rs),
// the modes as used (the built-ins, the user's edit of each, then the user's own), a
// mirror of the shell's checks (crates/rewrite/src/{config.rs, provider.rs}) so a
// mistake shows beside its field at once, and the providers grouped for the select.

import {
  BUDGET_MAX_MS,
  BUDGET_MIN_MS,
  DEFAULT_BUDGET_MS,
  MODE_ID_MAX_CHARS,
  MODE_NAME_MAX_CHARS,
  PROMPT_MAX_CHARS,
} from './generated/limits';
import type { ProfileProblem } from './profiles';
import type {
  Notice,
  Profile,
  ProviderConfig,
  ProviderInfo,
  RewriteConfig,
  RewriteMode,
  RewriteReport,
  RewriteTest,
} from './types';

/** A profile's `rewrite` (or the settings' mode) that turns the AI rewrite off. */
export const REWRITE_OFF = 'off';
/** The `mode` of a spoken command's report (AI command mode). */
export const COMMAND_MODE = 'command';
/** The mode rewriting starts with (RewriteConfig::default). */
export const DEFAULT_MODE = 'clean-up';

/** crates/rewrite's limits (generated from the Rust constants: crates/app/src/ui_limits.rs). */
export { BUDGET_MAX_MS, BUDGET_MIN_MS, DEFAULT_BUDGET_MS, MODE_NAME_MAX_CHARS, PROMPT_MAX_CHARS };

/** `2`, `1.5`: seconds as a person reads them (outcome.rs `seconds`). */
export function seconds(ms: number): string {
  return (ms / 1000).toFixed(1).replace(/(\.0)+$/, '');
}

function serverError(status: number, detail: string | null): string {
  let what: string;
  if (status === 401 || status === 403) what = `The server refused the API key (error ${status})`;
  else if (status === 404) what = `The server does not know this model or address (error ${status})`;
  else if (status === 429) what = `The server is rate-limiting requests (error ${status})`;
  else if (status >= 300 && status <= 399) {
    what = `The server redirected the request elsewhere (status ${status}); set its final address`;
  } else what = `The server answered with error ${status}`;
  return detail !== null ? `${what}: ${detail}.` : `${what}.`;
}

/** Why the model's answer was not used, as a sentence (the same words as the Rust side). */
export function noticeText(n: Notice): string {
  switch (n.kind) {
    case 'not-configured':
      return `AI rewriting is not set up: ${n.reason}.`;
    case 'key-missing':
      return `No API key for ${n.provider} is saved; add one in Settings → AI.`;
    case 'keychain-failed':
      return `The API key could not be read: ${n.detail}.`;
    case 'nothing-said':
      return 'There was no text to rewrite.';
    case 'timed-out':
      return `The model did not finish within ${seconds(n.afterMs)} s.`;
    case 'unreachable':
      return `Could not reach the server at ${n.url}: ${n.detail}.`;
    case 'server-error':
      return serverError(n.status, n.detail);
    case 'stream-error':
      return `The server reported an error: ${n.message}.`;
    case 'connection-closed':
      return 'The connection closed before the answer was complete.';
    case 'unreadable':
      return `The server's answer could not be read (${n.detail}); check the server address.`;
    case 'empty-answer':
      return "The model's answer was empty.";
    case 'truncated':
      return "The model's answer ran past the length allowed for this text and was cut off.";
    case 'too-long':
      return `The model's answer was far longer than what you said (${n.answerChars} characters for ${n.inputChars}).`;
    case 'refusal':
      return 'The model answered with a refusal instead of the text.';
    case 'failed':
      return `The rewrite stopped unexpectedly: ${n.detail}.`;
    default: {
      // A kind added on the Rust side fails the type check here first.
      const unknown: never = n;
      return String((unknown as { kind: string }).kind);
    }
  }
}

/** A duration in words: `840 ms` below 10 s, then `12.5 s`. */
export function formatMs(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${seconds(ms)} s`;
}

/** The Test button's answer in one line. */
export function testSummary(t: RewriteTest): string {
  return t.result === 'answered'
    ? `Answered in ${formatMs(t.totalMs)}, first words after ${formatMs(t.firstTokenMs)}`
    : `No answer used: ${noticeText(t.notice)}`;
}

/** Every mode as used: the built-ins (or the user's edit of each), then the user's own, in
 *  their order (RewriteConfig::all_modes). */
export function allModes(builtIns: RewriteMode[], user: RewriteMode[]): RewriteMode[] {
  const builtInIds = new Set(builtIns.map((m) => m.id));
  return [
    ...builtIns.map((b) => user.find((m) => m.id === b.id) ?? b),
    ...user.filter((m) => !builtInIds.has(m.id)),
  ];
}

export function isBuiltIn(id: string, builtIns: RewriteMode[]): boolean {
  return builtIns.some((m) => m.id === id);
}

/** Whether the user's modes hold an edit of the built-in `id`. */
export function isEdited(id: string, user: RewriteMode[], builtIns: RewriteMode[]): boolean {
  return isBuiltIn(id, builtIns) && user.some((m) => m.id === id);
}

/** The user's modes with the built-in's prompt set to `prompt`: a same-id entry, or none when
 *  the prompt is the built-in's again (nothing to restore then). */
export function editBuiltIn(user: RewriteMode[], builtIn: RewriteMode, prompt: string): RewriteMode[] {
  const others = user.filter((m) => m.id !== builtIn.id);
  if (prompt === builtIn.prompt) return others;
  const at = user.findIndex((m) => m.id === builtIn.id);
  const edited = { id: builtIn.id, name: builtIn.name, prompt };
  if (at < 0) return [...user, edited];
  return user.map((m, i) => (i === at ? edited : m));
}

/** The user's modes without `id`: a built-in's edit removed restores it; an own mode goes. */
export function withoutMode(user: RewriteMode[], id: string): RewriteMode[] {
  return user.filter((m) => m.id !== id);
}

/** Lower-case letters, digits and `-`, not at either end, 1–40 characters (config.rs). */
export function validModeId(id: string): boolean {
  return id.length >= 1 && id.length <= MODE_ID_MAX_CHARS && /^[a-z0-9-]+$/.test(id) && !id.startsWith('-') && !id.endsWith('-');
}

/** An id for a new mode named `name` that no mode has: `my-mode`, `my-mode-2`… */
export function newModeId(name: string, taken: string[]): string {
  const base =
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, MODE_ID_MAX_CHARS - 3)
      .replace(/-+$/, '') || 'mode';
  const used = new Set([...taken, REWRITE_OFF, COMMAND_MODE]);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const id = `${base}-${n}`;
    if (!used.has(id)) return id;
  }
}

/** A new mode of the user's, with a name and id no mode has. */
export function newMode(all: RewriteMode[]): RewriteMode {
  const names = new Set(all.map((m) => m.name.toLowerCase()));
  let name = 'My mode';
  for (let n = 2; names.has(name.toLowerCase()); n++) name = `My mode ${n}`;
  return { id: newModeId(name, all.map((m) => m.id)), name, prompt: '' };
}

/** Where the `k`-th of the user's own modes (not an edit of a built-in) is in `user`, or -1. */
export function ownModeIndex(user: RewriteMode[], builtIns: RewriteMode[], k: number): number {
  let seen = -1;
  for (const [j, m] of user.entries()) {
    if (isBuiltIn(m.id, builtIns)) continue;
    seen++;
    if (seen === k) return j;
  }
  return -1;
}

/** Why mode `at` (its position in `all`) cannot take the id `id`, or null: an id names one
 *  mode, and "off" and "command" mean something else. */
export function modeIdConflict(id: string, all: RewriteMode[], at: number): string | null {
  if (id === REWRITE_OFF) return '“off” turns rewriting off in a profile: choose another id.';
  if (id === COMMAND_MODE) return '“command” names spoken commands: choose another id.';
  const other = all.findIndex((m, i) => i !== at && m.id === id);
  return other >= 0 ? `“${all[other].name}” has the id “${id}”: choose another.` : null;
}

/** The name of mode `id` (its id when unknown), and "None" for off. */
export function modeName(id: string, modes: RewriteMode[]): string {
  if (id === REWRITE_OFF) return 'None';
  if (id === COMMAND_MODE) return 'Command';
  return modes.find((m) => m.id === id)?.name ?? id;
}

/** Which part of Settings → AI a problem is about (its message sits there). */
export type RewriteField = 'baseUrl' | 'model' | 'budget' | 'mode' | 'modes' | 'commandPrompt';

export interface RewriteProblem {
  field: RewriteField;
  /** For a problem with one of the user's modes: its id. */
  modeId?: string;
  message: string;
}

/** The address a provider config uses, without a trailing slash (effective_base_url). */
export function effectiveBaseUrl(provider: ProviderConfig, info: ProviderInfo | undefined): string {
  const own = provider.baseUrl?.trim() ?? '';
  return (own !== '' ? own : (info?.defaultBaseUrl ?? '')).replace(/\/+$/, '');
}

/** Why the server address cannot be used, or null (ProviderConfig::base_url). */
export function baseUrlProblem(provider: ProviderConfig, info: ProviderInfo | undefined): string | null {
  const text = effectiveBaseUrl(provider, info);
  if (text === '') return 'Enter the server’s address, e.g. http://localhost:8080/v1.';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `“${text}” is not a web address: it must look like http://host:port/v1.`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `“${text}” must start with http:// or https://.`;
  if (url.hostname === '') return `“${text}” has no host name.`;
  if (url.username !== '' || url.password !== '') {
    return `“${text}” must not contain a user name or password (save a key instead).`;
  }
  if (text.includes('?') || text.includes('#')) return `“${text}” must not contain “?” or “#”.`;
  return null;
}

function promptProblem(prompt: string): string | null {
  const len = [...prompt.trim()].length;
  if (len === 0) return 'Write what the model should do with the text.';
  if (len > PROMPT_MAX_CHARS) return `At most ${PROMPT_MAX_CHARS} characters (it is sent with every dictation); this one has ${len}.`;
  return null;
}

/** The first problem the shell would refuse in the AI settings, or null (it has the last word).
 *  The provider is checked only when rewriting is on: a half-set-up one may be saved while off. */
export function validateRewrite(
  config: RewriteConfig,
  builtIns: RewriteMode[],
  info: ProviderInfo | undefined,
): RewriteProblem | null {
  const seen = new Set<string>();
  for (const m of config.modes) {
    const label = m.name.trim() || m.id;
    if (m.id === REWRITE_OFF) {
      return { field: 'modes', modeId: m.id, message: '“off” is not a mode’s id: a profile uses it to turn rewriting off.' };
    }
    if (!validModeId(m.id)) {
      return {
        field: 'modes',
        modeId: m.id,
        message: `${label}: the id “${m.id}” must be 1 to 40 lower-case letters, digits and “-” (not first or last).`,
      };
    }
    if (seen.has(m.id)) return { field: 'modes', modeId: m.id, message: `Two modes have the id “${m.id}”.` };
    seen.add(m.id);
    const name = [...m.name.trim()].length;
    if (name === 0 || name > MODE_NAME_MAX_CHARS) {
      return { field: 'modes', modeId: m.id, message: `The mode “${m.id}” needs a name of 1 to ${MODE_NAME_MAX_CHARS} characters.` };
    }
    const prompt = promptProblem(m.prompt);
    if (prompt) return { field: 'modes', modeId: m.id, message: `${label}: ${prompt}` };
  }
  if (config.commandPrompt !== null) {
    const prompt = promptProblem(config.commandPrompt);
    if (prompt) return { field: 'commandPrompt', message: `Command instructions: ${prompt}` };
  }
  // Without the built-ins (not loaded) the shell alone knows which modes exist.
  const known = builtIns.length > 0;
  if (known && config.mode !== REWRITE_OFF && !allModes(builtIns, config.modes).some((m) => m.id === config.mode)) {
    return { field: 'mode', message: `There is no mode “${config.mode}” any more: choose the mode used after dictation.` };
  }
  const budget = config.provider.timeBudgetMs;
  // A number always (the file holds one); in range once rewriting is on.
  if (!Number.isInteger(budget) || (config.enabled && (budget < BUDGET_MIN_MS || budget > BUDGET_MAX_MS))) {
    return { field: 'budget', message: 'The time budget must be between 0.2 and 60 seconds.' };
  }
  if (config.enabled) {
    const url = baseUrlProblem(config.provider, info);
    if (url) return { field: 'baseUrl', message: url };
    if (config.provider.model.trim() === '') {
      return { field: 'model', message: 'Choose a model: type its name, or list the server’s models.' };
    }
  }
  return null;
}

/** A profile whose AI mode does not exist (the shell refuses it whether rewriting is on or not). */
export function validateProfileModes(profiles: Profile[], modes: RewriteMode[]): ProfileProblem | null {
  for (const [index, p] of profiles.entries()) {
    if (p.rewrite === undefined || p.rewrite === REWRITE_OFF) continue;
    if (!modes.some((m) => m.id === p.rewrite)) {
      const name = p.name.trim() || `Profile ${index + 1}`;
      return { index, field: 'rewrite', message: `${name}: there is no AI mode “${p.rewrite}” any more; choose another.` };
    }
  }
  return null;
}

/** The time budget as the page shows it (seconds) and as it is stored (ms). */
export const budgetSeconds = (ms: number): number => Math.round(ms / 100) / 10;
export const budgetMs = (secondsValue: number): number => Math.round(secondsValue * 1000);

/** The providers for the select: the ones on this computer first, then the hosted ones. */
export function providerGroups(providers: ProviderInfo[]): { label: string; providers: ProviderInfo[] }[] {
  return [
    { label: 'On this computer', providers: providers.filter((p) => p.local) },
    { label: 'Hosted, with your key', providers: providers.filter((p) => !p.local) },
  ].filter((g) => g.providers.length > 0);
}

/** How a dictation's rewrite went, for Home and History. */
export type RewriteNote =
  | { kind: 'rewritten'; model: string; dictated: string; selection: string | null; command: boolean }
  | { kind: 'kept'; sentence: string; command: boolean };

export function rewriteNote(report: RewriteReport | null | undefined): RewriteNote | null {
  if (!report) return null;
  const command = report.mode === COMMAND_MODE;
  if (report.model !== undefined && report.notice === undefined) {
    return { kind: 'rewritten', model: report.model, dictated: report.dictated, selection: report.selection ?? null, command };
  }
  if (report.notice !== undefined) return { kind: 'kept', sentence: noticeText(report.notice), command };
  return null;
}
