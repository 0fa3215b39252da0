// Bundles the fake shell once for all page tests and checks the UI was built.
import { build } from 'vite';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const here = fileURLToPath(new URL('.', import.meta.url));
export const OUT_DIR = resolve(here, '../../test-results');

export default async function setup() {
  if (!existsSync(resolve(here, '../../dist/index.html'))) {
    throw new Error('ui/dist is missing: run `npm run ui:build` first (npm run ui:pages does).');
  }
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: OUT_DIR,
      emptyOutDir: false,
      minify: false,
      lib: {
        entry: resolve(here, 'fake-shell.ts'),
        formats: ['iife'],
        name: 'UtterFakeShell',
        fileName: () => 'fake-shell.js',
      },
    },
  });
}
