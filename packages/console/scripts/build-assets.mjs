// Builds the console's static assets into dist/assets: one script and one stylesheet, bundled by
// esbuild with every dependency inside (no CDN, nothing fetched at run time), named by content hash
// so the server may let browsers keep them, and the page that loads them. The page keeps two
// placeholders, {{nonce}} and {{connection}}, which the server fills per response.
import { build } from 'esbuild';
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'src', 'browser');
const out = path.join(root, 'dist', 'assets');

fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [path.join(source, 'main.ts'), path.join(source, 'console.css')],
  bundle: true,
  minify: true,
  format: 'esm',
  // light-dark() (the themes) sets the floor.
  target: ['chrome123', 'firefox120', 'safari17.5'],
  outdir: out,
  entryNames: 'console-[hash]',
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});

const built = Object.entries(result.metafile.outputs).map(([file, output]) => ({
  name: path.basename(file),
  entryPoint: output.entryPoint ?? '',
}));
const script = built.find((file) => file.entryPoint.endsWith('main.ts'));
const style = built.find((file) => file.entryPoint.endsWith('console.css'));
if (!script || !style) throw new Error('esbuild did not write the console script and stylesheet');

const page = fs
  .readFileSync(path.join(source, 'index.html'), 'utf8')
  .replace('{{script}}', `console/${script.name}`)
  .replace('{{style}}', `console/${style.name}`);
fs.writeFileSync(path.join(out, 'index.html'), page);
fs.copyFileSync(path.join(source, 'icon.svg'), path.join(out, 'icon.svg'));

// Each file the page loads also as gzip, compressed once here rather than by every server at start.
for (const name of fs.readdirSync(out)) {
  if (name === 'index.html') continue;
  const file = path.join(out, name);
  fs.writeFileSync(`${file}.gz`, gzipSync(fs.readFileSync(file), { level: 9 }));
}
