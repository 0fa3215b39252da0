// Page tests: the built UI in headless Chromium with a faked shell.
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    include: ['tests/pages/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['tests/pages/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
