// The board's page: mirrors the board (pushed over a WebSocket), answers prompts, starts games,
// shows the saved games. It uses only the JSON API under /api/ (docs/web.md).

import { createBoard, ledColor } from './board.js';
import { pieceUrl } from './pieces.js';

const $ = (sel) => document.querySelector(sel);
const esc = (t) => String(t ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));

let state = null;
let letters = false;
let socket = null;
let lastVersion = 0;
let lastRun = null;         // the server run the versions count in (a restarted server counts from 1)
let viewer = null;          // the saved-game viewer: {detail, index, board}
let costTimer = null;

const board = createBoard($('#board'), {
  // A move made on the page: the server makes the lifts and places a player makes for it,
  // spaced so the sensors see each (the victim, a castling rook, an en passant victim).
  onMove: (orig, dest) => sim([{ move: `${orig}-${dest}` }]),
  // A tap on a piece the board asks to lift off (a Chego victim, the piece a move still takes)
  // lifts it.
  onSelect: (key) => {
    const led = state && state.sim && state.leds[key];
    if (!led || led.layer !== 'remove' || !state.occupied.includes(key)) return false;
    sim([{ lift: key }]);
    return true;
  },
  onSquare: (key, mode) => {
    sim([{ [mode]: key }]);
    if (mode === 'place' && $('#tool').dataset.once === '1') setTool('move');
  },
});

// -- talking to the board ---------------------------------------------------------------------
async function api(path, body) {
  const init = body === undefined ? {} : {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  };
  let r;
  try {
    r = await fetch(path, { credentials: 'same-origin', ...init });
  } catch (e) {
    // the browser's own words ("Failed to fetch") do not say what is wrong
    throw new Error('The board does not answer: is it on, and this phone on its network?');
  }
  const data = (r.headers.get('Content-Type') || '').includes('json') ? await r.json() : await r.text();
  if (!r.ok) {
    const err = new Error((data && data.error) || `HTTP ${r.status}`);
    err.status = r.status;
    if (r.status === 401 && state && state.paired) { state.paired = false; render(state); }  // revoked, expired
    throw err;
  }
  return data;
}

// Whether this browser is paired is known from GET /api/state (a push does not say: it goes to
// every page): asked again when the page comes back to view and when the socket (re)opens, so a
// pairing or login made in another tab, or a token revoked, shows without a reload.
async function refreshPaired() {
  try {
    const s = await api('/api/state');
    if (state && s.paired !== state.paired) render({ ...state, paired: s.paired, password: s.password });
  } catch (e) { /* the socket's own reconnection says when the board does not answer */ }
}

function say(text, kind = 'info') {
  const el = $('#toast');
  el.textContent = text;
  el.className = 'toast ' + kind;
  el.hidden = false;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { el.hidden = true; }, kind === 'error' ? 6000 : 4000);
}

async function command(text) {
  try {
    const r = await api('/api/command', { text });
    if (r.replies && r.replies.length) say(r.replies.join(' '));
    if (r.state) render(r.state);
  } catch (e) {
    if (e.status === 401) {
      say('Pair this phone with the board first (the Pair button).', 'error');
      showPair(true);
    } else say(e.message, 'error');
  }
}

async function sim(events) {
  try {
    const r = await api('/api/sim', events);
    for (const w of r.warnings || []) say(w.warning, 'error');
    if (r.state) render(r.state);
  } catch (e) {
    say(e.message, 'error');
    if (state) render(state);
  }
}

// The WebSocket reconnects with backoff: 1 s after a loss, then 2, 4, 8, 16 and 30 s at most
// (a board that is off is not asked 3600 times an hour); at once when the page is shown again
// or the phone is back online. The first message after reconnecting is the whole state.
let wsAttempts = 0;
let wsTimer = null;
function wsDelay() { return Math.min(30000, 1000 * 2 ** wsAttempts); }
function reconnectSoon(now = false) {
  clearTimeout(wsTimer);
  const delay = now ? 0 : wsDelay();
  document.body.dataset.wsDelay = delay;
  document.body.dataset.wsAttempts = wsAttempts;
  wsTimer = setTimeout(() => { wsTimer = null; wsAttempts++; connect(); }, delay);
}
function connect() {
  const proto = location.protocol === 'https:' ? 'wss' : 'ws';
  socket = new WebSocket(`${proto}://${location.host}/api/ws`);
  socket.onopen = () => {
    if (state) refreshPaired();
    wsAttempts = 0;
    document.body.dataset.wsAttempts = 0;
    $('#conn').className = 'conn on'; $('#conn').title = 'connected';
  };
  socket.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    if (msg.type === 'state') render(msg.state);
    else if (msg.type === 'calibrate') renderCalib(msg.calibrate);
    else if (msg.type === 'analysis') showAnalysis(msg.analysis);
  };
  socket.onclose = () => {
    $('#conn').className = 'conn off';
    $('#conn').title = 'reconnecting';
    reconnectSoon();
  };
}
const wakeSocket = () => { if (socket && socket.readyState === WebSocket.CLOSED && wsTimer) reconnectSoon(true); };
window.addEventListener('online', wakeSocket);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') { wakeSocket(); if (state) refreshPaired(); }
});

// -- drawing -------------------------------------------------------------------------------------
function render(s) {
  // an older snapshot of this server run (an HTTP answer overtaken by a push) is dropped; a
  // snapshot of another run (the server restarted) is always taken
  if (state && s.run === lastRun && s.version < lastVersion) return;
  lastRun = s.run;
  lastVersion = s.version;
  document.body.dataset.version = s.version;
  document.body.dataset.run = s.run || '';
  const paired = s.paired ?? (state ? state.paired : false);
  state = { ...s, paired, password: s.password ?? (state ? state.password : false) };
  document.body.dataset.family = s.family;
  document.body.classList.toggle('paired', !!state.paired);
  $('#variant').textContent = s.variant;
  $('#players').textContent = `${playerName(s.players.white, 'White')} – ${playerName(s.players.black, 'Black')}`;
  orientBoard(s);
  renderLink(s);
  renderRemote(s);
  keepAwake(!s.result);
  alertIfAsked(s);
  renderClocks(s);
  renderStatus(s);
  renderDice(s);
  renderPrompt(s);
  renderHint(s);
  renderEval(s);
  // The physical board: the game's pieces where they stand; a piece set down where the game has
  // none yet is the lifted piece when one was lifted (a move under way), else unknown ('*').
  const shown = {};
  for (const sq of s.occupied) shown[sq] = s.pieces[sq] || '*';
  if (s.extra.length === s.lifted.length) s.extra.forEach((sq, i) => { shown[sq] = s.pieces[s.lifted[i]]; });
  board.update({
    files: s.board.files, ranks: s.board.ranks, holes: s.board.holes, pieces: shown, leds: s.leds,
    catalog: s.catalog, movable: s.sim, letters,
  });
  $('#simtools').hidden = !s.sim;
  renderActions(s);
  renderFamily(s);
  renderLegend(s);
  renderNotices(s);
  $('#pairstate').textContent = state.paired ? 'Paired' : 'Not paired';
  $('#pairbtn').hidden = !!state.paired;
  $('#loginform').hidden = !!state.paired || !state.password;
}

// A player as the header names them: a person by their name (a side nobody named is "White" or
// "Black"), the computer as such, a remote board by its name.
function playerName(name, side) {
  const n = String(name || '').trim();
  if (!n) return side;
  if (isRemote(n)) return `${n.slice(7)} (remote)`;
  return isComputer(n) ? `Computer (${n})` : n;
}

// The side played at this board: the one person's side against the computer or a remote board
// (null with two people, or none). Each new game turns the board toward it; Flip turns it round.
function boardSide(s) {
  // a game against another board: the other board's player is named by its board (remote.peer)
  const far = s.remote && s.remote.peer ? ['white', 'black'].find((c) => s.players[c] === s.remote.peer) : null;
  if (far) return far === 'white' ? 'black' : 'white';
  const here = ['white', 'black'].filter((c) => !isComputer(s.players[c]) && !isRemote(s.players[c]));
  return here.length === 1 ? here[0] : null;
}
let orientedFor = null;
function orientBoard(s) {
  const key = `${s.game}|${s.remote ? s.remote.peer : ''}`;
  if (orientedFor === key) return;
  orientedFor = key;
  board.orient(boardSide(s) || 'white');
}

