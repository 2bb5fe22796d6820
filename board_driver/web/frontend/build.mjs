// Builds the page into ../static: app.js (one ES module bundle), app.css and index.html.
// The built files are committed: the package ships them and CI has no npm.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

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
// index.html names the built files with a hash of their content, so a phone never keeps a
// stale copy after an upgrade
const hash = (f) => createHash('sha256').update(readFileSync(out + f)).digest('hex').slice(0, 12);
writeFileSync(out + 'index.html', readFileSync('src/index.html', 'utf8')
  .replace('/static/app.js', `/static/app.js?v=${hash('app.js')}`)
  .replace('/static/app.css', `/static/app.css?v=${hash('app.css')}`));
// and each gzip-compressed beside it: the server sends NAME.gz to a browser that accepts gzip
let total = 0;
let zipped = 0;
for (const f of ['index.html', 'app.js', 'app.css']) {
  const z = gzipSync(readFileSync(out + f), { level: 9 });
  writeFileSync(out + f + '.gz', z);
  total += statSync(out + f).size;
  zipped += z.length;
}
console.log(`built ${out}: ${total} bytes, ${zipped} bytes gzipped`);
