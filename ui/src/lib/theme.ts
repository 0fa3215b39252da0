// Applies the theme setting to <html data-theme="light|dark">. 'system'
// follows prefers-color-scheme live, so the CSS only knows two themes.

import type { Theme } from './types';

let media: MediaQueryList | null = null;
let current: Theme = 'system';

function effective(theme: Theme): 'light' | 'dark' {
  if (theme !== 'system') return theme;
  return media?.matches ? 'dark' : 'light';
}

function paint() {
  document.documentElement.dataset.theme = effective(current);
}

export function applyTheme(theme: Theme): void {
  current = theme;
  if (!media && typeof window.matchMedia === 'function') {
    media = window.matchMedia('(prefers-color-scheme: dark)');
    media.addEventListener('change', paint);
  }
  paint();
}
