import { defineConfig } from "vite";

// The built files go to dist/, which the gateway serves at / (arena_gateway.browser).
export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: false },
  server: {
    // `npm run dev` beside `make run`: API and socket go to the gateway.
    proxy: { "/v1": { target: "http://127.0.0.1:8000", ws: true } },
  },
});
