// Vite config for the Utter web UI. Two entries: the main window and the
// recording overlay. Output must load under a strict CSP (no inline scripts,
// no eval, no remote content), so Svelte CSS is emitted as files.
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: './',
  plugins: [svelte({ emitCss: true, compilerOptions: { css: 'external' } })],
  clearScreen: false,
  // Tauri's devUrl points here (http://localhost:1420).
  server: { port: 1420, strictPort: true },
  build: {
    outDir: resolve(root, 'dist'),
    emptyOutDir: true,
    target: 'es2021',
    // The polyfill would be injected as module code we do not need in
    // WebKitGTK/WebView2/WKWebView, which all support modulepreload.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rollupOptions: {
      input: {
        main: resolve(root, 'index.html'),
        overlay: resolve(root, 'overlay.html'),
      },
    },
  },
});
