import { defineConfig } from 'vitest/config';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The desktop shell embeds ui/dist at build time; no dev server is needed to run the app.
export default defineConfig(({ mode }) => ({
  plugins: [svelte()],
  clearScreen: false,
  build: {
    target: 'safari15',
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
  },
  // Component tests mount Svelte's browser build in jsdom.
  resolve: mode === 'test' ? { conditions: ['browser'] } : undefined,
  // Tests read the agent's Rust declarations (tools, notes) so a new tool cannot skip the UI.
  server: mode === 'test' ? { fs: { allow: ['..'] } } : undefined,
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
  },
}));
