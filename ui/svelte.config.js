// Svelte compiler settings shared by Vite, svelte-check and eslint-plugin-svelte.
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

export default {
  preprocess: vitePreprocess({ script: false }),
  compilerOptions: { runes: true },
};
