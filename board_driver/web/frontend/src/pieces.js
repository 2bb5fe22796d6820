// Piece images for every piece of the catalog, drawn as SVG (no image files, no CDN).
// Orthodox pieces are the chess glyphs; compounds add a small badge of the added move
// (princess = bishop + knight badge); any other piece is a token with its letter. The page's
// legend names each one; with "letters" on, the Fairy-Stockfish letter is shown in a corner.

const GLYPH = { king: '♚', queen: '♛', rook: '♜', bishop: '♝', knight: '♞', pawn: '♟' };
const COMPOUND = {
  princess: ['♝', '♞'], archbishop: ['♝', '♞'], cardinal: ['♝', '♞'],
  empress: ['♜', '♞'], chancellor: ['♜', '♞'], marshal: ['♜', '♞'],
  amazon: ['♛', '♞'], aanca: ['♜', '♝'], griffin: ['♝', '♜'],
};
const FONT = "'DejaVu Sans','Segoe UI Symbol','Noto Sans Symbols2','Apple Symbols',sans-serif";

function baseName(name) {
  return String(name || '').toLowerCase().replace(/^csipgs[- ]/, '').replace(/^design .*/, '');
}

function glyphSvg(glyph, fill, stroke, size = 84, x = 50, y = 82) {
  return `<text x="${x}" y="${y}" font-size="${size}" text-anchor="middle" font-family="${FONT}" ` +
    `fill="${fill}" stroke="${stroke}" stroke-width="3" paint-order="stroke">${glyph}&#xFE0E;</text>`;
}

// The SVG of one piece: letter (any case), colour 'white' | 'black', its catalog entry.
export function pieceSvg(letter, color, entry, showLetter) {
  const white = color === 'white';
  const fill = white ? '#fff' : '#222';
  const stroke = white ? '#222' : '#eee';
  const name = baseName(entry && entry.name);
  let body;
  if (GLYPH[name]) {
    body = glyphSvg(GLYPH[name], fill, stroke);
  } else if (COMPOUND[name]) {
    const [a, b] = COMPOUND[name];
    body = glyphSvg(a, fill, stroke, 80, 44, 84) +
      `<circle cx="76" cy="26" r="20" fill="${white ? '#fff' : '#333'}" stroke="${white ? '#333' : '#ddd'}" stroke-width="3"/>` +
      glyphSvg(b, fill, stroke, 30, 76, 37);
  } else {
    const royal = entry && entry.royal;
    const L = (letter || '?').toUpperCase();
    body = `<path d="M50 8 L88 30 L88 72 L50 94 L12 72 L12 30 Z" fill="${fill}" stroke="${stroke}" stroke-width="5"/>` +
      (royal ? `<path d="M30 22 L38 10 L50 20 L62 10 L70 22" fill="none" stroke="${stroke}" stroke-width="5"/>` : '') +
      `<text x="50" y="67" font-size="44" font-weight="700" text-anchor="middle" font-family="sans-serif" fill="${stroke}">${L === '_' ? '?' : L}</text>`;
  }
  if (showLetter && letter && letter !== '_') {
    body += `<rect x="62" y="64" width="36" height="34" rx="6" fill="#ffd54a" stroke="#333" stroke-width="2"/>` +
      `<text x="80" y="90" font-size="28" font-weight="700" text-anchor="middle" font-family="sans-serif" fill="#111">${white ? letter.toUpperCase() : letter.toLowerCase()}</text>`;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">${body}</svg>`;
}

export function pieceUrl(letter, color, entry, showLetter) {
  // encodeURIComponent leaves ' alone: encode it too, so the URL fits in any attribute
  const data = encodeURIComponent(pieceSvg(letter, color, entry, showLetter)).replace(/'/g, '%27');
  return `url("data:image/svg+xml,${data}")`;
}

// CSS rules for chessground's <piece class="white x-piece"> for every catalog letter, plus
// '_' (a piece on the board that the game does not know yet).
export function pieceCss(catalog, showLetter, scope = '.fb-board') {
  const rules = [];
  const letters = new Map();
  for (const e of catalog || []) letters.set(e.letter.toLowerCase(), e);
  letters.set('_', { letter: '_', name: 'unknown piece' });
  for (const [l, e] of letters) {
    for (const c of ['white', 'black']) {
      rules.push(`${scope} piece.${l}-piece.${c}{background-image:${pieceUrl(l, c, e, showLetter)}}`);
    }
  }
  return rules.join('\n');
}
