// The recorder's page: every board of the club, drawn with the board page's own component,
// refreshed from /boards.json every second (docs/club.md).

import { createBoard } from '../../../web/frontend/src/board.js';

const esc = (t) => String(t ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
const cards = new Map();       // board name -> {el, board, drawn}

function when(t) {
  if (t == null) return '-';
  const ago = Math.max(0, Math.round(Date.now() / 1000 - t));
  const clock = new Date(t * 1000).toLocaleTimeString([], { hour12: false });
  return ago >= 60 ? `${clock} (${Math.floor(ago / 60)} min ${ago % 60} s ago)` : `${clock} (${ago} s ago)`;
}

function hms(ms) {
  const s = Math.floor(ms / 1000);
  const two = (n) => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` +
    (ms < 10000 ? `.${Math.floor(ms % 1000 / 100)}` : '');
}

function card(name) {
  let c = cards.get(name);
  if (c) return c;
  const el = document.createElement('section');
  el.className = 'card';
  el.id = 'board-' + name;
  el.innerHTML = '<h2><span class="name"></span> <small class="presence"></small></h2><p class="players"></p>' +
    '<div class="fb-holder"></div><p class="err perr" hidden></p><p class="clocks" hidden></p><p>last move: <b class="last"></b> at ' +
    '<span class="clock"></span>, <span class="actions"></span> actions</p><p>result: <b class="result"></b>' +
    ' <span class="err missing"></span></p><p class="links"><a class="pgn">PGN</a> &middot; game <span class="gid"></span></p>';
  el.querySelector('.name').textContent = name;
  el.querySelector('.pgn').href = `/board/${encodeURIComponent(name)}.pgn`;
  c = { el, board: null };
  cards.set(name, c);
  return c;
}

function show(d) {
  const c = card(d.board);
  const q = (s) => c.el.querySelector(s);
  const presence = d.online === true ? 'online' : d.online === false ? 'OFFLINE' : '?';
  q('.presence').textContent = presence;
  q('.presence').className = 'presence ' + presence.toLowerCase();
  const g = d.game;
  if (!g) { q('.players').textContent = 'no game yet'; return c; }
  const pl = g.players || {};
  q('.players').textContent = `${pl.white ?? '?'} - ${pl.black ?? '?'} · ${g.variant ?? '?'}`;
  q('.last').textContent = g.last_action || '-';
  q('.clock').textContent = when(g.last_move_at);
  q('.actions').textContent = g.actions;
  q('.result').textContent = (g.result || 'playing') + (g.reason ? ` (${g.reason})` : '');
  q('.missing').textContent = g.missing ? `${g.missing} record(s) awaited` : '';
  q('.gid').textContent = g.game;
  const pos = d.position || { error: 'no position' };
  const ck = pos.clock;
  q('.clocks').hidden = !ck;
  q('.clocks').textContent = !ck ? '' : ck.white_ms === undefined ? `time control ${ck.tc}` :
    `clocks after the last move: white ${hms(ck.white_ms)} · black ${hms(ck.black_ms)} (${ck.tc})`;
  q('.perr').hidden = !pos.error;
  q('.perr').textContent = pos.error ? 'position unavailable: ' + pos.error : '';
  if (!pos.error) {
    if (!c.board) {
      const holder = document.createElement('div');
      q('.fb-holder').replaceWith(holder);
      holder.className = 'fb-holder';
      c.board = createBoard(holder, {});
    }
    c.el.classList.toggle('wide', pos.files > 8);
    c.board.update({ files: pos.files, ranks: pos.ranks, holes: pos.holes || [], pieces: pos.pieces,
                     catalog: pos.catalog || [], movable: false, letters: false });
  }
  return c;
}

async function refresh() {
  let data;
  try {
    const r = await fetch('/boards.json', { cache: 'no-store' });
    if (!r.ok) return;
    data = await r.json();
  } catch (e) {
    document.getElementById('conn').className = 'conn off';
    return;
  }
  document.getElementById('conn').className = 'conn on';
  const root = document.getElementById('boards');
  if (root.dataset.live !== '1') { root.innerHTML = ''; root.dataset.live = '1'; }
  if (!data.length) { root.innerHTML = '<p>No board has reported yet.</p>'; root.dataset.live = ''; return; }
  for (const d of data) {
    const c = show(d);
    if (c.el.parentNode !== root) root.append(c.el);
  }
}

refresh();
setInterval(refresh, 1000);
