// App-wide state shared by every page: the shell's Status, the default-model
// install, the live mic level, the words so far while speaking and the theme.
// Pages hold their own page state.

import { api, errorText, on, subscribeAll } from './api';
import { nextLiveText, type LiveText } from './liveText';
import { applyTheme } from './theme';
import type { DictationEvent, InstallProgress, RewriteReport, Status } from './types';

/** How often a page showing "loading" reads the status again. */
const LOADING_RECHECK_MS = 1000;

class AppStore {
  status = $state<Status | null>(null);
  private loadingRecheck: ReturnType<typeof setTimeout> | null = null;
  /** get_status itself failed (the shell is not answering). */
  loadError = $state<string | null>(null);
  install = $state<InstallProgress | null>(null);
  installing = $state(false);
  installError = $state<string | null>(null);
  level = $state(0);
  /** The words so far while the user speaks: settled and tentative (lib/liveText.ts). */
  live = $state<LiveText | null>(null);
  /** The last delivered text and how its AI rewrite went (null: none ran), for Home's card. */
  lastDelivered = $state<{ text: string; rewrite: RewriteReport | null } | null>(null);

  /** Loads status and theme and subscribes to shell events; returns the teardown. */
  start(): () => void {
    const onStatus = on('status', (s) => this.setStatus(s));
    const stop = subscribeAll([
      onStatus,
      on('level', (l) => (this.level = l.rms)),
      on('install-progress', (p) => this.onInstall(p)),
      on('settings-changed', (s) => applyTheme(s.theme)),
      on('dictation', (d) => this.onDictation(d)),
    ]);
    // Read the status once the listener is registered (listen resolves later): a change that
    // came between an earlier read and the registration would never reach the page, which then
    // stayed on "loading" with the model long loaded.
    void onStatus.then(
      () => this.refresh(),
      () => this.refresh(),
    );
    api
      .getSettings()
      .then((s) => applyTheme(s.theme))
      .catch(() => applyTheme('system'));
    return stop;
  }

  onDictation(d: DictationEvent) {
    this.live = nextLiveText(this.live, d);
    if (d.event === 'text_delivered') this.lastDelivered = { text: d.text, rewrite: d.rewrite ?? null };
  }

  async refresh() {
    try {
      this.setStatus(await api.getStatus());
      this.loadError = null;
    } catch (e) {
      this.loadError = errorText(e);
    }
  }

  setStatus(s: Status) {
    this.status = s;
    // Loading is a passing state: while it shows, the page also asks the shell now and then, so
    // a change whose event never reached the page (seen in CI: Home left on "loading" for a
    // minute with dictation ready) is shown within a second.
    if (s.state === 'loading' && this.loadingRecheck === null) {
      this.loadingRecheck = setTimeout(() => {
        this.loadingRecheck = null;
        void this.refresh();
      }, LOADING_RECHECK_MS);
    }
    if (s.state !== 'recording') this.level = 0;
    // Words belong to a dictation in progress; a missed end event must not leave them up.
    if (s.state !== 'recording' && s.state !== 'transcribing') this.live = null;
  }

  onInstall(p: InstallProgress) {
    this.install = p;
    if (p.error) {
      this.installing = false;
      this.installError = p.error;
    } else if (p.done) {
      this.installing = false;
      this.installError = null;
      void this.refresh();
    } else {
      this.installing = true;
    }
  }

  async installDefault() {
    this.installing = true;
    this.installError = null;
    this.install = { stage: 'Starting…', fraction: null, done: false, error: null };
    try {
      await api.installDefaultModel();
      // The command may resolve only once the install has finished.
      await this.refresh();
      if (this.status && this.status.state !== 'no_model') this.installing = false;
    } catch (e) {
      this.installing = false;
      this.installError = errorText(e);
    }
  }

  async dismissNotice() {
    if (this.status) this.status = { ...this.status, notice: null };
    try {
      await api.dismissNotice();
    } catch {
      // The banner is gone either way; the next status event re-shows it if the shell kept it.
    }
  }
}

export const app = new AppStore();
