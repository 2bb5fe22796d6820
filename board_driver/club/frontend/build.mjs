// Builds the recorder's page script and style into ../static (club.js, club.css). The built
// files are committed: the package ships them and CI has no npm. The board drawing is the
// board page's own component (board_driver/web/frontend/src/board.js).
import * as esbuild from 'esbuild';
import { statSync } from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
const out = new URL('../static/', import.meta.url).pathname;
// The board page's style sheet imports chessground's from its own node_modules: take ours.
const ours = {
  name: 'our-node-modules',
  setup(build) {
    build.onResolve({ filter: /node_modules\/chessgroundx\// }, (args) => ({
      path: here + 'node_modules/chessgroundx/' + args.path.split('node_modules/chessgroundx/')[1],
    }));
  },
};
const common = { bundle: true, minify: true, outdir: out, legalComments: 'none', nodePaths: [here + 'node_modules'],
                 plugins: [ours] };
await esbuild.build({ ...common, entryPoints: { club: 'src/club.js' }, format: 'esm', target: ['es2020'] });
await esbuild.build({ ...common, entryPoints: { club: 'src/club.css' } });
let total = 0;
for (const f of ['club.js', 'club.css']) total += statSync(out + f).size;
console.log(`built ${out}: ${total} bytes`);
