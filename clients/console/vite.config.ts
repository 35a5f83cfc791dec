import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// index.html lives in src/ so that turbo's build inputs (src/**) cover every file the
// build reads. The app is served by ingest under /console/, so every asset URL starts there.
export default defineConfig({
  root: fileURLToPath(new URL('./src', import.meta.url)),
  base: '/console/',
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    // The CSP allows no inline script or style, so nothing may be inlined as a data: URL either.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
  // `npx vite` (development only): the admin API of a running ingest, same origin as the page.
  server: {
    proxy: { '/admin': process.env.TRIBUTARY_URL ?? 'http://127.0.0.1:8080' },
  },
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
});
