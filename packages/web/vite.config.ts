import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The service serves the build at /app/ under a CSP of 'self' only: nothing may be inlined as a
// data: URL, and the sibling packages are read from their TypeScript sources.
export default defineConfig({
  base: '/app/',
  plugins: [react()],
  resolve: { conditions: ['mada-source', 'module', 'browser', 'import', 'default'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
});
