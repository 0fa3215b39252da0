// One short-lived confirmation line ("Copied") announced to screen readers.

class Toast {
  message = $state<string | null>(null);
  tone = $state<'ok' | 'error'>('ok');
  #timer: ReturnType<typeof setTimeout> | null = null;

  show(message: string, tone: 'ok' | 'error' = 'ok', ms = 2500) {
    this.message = message;
    this.tone = tone;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => (this.message = null), ms);
  }
}

export const toast = new Toast();
