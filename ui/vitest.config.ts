// Unit tests: pure logic modules, run in Node.
import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: { include: ['tests/unit/**/*.test.ts'], environment: 'node' },
});
