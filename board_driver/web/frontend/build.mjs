// Builds the page into ../static: app.js (one ES module bundle), app.css and index.html.
// The built files are committed: the package ships them and CI has no npm.
import * as esbuild from 'esbuild';
import { copyFileSync, statSync } from 'node:fs';

const out = new URL('../static/', import.meta.url).pathname;
await esbuild.build({
  entryPoints: { app: 'src/app.js' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  outdir: out,
  loader: { '.css': 'css' },
  legalComments: 'none',
});
await esbuild.build({
  entryPoints: { app: 'src/style.css' },
  bundle: true,
  minify: true,
  outdir: out,
});
copyFileSync('src/index.html', out + 'index.html');
let total = 0;
for (const f of ['index.html', 'app.js', 'app.css']) total += statSync(out + f).size;
console.log(`built ${out}: ${total} bytes`);
