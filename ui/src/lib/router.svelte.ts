// Hash routing between the pages ("#/settings"), so a page survives a
// reload and end-to-end tests can open one directly.

export const PAGES = ['home', 'history', 'files', 'meetings', 'models', 'settings'] as const;
export type Page = (typeof PAGES)[number];

function fromHash(hash: string): Page {
  const name = hash.replace(/^#\/?/, '') as Page;
  return PAGES.includes(name) ? name : 'home';
}

class Router {
  page = $state<Page>(fromHash(typeof location === 'undefined' ? '' : location.hash));

  constructor() {
    if (typeof window !== 'undefined') {
      window.addEventListener('hashchange', () => (this.page = fromHash(location.hash)));
    }
  }

  go(page: Page) {
    location.hash = `#/${page}`;
  }
}

export const router = new Router();