// The board's link where the player looks: a board that does not answer is said at once, and
// so is its coming back (the board is read afresh then).
function renderLink(s) {
  const el = $('#link');
  const up = !s.link || s.link.up !== false;
  const was = renderLink.up;
  renderLink.up = up;
  document.body.dataset.link = up ? 'up' : 'down';
  if (!up) {
    clearTimeout(renderLink.timer);
    el.textContent = 'The board is not answering; moves made now are read when it is back.';
    el.className = 'link down';
    el.hidden = false;
  } else if (was === false) {
    el.textContent = 'The board is back: what was moved meanwhile is read now.';
    el.className = 'link back';
    el.hidden = false;
    clearTimeout(renderLink.timer);
    renderLink.timer = setTimeout(() => { el.hidden = true; }, 8000);
  }
}

// -- remote games: the invitations to this board (Accept / Decline), this board's own (docs/remote.md)
async function remoteApi(path, body, done) {
  try {
    const r = await api(path, body);
    if (done) say(done(r));
    const st = await api('/api/state');
    render(st);
  } catch (e) {
    if (e.status === 401) { say('Pair this phone with the board first (the Pair button).', 'error'); showPair(true); } else say(e.message, 'error');
  }
}

function renderRemote(s) {
  const el = $('#remote-box');
  const r = s.lobby;
  const invites = (r && r.invitations) || [];
  const out = r && r.outgoing;
  let html = '';
  // a remote game's takeback or draw asked by the other board's player (or by this one)
  const req = s.remote;
  if (req && req.asked) {
    html += `<div class="request" data-what="${esc(req.asked.what)}"><p><b>${esc(req.asked.text)}</b>.</p>` +
      '<div class="row"><button class="req-accept">Accept</button><button class="req-decline">Decline</button></div></div>';
  }
  if (req && req.asking) {
    html += `<div class="request asking" data-what="${esc(req.asking.what)}"><p>${esc(req.asking.text)}: waiting for ${esc(req.peer)} to answer.</p>` +
      '<div class="row"><button class="req-decline">Withdraw</button></div></div>';
  }
  for (const i of invites) {
    html += `<div class="invite" data-from="${esc(i.from)}"><p><b>${esc(i.from)}</b> invites this board to play ` +
      `<b>${esc(VARIANT_NAMES[i.variant] || i.variant)}</b>: you play ${esc(i.you_play)}` + (i.clock ? `, ${esc(i.clock)}` : '') + '.</p>' +
      `<div class="row"><button class="accept" data-from="${esc(i.from)}">Accept</button>` +
      `<button class="decline" data-from="${esc(i.from)}">Decline</button></div></div>`;
  }
  if (out) {
    const what = `${esc(VARIANT_NAMES[out.variant] || out.variant)}, you play ${esc(out.you_play)}`;
    if (out.state === 'waiting') {
      html += `<div class="outgoing" data-state="waiting"><p>Invited <b>${esc(out.to)}</b> (${what}): waiting for ${esc(out.to)} to accept.</p>` +
        '<div class="row"><button class="cancel">Withdraw the invitation</button></div></div>';
    } else if ((out.state === 'declined' || out.state === 'failed') && renderRemote.dismissed !== out.game) {
      html += `<div class="outgoing" data-state="${esc(out.state)}"><p>${esc(out.state === 'declined' ? `${out.to} declined the game (${VARIANT_NAMES[out.variant] || out.variant}).` : `No game with ${out.to}: ${out.error}.`)}</p>` +
        `<div class="row"><button class="dismiss small" data-game="${esc(out.game)}">OK</button></div></div>`;
    } else if (out.state === 'agreed') {
      html += `<div class="outgoing" data-state="agreed"><p>${esc(out.to)} accepted: the game starts.</p></div>`;
    }
  }
  if (html === renderRemote.last) return;
  renderRemote.last = html;
  el.innerHTML = html;
  el.hidden = !html;
  for (const b of el.querySelectorAll('button.req-accept')) b.onclick = () => command('accept');
  for (const b of el.querySelectorAll('button.req-decline')) b.onclick = () => command('decline');
  for (const b of el.querySelectorAll('button.accept')) {
    b.onclick = () => remoteApi('/api/remote/accept', { board: b.dataset.from }, (x) => `Accepted ${x.accepted}'s game: you play ${x.you_play}. Set up the board as the LEDs show.`);
  }
  for (const b of el.querySelectorAll('button.decline')) {
    b.onclick = () => remoteApi('/api/remote/decline', { board: b.dataset.from }, (x) => `Declined ${x.declined}'s invitation.`);
  }
  for (const b of el.querySelectorAll('button.dismiss')) b.onclick = () => { renderRemote.dismissed = b.dataset.game; renderRemote(state); };
  for (const b of el.querySelectorAll('button.cancel')) b.onclick = () => remoteApi('/api/remote/cancel', {}, () => 'Invitation withdrawn.');
}

// the boards on the broker (New game tab), asked again every 5 s while the tab is shown
let remoteTimer = null;
async function loadRemoteBoards() {
  clearTimeout(remoteTimer);
  if ($('#tab-new').hidden) return;
  const list = $('#remote-boards');
  try {
    const r = await api('/api/remote/boards');
    $('#remote-note').textContent = `This board is ${r.me} on the club's broker` + (r.connected ? '' : ' (not connected now)') +
      ': invite a board online to play the variant and time control above, its player at their own board.';
    $('#remote-side-row').hidden = false;
    list.innerHTML = r.boards.map((b) => `<li data-board="${esc(b.board)}" class="${b.online ? 'online' : 'offline'}">` +
      `<b>${esc(b.board)}</b> <small>${b.online ? 'online' : 'offline'}</small>` +
      (b.online ? ` <button class="invite" data-board="${esc(b.board)}">Invite</button>` : '') + '</li>').join('') ||
      '<li>No other board is on the broker.</li>';
    for (const b of list.querySelectorAll('button.invite')) b.onclick = () => inviteBoard(b.dataset.board);
  } catch (e) {
    $('#remote-note').textContent = e.status === 409 ? `No remote games: ${e.message}.` : e.message;
    $('#remote-side-row').hidden = true;
    list.innerHTML = '';
    document.body.dataset.remote = e.status === 409 ? 'none' : 'error';
    return;
  }
  document.body.dataset.remote = 'listed';
  remoteTimer = setTimeout(loadRemoteBoards, 5000);
}

function inviteBoard(peer) {
  const tc = $('#nv-clock').value === 'custom' ? $('#nv-clock-custom').value.trim() : $('#nv-clock').value;
  const body = { board: peer, side: $('#remote-side').value, variant: $('#nv-variant').value, clock: tc || '-' };
  if (body.clock !== '-') body.clock_mode = $('#nv-clock-mode').value;
  remoteApi('/api/remote/invite', body, (x) => `Invited ${x.invited}: the game starts once ${x.invited} accepts.`)
    .then(() => showTab('play'));
}

// -- the screen kept on while a game is on (a phone that locks mid-game hides the prompts) ----------
let wakeLock = null;
let wakeWanted = false;
let wakeAsking = false;
async function keepAwake(on) {
  wakeWanted = on;
  const b = document.body.dataset;
  if (!('wakeLock' in navigator)) { b.wakelock = 'unsupported'; return; }
  if (!on) {
    if (wakeLock) { const l = wakeLock; wakeLock = null; l.release().catch(() => {}); }
    b.wakelock = 'off';
    return;
  }
  if (wakeLock || wakeAsking || document.visibilityState !== 'visible') return;
  wakeAsking = true;
  try {
    const l = await navigator.wakeLock.request('screen');
    wakeLock = l;
    b.wakelock = 'on';
    l.addEventListener('release', () => { if (wakeLock === l) { wakeLock = null; b.wakelock = 'off'; } });
    if (!wakeWanted) keepAwake(false);        // the game ended while it was being asked for
  } catch (e) {
    b.wakelock = 'refused';
  } finally {
    wakeAsking = false;
  }
}
// a lock is released when the page is hidden: ask again when it is shown
document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible' && wakeWanted) keepAwake(true); });

