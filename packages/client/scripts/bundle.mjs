// The client as one ES module and one CommonJS file (dist/index.mjs, dist/index.cjs): it runs where
// there is fetch and nothing else, so it is bundled for the platform "neutral" and must import no
// Node built-in (the build fails if it does).
import { build } from 'esbuild';

for (const [format, file] of [
  ['esm', 'dist/index.mjs'],
  ['cjs', 'dist/index.cjs'],
]) {
  await build({
    entryPoints: ['src/index.ts'],
    bundle: true,
    platform: 'neutral',
    target: 'es2022',
    format,
    outfile: file,
    sourcemap: true,
    logLevel: 'warning',
  });
}
