// The board drawing component: chessgroundx for the pieces (any size up to 16x16, fairy
// pieces by letter), under it a grid of squares that shows holes and the LED colours.
// Usable on its own (the club recorder's page reuses it):
//
//   const b = createBoard(element, { onMove(orig, dest, captured) {}, onSquare(key) {},
//                                    onSelect(key) { return handled; } });
//   b.update({ files, ranks, holes, pieces: {e1: 'K', ...}, leds: {e4: {color, blink}},
//              catalog: [{letter, name, royal}], movable: true, letters: false });
//
// Every square of the grid carries data-square, data-piece (the letter, upper case White)
// and data-led (the LED layer), so tests and other pages can read what is drawn.

import { Chessground } from 'chessgroundx';
import { pieceCss } from './pieces.js';

const FILES = 'abcdefghijklmnop';
let boardCount = 0;

// The LEDs' own colours are made for LEDs: a dim LED (the last move, 60,45,0) is a glow on the
// board but a near-black square on a screen. Each LED layer has a display colour of its own
// (style.css: --led-<layer>, chosen for 3:1 contrast against both square colours); a layer the
// page does not know is shown in its LED colour darkened until it reaches that contrast.
const SQUARES = ['#ecd9b9', '#ae8a68'];
const lin = (c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
const luminance = ([r, g, b]) => 0.2126 * lin(r / 255) + 0.7152 * lin(g / 255) + 0.0722 * lin(b / 255);
const rgbOf = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const contrast = (a, b) => { const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };

function darkened(hex) {
  const rgb = /^#[0-9a-f]{6}$/i.test(hex || '') ? rgbOf(hex) : [128, 128, 128];
  for (let f = 1; f > 0; f -= 0.02) {
    const c = rgb.map((v) => Math.round(v * f));
    if (SQUARES.every((sq) => contrast(c, rgbOf(sq)) >= 3.2)) return '#' + c.map((v) => v.toString(16).padStart(2, '0')).join('');
  }
  return '#000000';
}

// The display colour of an LED (a CSS colour): its layer's, else the darkened LED colour.
export function ledColor(led) {
  const fallback = darkened(led && led.color);
  const layer = led && led.layer;
  return layer ? `var(--led-${layer.replace(/[^a-z]+/gi, '-').toLowerCase()}, ${fallback})` : fallback;
}

function boardFen(files, ranks, pieces) {
  const rows = [];
  for (let r = ranks - 1; r >= 0; r--) {
    let row = '';
    let empty = 0;
    for (let f = 0; f < files; f++) {
      const p = pieces[FILES[f] + (r + 1)];
      if (!p) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      row += p === '*' ? '_' : p;
    }
    if (empty) row += empty;
    rows.push(row);
  }
  return rows.join('/');
}

export function createBoard(el, opts = {}) {
  const id = `fb-board-${++boardCount}`;
  el.classList.add('fb-board', id);
  el.innerHTML = '';
  const grid = document.createElement('div');
  grid.className = 'fb-grid';
  const wrap = document.createElement('div');
  wrap.className = 'fb-cg';
  // the coordinates stand outside the squares, in a gutter left of and under the board: a phone
  // with a large minimum font size (24 px) made them cover the pieces when drawn on the squares
  const ranksEl = document.createElement('div');
  ranksEl.className = 'fb-coords fb-ranks';
  const filesEl = document.createElement('div');
  filesEl.className = 'fb-coords fb-files';
  el.append(grid, wrap, ranksEl, filesEl);
  const style = document.createElement('style');
  document.head.append(style);

  let geom = { files: 0, ranks: 0, holes: '' };
  let cg = null;
  let cssKey = '';
  let orientation = opts.orientation || 'white';
  el.dataset.orientation = orientation;
  let mode = 'move';
  let lastCg = '';          // move | lift | place: what a click on a square does

  function build(files, ranks) {
    if (cg) cg.destroy();
    lastCg = '';
    wrap.innerHTML = '';
    el.style.setProperty('--files', files);
    el.style.setProperty('--ranks', ranks);
    cg = Chessground(wrap, {
      dimensions: { width: files, height: ranks },
      orientation,
      coordinates: false,
      animation: { enabled: true, duration: 150 },
      highlight: { lastMove: false, check: false },
      movable: { free: true, color: undefined, showDests: false },
      draggable: { enabled: true, showGhost: true },
      premovable: { enabled: false },
      drawable: { enabled: false },
      events: {
        move: (orig, dest, captured) => opts.onMove && opts.onMove(orig, dest, captured),
        select: (key) => {
          // a tap on another square while a piece is picked up is that piece's move (a capture:
          // its victim is lit to lift off, but the move lifts it), not a tap of its own
          const picked = cg && cg.state.selectable.selected;
          if (picked && picked !== key) return;
          // a tap that names a square to act on (a piece to lift off) selects nothing
          if (opts.onSelect && opts.onSelect(key) && cg) cg.unselect();
        },
      },
    });
    grid.innerHTML = '';
    grid.style.gridTemplateColumns = `repeat(${files}, 1fr)`;
    for (let r = ranks - 1; r >= 0; r--) {
      for (let f = 0; f < files; f++) {
        const sq = document.createElement('div');
        const key = FILES[f] + (r + 1);
        sq.dataset.square = key;
        sq.className = 'sq ' + ((f + r) % 2 ? 'light' : 'dark');
        grid.append(sq);
      }
    }
    applyOrientation();
  }

  // Flipped, the squares are laid out in the other order (not the grid turned round, which
  // turned the coordinates upside down); the ranks are named on the left column, the files on
  // the bottom row, whichever side is at the bottom.
  function applyOrientation() {
    const squares = [...grid.children].sort((a, b) => order(a) - order(b));
    const { files, ranks } = geom;
    squares.forEach((sq, i) => {
      const col = i % files;
      const row = Math.floor(i / files);
      const k = sq.dataset.square;
      if (col === 0) sq.dataset.rank = k.slice(1); else delete sq.dataset.rank;
      if (row === ranks - 1) sq.dataset.file = k[0]; else delete sq.dataset.file;
    });
    grid.append(...squares);
    const left = squares.filter((sq) => sq.dataset.rank).map((sq) => sq.dataset.rank);
    const bottom = squares.filter((sq) => sq.dataset.file).map((sq) => sq.dataset.file);
    ranksEl.style.gridTemplateRows = `repeat(${ranks}, 1fr)`;
    filesEl.style.gridTemplateColumns = `repeat(${files}, 1fr)`;
    ranksEl.innerHTML = left.map((r) => `<span data-coord="${r}">${r}</span>`).join('');
    filesEl.innerHTML = bottom.map((f) => `<span data-coord="${f}">${f}</span>`).join('');
    measureCoords();
  }
  // the gutters are as wide and high as the labels are drawn (a minimum font size enlarges them)
  function measureCoords() {
    const w = `${Math.ceil(ranksEl.offsetWidth) + 2}px`;
    const h = `${Math.ceil(filesEl.offsetHeight) + 2}px`;
    if (el.style.getPropertyValue('--coord-w') !== w) el.style.setProperty('--coord-w', w);
    if (el.style.getPropertyValue('--coord-h') !== h) el.style.setProperty('--coord-h', h);
  }
  function order(sq) {
    const k = sq.dataset.square;
    const f = FILES.indexOf(k[0]);
    const r = Number(k.slice(1)) - 1;
    const i = (geom.ranks - 1 - r) * geom.files + f;
    return orientation === 'black' ? geom.files * geom.ranks - 1 - i : i;
  }

  // The page's layout moves the board (a prompt appears above it) without a scroll or resize
  // event: forget chessground's cached board position before every touch.
  const forget = () => { if (cg) cg.state.dom.bounds.clear(); };
  for (const t of ['touchstart', 'mousedown']) el.addEventListener(t, forget, { capture: true, passive: true });
  if (window.ResizeObserver) new ResizeObserver(() => { measureCoords(); if (cg) cg.redrawAll(); }).observe(el);

  // Clicks in lift/place mode name a square instead of moving a piece.
  el.addEventListener('pointerdown', (e) => {
    forget();
    if (mode === 'move' || !cg) return;
    const key = cg.getKeyAtDomPos([e.clientX, e.clientY]);
    e.stopPropagation();
    e.preventDefault();
    if (key && opts.onSquare) opts.onSquare(key, mode);
  }, true);

  function update(s) {
    const holes = (s.holes || []).join(',');
    if (s.files !== geom.files || s.ranks !== geom.ranks) {
      geom = { files: s.files, ranks: s.ranks, holes };
      build(s.files, s.ranks);
    }
    geom = { files: s.files, ranks: s.ranks, holes };
    const key = JSON.stringify([s.catalog, !!s.letters]);
    if (key !== cssKey) {
      style.textContent = pieceCss(s.catalog, !!s.letters, '.' + id);
      cssKey = key;
    }
    const pieces = s.pieces || {};
    const holeSet = new Set(s.holes || []);
    const leds = s.leds || {};
    for (const sq of grid.children) {
      const k = sq.dataset.square;
      const led = leds[k];
      sq.classList.toggle('hole', holeSet.has(k));
      sq.dataset.piece = pieces[k] || '';
      sq.dataset.led = led ? (led.layer || 'lit') : '';
      sq.style.setProperty('--led', led ? ledColor(led) : 'transparent');
      sq.dataset.ledColor = led ? led.color : '';
      sq.classList.toggle('lit', !!led);
      sq.classList.toggle('blink', !!led && led.blink !== 'steady');
      sq.classList.toggle('fast', !!led && led.blink === 'fast');
      sq.title = led && led.meaning ? `${k}: ${led.meaning}` : k;
    }
    const fen = boardFen(s.files, s.ranks, pieces);
    const cgKey = fen + '|' + !!s.movable;
    if (cgKey === lastCg) return;         // unchanged: keep a selection the player is making
    lastCg = cgKey;
    cg.set({
      fen,
      lastMove: undefined,
      movable: { free: true, color: s.movable ? 'both' : undefined },
      draggable: { enabled: !!s.movable },
    });
  }

  return {
    update,
    setMode(m) { mode = m; el.dataset.mode = m; },
    flip() { this.orient(orientation === 'white' ? 'black' : 'white'); },
    // the side drawn at the bottom ('white' or 'black'); el's data-orientation says which
    orient(side) {
      el.dataset.orientation = side;
      if (side === orientation) return;
      orientation = side;
      if (cg) cg.set({ orientation });
      if (geom.files) applyOrientation();
    },
    get orientation() { return orientation; },
    keyAt(x, y) { return cg ? cg.getKeyAtDomPos([x, y]) : undefined; },
    destroy() { if (cg) cg.destroy(); style.remove(); el.innerHTML = ''; },
  };
}