// -- a sound and a vibration when the computer has moved or the board asks something -------------
let alertsOn = localStorage.getItem('fairyboard.alerts') !== 'off';
let alertKey = null;            // what was last alerted: a new computer move or question alerts once
let audio = null;
function showAlertsButton() {
  $('#btn-alerts').textContent = alertsOn ? 'Sound on' : 'Sound off';
  $('#btn-alerts').setAttribute('aria-pressed', String(alertsOn));
  $('#btn-alerts').classList.toggle('active', alertsOn);
}
function beep() {
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    if (audio.state === 'suspended') audio.resume();
    const o = audio.createOscillator();
    const g = audio.createGain();
    o.frequency.value = 880;
    g.gain.setValueAtTime(0.25, audio.currentTime);
    g.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    o.connect(g).connect(audio.destination);
    o.start();
    o.stop(audio.currentTime + 0.35);
  } catch (e) { /* no sound on this browser */ }
}
function alertIfAsked(s) {
  const p = s.pending;
  const prompt = p && (p.type === 'prompt' ? p : p.type === 'mismatch' ? p.prompt : null);
  const kind = s.computer ? 'computer' : prompt ? 'prompt' : null;
  const key = kind ? `${s.game}|${s.moves.length}|${kind}|${s.computer ? s.computer.move : prompt.text}` : '';
  const first = alertKey === null;
  if (key === alertKey) return;
  alertKey = key;
  if (!key || first) return;               // nothing asked; or the page just opened (nothing new)
  const b = document.body.dataset;
  if (!alertsOn) { b.alertsSkipped = Number(b.alertsSkipped || 0) + 1; return; }
  b.alerts = Number(b.alerts || 0) + 1;
  b.alertKind = kind;
  beep();
  if (navigator.vibrate) navigator.vibrate(kind === 'computer' ? [150, 80, 150] : [250]);
}
// the sound may only start after a tap: the first one anywhere prepares it
document.addEventListener('pointerdown', () => {
  if (!audio && alertsOn) try { audio = new (window.AudioContext || window.webkitAudioContext)(); } catch (e) { /* none */ }
}, { once: true, capture: true });

// -- chess clocks: both times as the snapshot gives them, the running one counted down here
// from the moment the snapshot arrived until the next one (docs/web.md, clocks) -------------------
const LOW_MS = 20000;       // under 20 s a clock shows in the low-time colour
let clockBase = null;       // {key, c, at, over}: the snapshot's clocks and when they arrived

function clockText(ms) {
  ms = Math.max(0, ms);
  if (ms < 10000) return `0:0${Math.floor(ms / 1000)}.${Math.floor(ms / 100) % 10}`;   // tenths under 10 s
  const sec = Math.floor(ms / 1000);
  const h = Math.floor(sec / 3600);
  const mm = String(Math.floor(sec / 60) % 60);
  const ss = String(sec % 60).padStart(2, '0');
  return h ? `${h}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

function clockLeft(side) {
  const { c, at, over } = clockBase;
  let ms = c[side];
  if (c.running === side && !c.paused && !c.waiting && !c.flag && !over) ms -= performance.now() - at;
  return Math.max(0, ms);
}

// the low-time sound: once, when a running clock goes under LOW_MS while the page watches
// (a page opened on a clock already low stays quiet)
function lowTime(side, ms) {
  const before = clockBase.seen[side];
  clockBase.seen[side] = ms;
  if (before === undefined || before < LOW_MS || ms >= LOW_MS || clockBase.c.running !== side) return;
  if (!alertsOn) return;
  document.body.dataset.lowAlerts = Number(document.body.dataset.lowAlerts || 0) + 1;
  beep();
  if (navigator.vibrate) navigator.vibrate([80, 60, 80, 60, 80]);
}

function tickClocks() {
  if (!clockBase) return;
  for (const side of ['white', 'black']) {
    const el = document.querySelector(`#clocks .clock[data-side="${side}"]`);
    const ms = clockLeft(side);
    lowTime(side, ms);
    const t = el.querySelector('.time');
    const text = clockText(ms);
    if (t.textContent !== text) t.textContent = text;
    el.classList.toggle('low', ms < LOW_MS);
    el.dataset.ms = Math.round(ms);
  }
}

function renderClocks(s) {
  const c = s.clocks;
  $('#clocks').hidden = !c;
  if (!c) { clockBase = null; return; }
  // a snapshot drawn again (Letters, an HTTP answer of the same version) keeps its arrival time
  const key = `${s.run}/${s.version}`;
  if (!clockBase || clockBase.key !== key) {
    clockBase = { key, c, at: performance.now(), over: !!s.result, game: s.game, seen: clockBase && clockBase.game === s.game ? clockBase.seen : {} };
  }
  for (const side of ['white', 'black']) {
    const el = document.querySelector(`#clocks .clock[data-side="${side}"]`);
    const running = c.running === side && !c.paused && !c.waiting && !s.result;
    el.classList.toggle('running', running);
    el.classList.toggle('flag', c.flag === side);
    const Side = side === 'white' ? 'White' : 'Black';
    el.querySelector('.who').textContent = (s.players[side] === Side ? Side : `${Side} · ${s.players[side]}`) +
      (c.flag === side ? ' · flag fell' : running ? ' · running' : '');
  }
  const live = !s.result && !c.flag;
  const press = $('#btn-press');
  // before the first move no clock runs: the press after it starts the other side's
  const mover = c.first_move ? (s.turn === 'white' ? 'black' : 'white') : c.running;
  const side = mover === 'white' ? 'White' : 'Black';
  press.hidden = !(live && c.mode === 'press' && ((c.running && !c.paused && !c.waiting) || (c.first_move && s.moves.length)));
  press.textContent = `Press the clock: ${side} has moved`;
  press.dataset.side = mover || '';
  $('#btn-clock-start').hidden = !(live && (c.paused || c.waiting));
  $('#btn-clock-pause').hidden = !(live && c.running && !c.paused && !c.waiting);
  $('#clock-note').textContent = `${c.tc}` + (c.mode === 'press' ? ', clock button' : '') +
    (!live ? '' : c.paused ? ' – paused' : c.first_move ? ' – starts with the first move (or Start)'
      : c.waiting ? ' – stopped: the next move or Start restarts it' : '');
  tickClocks();
}
setInterval(tickClocks, 100);

function renderStatus(s) {
  const el = $('#status');
  let text;
  if (s.result) text = `Game over: ${s.result} (${s.reason}).`;
  else text = `${s.turn === 'white' ? 'White' : 'Black'} to play` + (s.check.length ? ` – check (${s.check.join(', ')})` : '') + '.';
  if (s.lifted.length && !s.result) {
    text += s.lifted.length > 3
      ? ` ${s.lifted.length} pieces are off their squares (the Fix the board box says where they go).`
      : ' In hand: ' + s.lifted.map((sq) => `${pieceName(s, s.pieces[sq])} from ${sq}`).join(', ') + '.';
  }
  el.textContent = text;
  el.className = 'status' + (s.check.length ? ' check' : '') + (s.result ? ' over' : '');
}

const FACES = ['⚀', '⚁', '⚂', '⚃', '⚄', '⚅'];
function renderDice(s) {
  const el = $('#dice');
  el.hidden = !s.dice;
  if (s.dice) {
    el.innerHTML = `<span class="faces" title="${s.dice.join('-')}">${s.dice.map((d) => FACES[d - 1]).join(' ')}</span> ` +
      `<span>${esc(s.description)}</span>`;
  }
}

function pieceName(s, letter) {
  if (!letter) return 'a piece';
  const e = s.catalog.find((c) => c.letter.toLowerCase() === letter.toLowerCase());
  const side = letter === letter.toUpperCase() ? 'white' : 'black';
  return `${side} ${e ? e.name : letter}`;
}

function renderPrompt(s) {
  const el = $('#prompt');
  const p = s.pending;
  const comp = s.computer ? `<p class="computer">${esc(s.computer.text)}</p>` : '';
  if (!p) {
    el.hidden = !comp;
    el.innerHTML = comp;
    el.className = 'prompt computer';
    return;
  }
  el.hidden = false;
  let html = comp;
  const prompt = p.type === 'prompt' ? p : (p.type === 'mismatch' ? p.prompt : null);
  if (p.type === 'mismatch') html += (p.why ? `<p class="why"><b>Not allowed:</b> ${esc(p.why)}</p>` : '') + `<p class="fix"><b>Fix the board:</b> ${esc(p.text)}</p>`;
  if (p.type === 'move') {
    html += `<p>A move is under way` + (p.candidates.length ? `: ${esc(p.candidates.slice(0, 8).join(', '))}${p.candidates.length > 8 ? ' …' : ''}` : '') + '</p>';
  }
  if (p.type === 'hold') html += `<p>Holding ${esc(p.move)}…</p>`;
  if (prompt) {
    html += `<p class="question">${esc(prompt.text.split(' choose ')[0])}</p><div class="options">` +
      prompt.options.map((o, i) => `<button class="option" data-choice="${i + 1}" data-label="${esc(o)}">${esc(optionLabel(s, o))}` +
        (o === prompt.default ? ' <small>(default)</small>' : '') + '</button>').join('') + '</div>';
  }
  el.innerHTML = html;
  el.className = 'prompt ' + p.type;
  for (const b of el.querySelectorAll('button.option')) b.onclick = () => command(`choose ${b.dataset.choice}`);
}

