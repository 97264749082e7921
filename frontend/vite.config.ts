/// <reference types="vitest/config" />
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

// Vite empties dist/ before a build; the committed dist/.gitkeep lets the Go
// package that embeds dist/ compile on a fresh checkout, so put it back.
function keepGitkeep(): Plugin {
  return {
    name: 'ccmesh-keep-gitkeep',
    apply: 'build',
    closeBundle() {
      writeFileSync(resolve(import.meta.dirname, 'dist/.gitkeep'), '');
    },
  };
}

export default defineConfig({
  // Relative asset paths: the same build is served at /ui/ by the headless
  // server and at / inside the desktop window.
  base: './',
  plugins: [react(), keepGitkeep()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  server: {
    proxy: { '/api': process.env.CCMESH_URL ?? 'http://127.0.0.1:3457' },
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
  },
});