// -- the engine's help: the hint (the hint command's words; its move lit on the board like the
// computer's) and the live evaluation (docs/web.md, hint and eval) ------------------------------
let hintAsked = null;       // {game, ply, n}: the Hint button was pressed (the answer may come later)

function thisGameNotices(s) {
  const start = s.notices.map((n) => n.text.startsWith(`New game ${s.game}:`)).lastIndexOf(true);
  return s.notices.slice(Math.max(start, 0));
}

function renderHint(s) {
  const el = $('#hint');
  const ply = s.moves.length;
  if (hintAsked && (hintAsked.game !== s.game || hintAsked.ply !== ply || s.result)) hintAsked = null;
  $('#btn-hint').disabled = !!s.result || !!s.computer;
  const notices = thisGameNotices(s);
  let text = null;
  let kind = 'hint';
  if (s.hint) {
    // the board's words (with the engine's score) when it said them, else the move in words
    const said = notices.filter((n) => n.text.startsWith('Hint for ')).pop();
    text = said && (!hintAsked || said.n > hintAsked.n) ? said.text : s.hint.text;
  } else if (hintAsked) {
    const refused = notices.filter((n) => n.n > hintAsked.n && /^hint[:]/i.test(n.text)).pop();
    if (refused) { text = refused.text; kind = 'hint refused'; } else { text = 'Asking the engine for a hint…'; kind = 'hint asking'; }
  }
  el.hidden = !text;
  el.textContent = text || '';
  el.className = kind;
  el.dataset.move = s.hint ? s.hint.move : '';
}

async function askHint() {
  const s = state;
  if (!s) return;
  const last = s.notices.length ? s.notices[s.notices.length - 1].n : 0;
  hintAsked = { game: s.game, ply: s.moves.length, n: last };
  renderHint(s);
  try {
    const r = await api('/api/command', { text: 'hint' });
    if (r.state) render(r.state);
    else renderHint(state);
  } catch (e) {
    hintAsked = null;
    renderHint(state);
    if (e.status === 401) { say('Pair this phone with the board first (the Pair button).', 'error'); showPair(true); } else say(e.message, 'error');
  }
}

// A score as the board says it (its hint too): always White's point of view, as lichess gives it:
// +0.35 (White better by a third of a pawn), -1.20 (Black better), #3 (White mates in 3 plies),
// #-2 (Black mates in 2); Chego's is its own count, 100 a point
function scoreText(cp, mate) {
  if (mate === 0) return 'mate';
  if (mate !== null && mate !== undefined) return `#${mate}`;
  const v = (cp / 100).toFixed(2);
  return cp > 0 ? `+${v}` : cp < 0 ? v : '0.00';
}
// White's share of the bar (50 = level): a logistic curve of the centipawns, a mate all the way
function whiteShare(cp, mate) {
  if (mate !== null && mate !== undefined) return mate > 0 || (mate === 0 && cp > 0) ? 100 : 0;
  return 100 / (1 + Math.exp(-cp / 250));
}

let evalShown = null;       // the last figures shown (kept, dimmed, while the next position is judged)
function renderEval(s) {
  const e = s.eval;
  const btn = $('#btn-eval');
  btn.textContent = e ? 'Evaluation on' : 'Evaluation off';
  btn.setAttribute('aria-pressed', String(!!e));
  btn.classList.toggle('active', !!e);
  const box = $('#evalbox');
  box.hidden = !e;
  if (!e) { evalShown = null; return; }
  if (evalShown && evalShown.game !== s.game) evalShown = null;
  if (e.state === 'done') evalShown = { ...e, game: s.game };
  let text;
  if (e.state === 'done') {
    text = `${scoreText(e.cp, e.mate)}` + (e.points ? ` · ${e.points.white}–${e.points.black} points` : '') +
      (e.depth && e.mate === null ? ` · depth ${e.depth}` : '') + (e.engine ? ` · ${e.engine}` : '');
  } else if (e.state === 'thinking') {
    text = evalShown ? `${scoreText(evalShown.cp, evalShown.mate)} · thinking…` : 'Thinking…';
  } else if (e.state === 'over') text = 'The game is over.';
  else text = `No evaluation: ${e.error || 'the engine failed'}`;
  $('#evaltext').textContent = text;
  const shown = e.state === 'done' ? e : evalShown;
  const share = shown ? whiteShare(shown.cp, shown.mate) : 50;
  $('#evalbar .evalwhite').style.width = `${share.toFixed(1)}%`;
  $('#evalbar').setAttribute('aria-valuenow', share.toFixed(0));
  box.dataset.state = e.state;
  box.dataset.ply = e.ply;
  box.classList.toggle('stale', e.state !== 'done');
}

async function switchEval() {
  const on = !(state && state.eval);
  try {
    const r = await api('/api/eval', { on });
    if (r.state) render(r.state);
  } catch (e) {
    if (e.status === 401) { say('Pair this phone with the board first (the Pair button).', 'error'); showPair(true); } else say(e.message, 'error');
  }
}

function optionLabel(s, label) {
  // e7e8q -> "queen (e7e8q)"; N@e4 -> "knight (N@e4)"
  let letter = null;
  const m = /^[a-p]\d+[a-p]\d+([a-z])$/.exec(label);
  if (m) letter = m[1];
  const d = /^([A-Za-z])@/.exec(label);
  if (d) letter = d[1];
  if (!letter) return label;
  const e = s.catalog.find((c) => c.letter.toLowerCase() === letter.toLowerCase());
  return e ? `${e.name} (${label})` : label;
}

function renderActions(s) {
  const has = (k) => s.actions.includes(k);
  $('#btn-pass').hidden = !has('pass');
  $('#btn-end').hidden = !has('end');
  const left = (s.state || {}).points_left;
  $('#btn-end').textContent = left !== undefined ? `End turn (${left} points left)` : 'End turn';
  $('#btn-takeback').disabled = !s.moves.length && !s.result;
  $('#btn-resign').disabled = !!s.result;
  // a draw is offered to the other board's player in a remote game (at one board both players
  // are there to agree: the console's draw)
  $('#btn-draw').hidden = !s.remote;
  $('#btn-draw').disabled = !!s.result || !!(s.remote && (s.remote.asking || s.remote.asked));
  if (s.result || (renderActions.game && renderActions.game !== s.game)) $('#resignbox').hidden = true;
  renderActions.game = s.game;
}

// A player name that is an engine spec is the computer (as POST /api/new reads it).
const isComputer = (name) => /^(computer|builtin(:-?\d+)?|random|fsf(:-?\d+)?|uci:.+)$/i.test(String(name || '').trim());
const isRemote = (name) => /^remote:./i.test(String(name || '').trim());

// Resign names the side that resigns, never "the side to move": against the computer it is the
// person's side (the computer's move may be showing: its turn); two people choose their side.
function askResign() {
  const s = state;
  if (!s || s.result) return;
  const box = $('#resignbox');
  if (!box.hidden) { box.hidden = true; return; }
  const people = ['white', 'black'].filter((c) => !isComputer(s.players[c]));
  const sides = people.length ? people : ['white', 'black'];
  const label = (c) => `${c === 'white' ? 'White' : 'Black'} (${s.players[c]}) resigns`;
  $('#resign-question').textContent = sides.length === 1
    ? `Resign the game for ${s.players[sides[0]]} (${sides[0]})?` : 'Which side resigns?';
  $('#resign-sides').innerHTML = sides.map((c) => `<button class="resignside" data-side="${c}">${esc(label(c))}</button>`).join('') +
    '<button class="resigncancel">Cancel</button>';
  for (const b of box.querySelectorAll('button.resignside')) b.onclick = () => { box.hidden = true; command(`resign ${b.dataset.side}`); };
  box.querySelector('button.resigncancel').onclick = () => { box.hidden = true; };
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
}

function money(x) { return x === undefined || x === null ? '–' : String(x); }

// The family's state: the engine's typed view (state) first; the family's own description
// (view) for what the typed view does not carry (design slots and prices, armies, turn moves).
function renderFamily(s) {
  const el = $('#family');
  const v = s.view || {};
  const t = s.state || {};
  let html = '';
  if (s.family === 'csipgs') {
    const me = s.turn;
    const designOf = (letter) => (v.pieces && v.pieces[letter.toLowerCase()]) || letter;
    const reserves = t.reserves || {};
    html += `<h3>csipgs – ${esc(t.phase || v.phase || '')} phase</h3>`;
    html += '<table class="treasury"><tr><th></th><th>treasury</th><th>reserve</th></tr>' + ['white', 'black'].map((c) =>
      `<tr><th>${c}</th><td data-treasury="${c}">${money(t.treasuries && t.treasuries[c])}</td><td>` +
      Object.entries(reserves[c] || {}).filter(([, n]) => n).map(([l, n]) => `${esc(designOf(l))} ×${n}`).join(', ') + '</td></tr>').join('') + '</table>';
    if (v.army) {
      const budget = s.army ? Number(s.army.budget) : null;
      const left = (c) => (budget === null ? '' : `, ${Math.round((budget - Number(v.army.spent[c])) * 100) / 100} left`);
      html += `<p data-army-budget="${esc(s.army ? s.army.budget : '')}">Army budget ${money(s.army && s.army.budget)} zorkmids for ` +
        `${money(s.army && s.army.pieces)} pieces: white spent ${money(v.army.spent.white)}${left('white')}, ` +
        `black spent ${money(v.army.spent.black)}${left('black')}</p>` +
        '<form id="armyform" class="row"><input id="army" placeholder="royal-WF@e1,BR@d1,…" autocomplete="off"><button>Set up army</button></form>';
    }
    if (s.buy.length) {
      html += '<div class="buy"><span>Buy:</span>' + s.buy.map((b) =>
        `<button class="buybtn" data-design="${esc(b.design)}">${esc(b.design)} <small>${esc(b.price)} z</small></button>`).join('') + '</div>';
    }
    const reserve = Object.entries(reserves[me] || {}).filter(([, n]) => n);
    if (s.sim && reserve.length) {
      html += '<div class="reserve"><span>Drop from the reserve:</span>' + reserve.map(([l, n]) =>
        `<button class="dropbtn" data-letter="${esc(l)}" data-design="${esc(designOf(l))}">${esc(designOf(l))} ×${n}</button>`).join('') +
        '<small>then tap an empty square</small></div>';
    }
    const slots = (v.designs && v.designs[me]) || [];
    const prices = (v.prices && v.prices[me]) || {};
    html += '<h4>Design slots</h4><ol class="slots">' + slots.map((d) => `<li>${esc(d)} <small>${esc(money(prices[d]))} z</small></li>`).join('') + '</ol>';
    html += `<form id="designform" class="design"><label>Slot <select id="slot">${slots.map((d, i) => `<option value="${i + 1}">${i + 1}: ${esc(d)}</option>`).join('')}</select></label>` +
      `<input id="betza" placeholder="Betza, e.g. fcFfmW" autocomplete="off" autocapitalize="off" spellcheck="false">` +
      '<button>Design</button></form><pre id="cost" class="cost"></pre>';
    if (s.variant.includes('configurable')) {
      html += '<form id="inventform" class="row"><input id="invent-name" placeholder="atom or modifier, e.g. nN"><input id="invent-mine" placeholder="your price" size="6"><input id="invent-theirs" placeholder="their price" size="6"><button>Invent</button></form>';
    }
  } else if (s.family === 'chego') {
    html += '<h3>Chego</h3><table><tr><th></th><th>points</th><th>hand</th></tr>' + ['white', 'black'].map((c) =>
      `<tr><th>${c}</th><td>${money(t.points && t.points[c])}</td><td>` +
      Object.entries((t.hands && t.hands[c]) || {}).filter(([, n]) => n).map(([l, n]) => `${esc(pieceName(s, c === 'white' ? l.toUpperCase() : l.toLowerCase()))} ×${n}`).join(', ') +
      '</td></tr>').join('') + `</table><p>Passes in a row: ${money(t.passes)}</p>`;
    if (s.sim) html += '<p><button id="placebtn">Place a piece from the hand</button> <small>then tap an empty square</small></p>';
  } else if (s.family === 'cost-progressive') {
    html += `<h3>Cost progressive</h3><p>Turn ${money(v.turn_number)}: <b data-points-left>${money(t.points_left)}</b> of ${money(t.turn_budget)} points left` +
      (v.turn_moves && v.turn_moves.length ? `; this turn: ${esc(v.turn_moves.join(' '))}` : '') + '</p>';
  }
  if (html === renderFamily.last) return;       // unchanged: keep what is being typed
  renderFamily.last = html;
  const active = document.activeElement && document.activeElement.id;
  const caret = active === 'betza' ? $('#betza').selectionStart : null;
  const slot = $('#slot') ? $('#slot').value : null;
  const costText = $('#cost') ? $('#cost').textContent : '';
  const typed = $('#betza') ? $('#betza').value : '';
  el.innerHTML = html;
  el.hidden = !html;
  if ($('#slot') && slot) $('#slot').value = slot;
  if ($('#cost')) $('#cost').textContent = costText;
  if ($('#betza')) $('#betza').value = typed;
  if (active === 'betza' && $('#betza')) { $('#betza').focus(); $('#betza').setSelectionRange(caret, caret); }
  for (const b of el.querySelectorAll('.buybtn')) b.onclick = () => command(`buy ${b.dataset.design}`);
  for (const b of el.querySelectorAll('.dropbtn')) b.onclick = () => { setTool('place', true); say(`Tap the square to drop the ${b.dataset.design} on.`); };
  if ($('#placebtn')) $('#placebtn').onclick = () => { setTool('place', true); say('Tap the square to place the piece on.'); };
  if ($('#betza')) $('#betza').oninput = () => priceDesign($('#betza').value);
  if ($('#designform')) $('#designform').onsubmit = (e) => { e.preventDefault(); command(`design ${$('#slot').value}=${$('#betza').value.trim()}`); };
  if ($('#inventform')) $('#inventform').onsubmit = (e) => { e.preventDefault(); command(`invent ${$('#invent-name').value.trim()} ${$('#invent-mine').value.trim()} ${$('#invent-theirs').value.trim()}`); };
  if ($('#armyform')) $('#armyform').onsubmit = (e) => { e.preventDefault(); command(`setup ${$('#army').value.trim()}`); };
}

function priceDesign(text) {
  clearTimeout(costTimer);
  const t = text.trim();
  if (!t) { $('#cost').textContent = ''; return; }
  costTimer = setTimeout(async () => {
    try {
      const c = await api('/api/cost?design=' + encodeURIComponent(t));
      if ($('#betza').value.trim() !== t) return;
      $('#cost').textContent = `${c.design}\n${c.lines.join('\n')}\ncost ${c.exact}, price ${c.price} zorkmids`;
      $('#cost').dataset.price = c.price;
      $('#cost').className = 'cost ok';
    } catch (e) {
      $('#cost').textContent = e.message;
      $('#cost').dataset.price = '';
      $('#cost').className = 'cost bad';
    }
  }, 120);
}

function renderLegend(s) {
  const lit = new Map();
  for (const [sq, l] of Object.entries(s.leds)) {
    const k = l.layer || l.color;
    if (!lit.has(k)) lit.set(k, { ...l, squares: [] });
    lit.get(k).squares.push(sq);
  }
  $('#ledlegend').innerHTML = [...lit.values()].map((l) =>
    `<li data-layer="${esc(l.layer || '')}"><span class="swatch${l.blink !== 'steady' ? ' blink' : ''}" style="background:${esc(ledColor(l))}"></span>${esc(l.meaning || l.layer)}: ${esc(l.squares.join(' '))}</li>`).join('');
  $('#ledlegend').hidden = !lit.size;
  $('#legend').innerHTML = s.catalog.map((c) =>
    `<li><span class="mini" style='background-image:${pieceUrl(c.letter, 'white', c, letters)}'></span>` +
    `<b>${esc(c.name)}</b> <small>${esc(c.letter.toUpperCase())} · ${esc(c.betza)}${c.royal ? ' · royal' : ''}</small></li>`).join('');
}

function renderNotices(s) {
  // this game's notices only: from the notice that started it, when it is among them
  $('#notices').innerHTML = thisGameNotices(s).slice(-12).reverse().map((n) => `<li>${esc(n.text)}</li>`).join('');
  // the moves by their names (SAN) with move numbers; an older server sends only engine notation
  $('#moves').textContent = (s.movetext ?? s.moves.join(' ')) || '(no moves yet)';
}

function setTool(mode, once = false) {
  board.setMode(mode);
  $('#tool').dataset.once = once ? '1' : '';
  for (const b of document.querySelectorAll('#simtools button[data-tool]')) b.classList.toggle('active', b.dataset.tool === mode);
}

// -- pairing ---------------------------------------------------------------------------------------
function showPair(open) { $('#pairpanel').hidden = !open; }

async function pair() {
  showPair(true);
  try {
    const p = await api('/api/pair', {});
    $('#pairtext').textContent = p.text;
    $('#pairtext').dataset.square = p.square;
    const poll = async () => {
      let st;
      try { st = await api('/api/pair/' + p.id); } catch (e) { $('#pairtext').textContent = e.message; return; }
      if (st.state === 'granted') {
        $('#pairtext').textContent = 'Paired: this phone may now control the game.';
        $('#toast').hidden = true;
        state.paired = true;
        document.body.classList.add('paired');
        $('#pairstate').textContent = 'Paired';
        $('#pairbtn').hidden = true;
        setTimeout(() => showPair(false), 1500);
      } else if (st.state === 'expired') {
        $('#pairtext').textContent = 'The 30 seconds ran out: ask again.';
      } else {
        $('#pairtext').textContent = `${st.text || `Lift the piece on ${p.square} (its square blinks white) and put it back`}: ${st.expires_in} s left.`;
        setTimeout(poll, 500);
      }
    };
    setTimeout(poll, 500);
  } catch (e) {
    $('#pairtext').textContent = e.message;
  }
}

// -- new game, games -------------------------------------------------------------------------------
// The variants by the names players know them by, grouped by family (a variant the page does
// not know, from a newer server, keeps its own name).
const VARIANT_NAMES = {
  orthodox: 'Chess', courier: 'Courier Chess',
  'tomorrow-1': "Tomorrow's Chess 1: Camels and Giraffes", 'tomorrow-2': "Tomorrow's Chess 2: Princess and Empress",
  'tomorrow-3': "Tomorrow's Chess 3: Cannon, Tigers and a Man", 'tomorrow-4': "Tomorrow's Chess 4: Great Chess, smaller",
  'tomorrow-4-great': "Tomorrow's Chess 4, Great Chess's arrangement", 'tomorrow-5': "Tomorrow's Chess 5: mediaeval pieces",
  random: 'Random Variant Chess (three dice)',
  csipgs: 'csipgs chess', 'csipgs-army': 'Army csipgs', 'csipgs-balanced-1': 'Balanced csipgs I',
  'csipgs-balanced-2': 'Balanced csipgs II', 'csipgs-configurable': 'Configurable csipgs', 'csipgs-drawless': 'Drawless csipgs',
  'csipgs-dutch': 'Dutch csipgs', 'csipgs-progressive': 'Progressive csipgs',
  'csipgs-power-weak': 'Power csipgs: weak (2 a turn)', 'csipgs-power-standard': 'Power csipgs: standard (4 a turn)',
  'csipgs-power-strong': 'Power csipgs: strong (7 a turn)', 'csipgs-power-super': 'Power csipgs: super (10 a turn)',
  'cost-progressive': 'Cost Progressive Chess', 'cost-progressive-simple': 'Simple Cost Progressive',
  'cost-progressive-fibonacci': 'Fibonacci Cost Progressive', 'cost-progressive-tomorrow-1': 'Perfect Cost Progressive (Tomorrow 1 army)',
  chego: 'Chego', 'chego-holes': 'Chego without the centre', 'chego-12x8': 'Chego 12x8 (Tomorrow 1 army)',
};
const GROUPS = [['chess', 'Chess'], ['tomorrow', "Tomorrow's Chess"], ['random', 'Random Variant Chess'],
  ['csipgs', 'csipgs'], ['cost-progressive', 'Cost Progressive'], ['chego', 'Chego'], ['other', 'Others']];
function groupOf(v) {
  if (v.name === 'random' || v.family === 'random') return 'random';
  if (v.name.startsWith('tomorrow')) return 'tomorrow';
  if (['chess', 'csipgs', 'cost-progressive', 'chego'].includes(v.family)) return v.family;
  return v.family ? 'other' : 'chess';
}

async function loadVariants() {
  const r = await api('/api/variants');
  const sel = $('#nv-variant');
  const option = (v) => `<option value="${esc(v.name)}">${esc(VARIANT_NAMES[v.name] || v.name)}` +
    (v.files && v.ranks && v.name !== 'random' ? ` (${v.files}x${v.ranks})` : '') + '</option>';
  sel.innerHTML = GROUPS.map(([g, label]) => {
    const vs = r.variants.filter((v) => groupOf(v) === g);
    return vs.length ? `<optgroup label="${esc(label)}">${vs.map(option).join('')}</optgroup>` : '';
  }).join('');
  // only what applies to the variant chosen: the match schedule is Random Variant Chess's
  const describe = () => {
    const v = r.variants.find((x) => x.name === sel.value);
    $('#nv-desc').textContent = v ? v.description : '';
    $('#nv-schedule').hidden = sel.value !== 'random';
  };
  sel.onchange = describe;
  if (state) sel.value = state.variant.startsWith("random-") ? "random" : state.variant;
  describe();
  // the built-in engine by its levels, weakest first, then the rest; each named by what it means
  const levels = r.computer_levels || [];
  const names = r.computer_names || {};
  const specs = [...levels, ...(r.computer || [])];
  const label = (c) => names[c] || c;
  // the note on the computer only once it plays a side; a side it plays needs no name
  const who = () => {
    let any = false;
    for (const side of ['white', 'black']) {
      const c = !!$(`#nv-${side}-who`).value;
      any = any || c;
      $(`#nv-${side}`).hidden = c;
    }
    $('#nv-computer').hidden = !any;
  };
  for (const side of ['white', 'black']) {
    const sel = $(`#nv-${side}-who`);
    const was = sel.value;
    sel.innerHTML = '<option value="">a person</option>' + (specs.length ? '<optgroup label="the computer">' +
      specs.map((c) => `<option value="${esc(c)}">${esc(label(c))}</option>`).join('') + '</optgroup>' : '');
    sel.hidden = !specs.length;
    if (specs.includes(was)) sel.value = was;
    sel.onchange = who;
  }
  who();
}

// The time control offered first is the current game's (a new game keeps it unless changed).
function showClockForm(init) {
  const sel = $('#nv-clock');
  if (init && state) {
    const c = state.clocks;
    const tc = c ? c.tc : '-';
    if ([...sel.options].some((o) => o.value === tc)) sel.value = tc;
    else { sel.value = 'custom'; $('#nv-clock-custom').value = tc; }
    $('#nv-clock-mode').value = c && c.mode === 'press' ? 'press' : 'auto';
  }
  $('#nv-clock-custom-row').hidden = sel.value !== 'custom';
  $('#nv-clock-mode-row').hidden = sel.value === '-';
}
$('#nv-clock').onchange = () => showClockForm(false);

async function loadSchedule() {
  const r = await api('/api/schedule?games=8');
  const name = (p) => esc(p === 'A' ? ($('#nv-white').value || 'A') : ($('#nv-black').value || 'B'));
  $('#schedule').innerHTML = '<tr><th>game</th><th>White</th><th>Black</th><th>variant</th></tr>' +
    r.games.map((g) => `<tr><td>${g.game}</td><td>${name(g.white)}</td><td>${name(g.black)}</td>` +
      `<td>${g.draw ? `draw no. ${g.variant}` : `no. ${g.variant} again`}</td></tr>`).join('');
}

async function loadHardware() {
  const h = await api('/api/hardware');
  const rows = [['board', h.board], ['size', h.size], ['sensors', h.sensors], ['LEDs', h.leds],
    ['calibrated', h.calibrated ? 'yes' : 'no']];
  for (const p of h.problems || []) rows.push(['calibration', p]);
  if (h.link) for (const [k, v] of Object.entries(h.link)) rows.push([`link ${k.replace(/_/g, ' ')}`, v]);
  else rows.push(['link', h.sensors === 'serial' ? 'not connected' : 'none (no serial link)']);
  $('#hwinfo').innerHTML = rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('');
  if (h.selftest) renderSelftest(h.selftest);
  if (h.calibration) renderCalib(h.calibration);
}

// -- the Board tab's tools: selftest and calibration (docs/web.md) ------------------------------------
function renderSelftest(f) {
  const rows = [];
  const s = f.sensors || {};
  rows.push(['sensors', `${s.frames} frames in ${s.seconds} s; closed now: ${(s.closed || []).join(', ') || 'none'}` +
    ((s.flickering || []).length ? `; flickering: ${s.flickering.join(', ')}` : '')]);
  if (f.leds) rows.push(['LEDs', `shown ${f.leds.join('; ')} (every LED should have lit)`]);
  if (f.link) rows.push(['link', Object.entries(f.link).map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`).join(', ')]);
  for (const p of f.problems || []) rows.push(['PROBLEM', p]);
  rows.push(['result', f.problems && f.problems.length ? `${f.problems.length} problem(s)` : 'all fine']);
  $('#selftest').innerHTML = '<table class="hwinfo">' +
    rows.map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(v)}</td></tr>`).join('') + '</table>';
}

async function runSelftest() {
  const btn = $('#btn-selftest');
  btn.disabled = true;
  $('#selftest').textContent = 'Testing: watch the board’s LEDs…';
  try {
    renderSelftest(await api('/api/hardware/selftest', { seconds: 2, leds: true }));
  } catch (e) {
    $('#selftest').textContent = '';
    say(e.status === 401 ? 'Pair this phone with the board first.' : e.message, 'error');
    if (e.status === 401) showPair(true);
  } finally {
    btn.disabled = false;
  }
}

const CALIB_STATES = { running: 'Calibrating: the game waits.', done: 'Calibration finished.',
  stopped: 'Calibration stopped: nothing was written.', failed: 'Calibration failed.' };

let calibSeq = -1;   // the newest calibration status shown: a push and an HTTP answer may cross

function renderCalib(c) {
  if (typeof c.seq === 'number') {
    if (c.seq < calibSeq && c.state !== 'idle') return;
    calibSeq = c.seq;
  }
  $('#calib-refused').hidden = !c.refused;
  $('#calib-refused').textContent = c.refused ? `Calibration: ${c.refused}.` : '';
  $('#calib-form').hidden = !!c.refused || c.state === 'running';
  $('#calib').hidden = c.state === 'idle';
  $('#calib-state').textContent = (CALIB_STATES[c.state] || '') + (c.error && c.state !== 'stopped' ? ` ${c.error}` : '');
  $('#calib-stop').hidden = c.state !== 'running';
  const fill = c.squares || [];
  $('#calib-fill').hidden = !fill.length;
  $('#calib-fill').textContent = fill.length ? `Put a piece on ${fill.join(', ')}` : '';
  const b = state && state.board;
  if (b && fill.length) {
    const name = (f, r) => String.fromCharCode(97 + f) + (r + 1);
    let html = '';
    for (let r = b.ranks - 1; r >= 0; r--) {
      html += '<tr>';
      for (let f = 0; f < b.files; f++) html += `<td class="${fill.includes(name(f, r)) ? 'fill' : ''}" title="${name(f, r)}"></td>`;
      html += '</tr>';
    }
    $('#calib-grid').innerHTML = html;
  } else $('#calib-grid').innerHTML = '';
  $('#calib-answer').hidden = !c.question;
  $('#calib-question').textContent = c.question || '';
  const lines = c.state === 'running' ? (c.lines || []).slice(-8) : (c.lines || []).slice(-(c.report || []).length - 2);
  $('#calib-lines').innerHTML = lines.map((l) => `<li>${esc(l.text)}</li>`).join('');
}

async function calibApi(path, body) {
  try {
    const r = await api(path, body);
    if (r.calibrate) renderCalib(r.calibrate);
  } catch (e) {
    say(e.status === 401 ? 'Pair this phone with the board first.' : e.message, 'error');
    if (e.status === 401) showPair(true);
  }
}

async function newGame(e) {
  e.preventDefault();
  try {
    const who = (side, dflt) => $(`#nv-${side}-who`).value || $(`#nv-${side}`).value || dflt;
    const body = { variant: $('#nv-variant').value, white: who('white', 'White'), black: who('black', 'Black') };
    const tc = $('#nv-clock').value === 'custom' ? $('#nv-clock-custom').value.trim() : $('#nv-clock').value;
    body.clock = tc || '-';
    if (body.clock !== '-') body.clock_mode = $('#nv-clock-mode').value;
    await api('/api/new', body);
    say('New game started: set up the board as the LEDs show.');
    showTab('play');
  } catch (err) {
    say(err.status === 401 ? 'Pair this phone with the board first.' : err.message, 'error');
    if (err.status === 401) showPair(true);
  }
}

async function loadGames() {
  const r = await api('/api/games');
  $('#gamelist').innerHTML = r.games.slice().reverse().map((g) => g.damaged
    ? `<li class="damaged">${esc(g.id)} – damaged: ${esc(g.error)}</li>`
    : `<li><button class="link" data-game="${esc(g.id)}">${esc(g.id)}</button> ${esc(g.variant)}, ` +
      `${esc((g.players || {}).white || '?')} – ${esc((g.players || {}).black || '?')}, ${esc(g.result || 'playing')}, ${g.actions} actions ` +
      `<a href="/api/games/${encodeURIComponent(g.id)}/pgn" download>PGN</a></li>`).join('') || '<li>No games yet.</li>';
  for (const b of document.querySelectorAll('#gamelist button[data-game]')) b.onclick = () => openGame(b.dataset.game);
}

async function openGame(id) {
  const d = await api('/api/games/' + encodeURIComponent(id));
  if (!viewer) viewer = { board: createBoard($('#viewboard'), {}) };
  viewer.detail = d;
  viewer.index = d.positions.length - 1;
  viewer.analysis = null;
  $('#viewer').hidden = false;
  showAnalysis({ id, state: 'loading', turns: [], swings: [] });     // no Analyse button until it is known
  showPosition();
  api(`/api/games/${encodeURIComponent(id)}/analysis`).then(showAnalysis)
    .catch(() => showAnalysis({ id, state: 'none', turns: [], swings: [] }));
}

// -- the evaluation graph of a saved game (POST /api/games/ID/analyse, GET .../analysis) -----------
const GRAPH_CLAMP = 1000;     // centipawns drawn at most (a mate is drawn at the edge)
let analysisPoll = null;

async function startAnalysis() {
  if (!viewer || !viewer.detail) return;
  const id = viewer.detail.id;
  try {
    const r = await api(`/api/games/${encodeURIComponent(id)}/analyse`, {});
    showAnalysis(r.analysis);
  } catch (e) {
    if (e.status === 401) { say('Pair this phone with the board first (the Pair button).', 'error'); showPair(true); } else say(e.message, 'error');
  }
}

function showAnalysis(a) {
  if (!a || !viewer || !viewer.detail || a.id !== viewer.detail.id) return;
  viewer.analysis = a;
  const btn = $('#btn-analyse');
  const note = $('#analysis-note');
  btn.hidden = a.state === 'running' || a.state === 'done' || a.state === 'loading';
  btn.textContent = a.state === 'failed' ? 'Analyse again' : 'Analyse';
  note.textContent = a.state === 'running' ? `Analysing with ${a.engine}: ${a.done} of ${a.total} moves…`
    : a.state === 'done' ? `Judged by ${a.engine}, ${a.seconds} s a position; big swings (150 centipawns or more lost, a mate appearing) marked red.`
      : a.state === 'failed' ? `The analysis failed: ${a.error}` : '';
  note.dataset.state = a.state;
  clearTimeout(analysisPoll);
  if (a.state === 'running') {
    analysisPoll = setTimeout(() => {
      api(`/api/games/${encodeURIComponent(a.id)}/analysis`).then(showAnalysis).catch(() => {});
    }, 1000);
  }
  drawGraph();
}

// White's point of view, clamped: up is White better
function graphPoints(a) {
  const pts = [{ ply: 0, cp: a.start_cp, mate: null, mark: '', san: 'start' }];
  for (const t of a.turns) pts.push(t);
  return pts.filter((p) => p.cp !== null && p.cp !== undefined);
}

function drawGraph() {
  const el = $('#evalgraph');
  const a = viewer && viewer.analysis;
  if (!a || !a.turns.length) { el.hidden = true; el.innerHTML = ''; $('#swings').hidden = true; return; }
  const W = 320, H = 120, P = 10;
  const last = viewer.detail.positions.length - 1;
  const x = (ply) => P + (W - 2 * P) * (last ? ply / last : 0);
  const y = (cp) => H / 2 - (Math.max(-GRAPH_CLAMP, Math.min(GRAPH_CLAMP, cp)) / GRAPH_CLAMP) * (H / 2 - P);
  const pts = graphPoints(a);
  const line = pts.map((p) => `${x(p.ply).toFixed(1)},${y(p.cp).toFixed(1)}`).join(' ');
  const area = `M${x(pts[0].ply).toFixed(1)},${y(0)} L${line.replace(/ /g, ' L')} L${x(pts[pts.length - 1].ply).toFixed(1)},${y(0)} Z`;
  const at = viewer.index;
  const label = (p) => `${p.ply ? (viewer.detail.positions[p.ply] || {}).label || p.san : 'start'}${p.mark || ''}: ${scoreText(p.cp, p.mate)}`;
  el.innerHTML = `<svg viewBox="0 0 ${W} ${H}" role="img" aria-label="evaluation after each move, White up">` +
    `<rect class="g-white" x="0" y="0" width="${W}" height="${H / 2}"/><rect class="g-black" x="0" y="${H / 2}" width="${W}" height="${H / 2}"/>` +
    `<path class="g-area" d="${area}"/><line class="g-zero" x1="0" x2="${W}" y1="${y(0)}" y2="${y(0)}"/>` +
    `<polyline class="g-line" points="${line}"/>` +
    `<line class="g-cursor" x1="${x(at)}" x2="${x(at)}" y1="0" y2="${H}"/>` +
    pts.map((p) => `<g class="pt${p.mark ? ' swing' : ''}${p.ply === at ? ' current' : ''}" data-ply="${p.ply}" data-mark="${esc(p.mark || '')}">` +
      `<title>${esc(label(p))}</title><circle class="hit" cx="${x(p.ply).toFixed(1)}" cy="${y(p.cp).toFixed(1)}" r="7"/>` +
      `<circle class="dot" cx="${x(p.ply).toFixed(1)}" cy="${y(p.cp).toFixed(1)}" r="${p.mark ? 4.5 : 2.2}"/></g>`).join('') +
    '</svg>';
  el.hidden = false;
  for (const g of el.querySelectorAll('g.pt')) g.onclick = () => { viewer.index = Number(g.dataset.ply); showPosition(); };
  const swings = a.turns.filter((t) => t.mark);
  $('#swings').hidden = a.state !== 'done';
  $('#swings').innerHTML = swings.length
    ? 'Big swings: ' + swings.map((t) => `<button type="button" class="swing" data-ply="${t.ply}">${esc(label(t))}</button>`).join(' ')
    : 'No big swings.';
  for (const b of document.querySelectorAll('#swings button[data-ply]')) b.onclick = () => { viewer.index = Number(b.dataset.ply); showPosition(); };
}

// A saved game is drawn with its own pieces (its catalog, not the game being played), its moves
// listed by name and number (a tap goes to that position), the last move marked as the board
// marks it.
function showPosition() {
  const d = viewer.detail;
  const p = d.positions[viewer.index];
  const leds = {};
  for (const sq of (p.move || '').match(/[a-p]\d+/g) || []) {
    if (!d.board.holes.includes(sq)) leds[sq] = { color: '#3c2d00', blink: 'steady', layer: 'last move', meaning: 'the last move' };
  }
  viewer.board.update({ files: d.board.files, ranks: d.board.ranks, holes: d.board.holes, pieces: p.pieces,
    leds, catalog: d.catalog || (state ? state.catalog : []), movable: false, letters });
  $('#viewtitle').textContent = `${d.id}: ${d.variant}, ${(d.players || {}).white} – ${(d.players || {}).black}, ${d.result || 'playing'}`;
  $('#viewpos').textContent = viewer.index === 0 ? 'start' : (p.label || p.san || p.move);
  $('#viewmoves').innerHTML = d.positions.slice(1).map((q, i) =>
    `<button type="button" class="vm${i + 1 === viewer.index ? ' current' : ''}" data-index="${i + 1}">${esc(q.label || q.san || q.move)}</button>`).join(' ') +
    (d.error ? ` <small class="bad">${esc(d.error)}</small>` : '');
  for (const b of document.querySelectorAll('#viewmoves button[data-index]')) b.onclick = () => { viewer.index = Number(b.dataset.index); showPosition(); };
  // the engine's score of the position shown, once the game is analysed
  const a = viewer.analysis;
  const t = a && (viewer.index === 0 ? { cp: a.start_cp, mate: null } : a.turns.find((x) => x.ply === viewer.index));
  if (t && t.cp !== null && t.cp !== undefined) $('#viewpos').textContent += ` (${scoreText(t.cp, t.mate)}${t.mark || ''})`;
  drawGraph();
}

function showTab(name) {
  for (const t of document.querySelectorAll('.tab')) t.hidden = t.id !== `tab-${name}`;
  for (const b of document.querySelectorAll('nav button')) b.classList.toggle('active', b.dataset.tab === name);
  if (name === 'games') loadGames().catch((e) => say(e.message, 'error'));
  if (name === 'new') {
    showClockForm(true); loadVariants().catch((e) => say(e.message, 'error')); loadSchedule().catch(() => {});
    loadRemoteBoards();
  }
  if (name === 'hardware') loadHardware().catch((e) => say(e.message, 'error'));
}

// -- wiring ------------------------------------------------------------------------------------------
$('#btn-pass').onclick = () => command('pass');
// the press names the side whose clock it stops: a clock switched meanwhile refuses it
$('#btn-press').onclick = () => { const side = $('#btn-press').dataset.side; if (side) command(`press ${side}`); };
$('#btn-clock-start').onclick = () => command('clock start');
$('#btn-clock-pause').onclick = () => command('clock pause');
$('#btn-end').onclick = () => command('end');
$('#btn-takeback').onclick = () => command('takeback');
$('#btn-resign').onclick = () => askResign();
$('#btn-draw').onclick = () => command('draw');
$('#btn-hint').onclick = () => askHint();
$('#btn-eval').onclick = () => switchEval();
$('#btn-analyse').onclick = () => startAnalysis();
$('#btn-letters').onclick = () => { letters = !letters; $('#btn-letters').classList.toggle('active', letters); if (state) render(state); };
$('#btn-flip').onclick = () => board.flip();
$('#btn-alerts').onclick = () => {
  alertsOn = !alertsOn;
  localStorage.setItem('fairyboard.alerts', alertsOn ? 'on' : 'off');
  showAlertsButton();
  if (alertsOn) beep();
};
showAlertsButton();
$('#btn-selftest').onclick = runSelftest;
$('#calib-form').onsubmit = (e) => {
  e.preventDefault();
  const squares = $('#calib-squares').value.split(/[\s,]+/).filter((q) => q && q !== 'all');
  calibApi('/api/calibrate/start', { squares, leds: $('#calib-leds').checked });
};
$('#calib-answer').onsubmit = (e) => {
  e.preventDefault();
  calibApi('/api/calibrate/answer', { text: $('#calib-text').value });
  $('#calib-text').value = '';
};
for (const btn of document.querySelectorAll('#calib-answer button[data-answer]')) {
  btn.onclick = () => calibApi('/api/calibrate/answer', { text: btn.dataset.answer });
}
$('#calib-stop').onclick = () => calibApi('/api/calibrate/stop', {});
$('#pairbtn').onclick = pair;
$('#pairclose').onclick = () => showPair(false);
$('#loginform').onsubmit = async (e) => {
  e.preventDefault();
  try {
    await api('/api/login', { password: $('#password').value });
    state.paired = true;
    render(state);
    showPair(false);
  } catch (err) { say(err.message, 'error'); }
};
$('#newform').onsubmit = newGame;
$('#view-prev').onclick = () => { if (viewer.index > 0) { viewer.index--; showPosition(); } };
$('#view-next').onclick = () => { if (viewer.index < viewer.detail.positions.length - 1) { viewer.index++; showPosition(); } };
$('#view-first').onclick = () => { viewer.index = 0; showPosition(); };
$('#view-last').onclick = () => { viewer.index = viewer.detail.positions.length - 1; showPosition(); };
for (const b of document.querySelectorAll('nav button')) b.onclick = () => showTab(b.dataset.tab);
for (const b of document.querySelectorAll('#simtools button[data-tool]')) b.onclick = () => setTool(b.dataset.tool);
$('#cmdform').onsubmit = (e) => { e.preventDefault(); const t = $('#cmd').value.trim(); if (t) command(t); $('#cmd').value = ''; };

api('/api/state').then(render).catch(() => {});
connect();
