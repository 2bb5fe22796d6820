"""Move tables: every piece type's moves compiled once per variant into bitboards per square.

The move generator never looks at Betza text: it reads these tables. For each piece type and
colour:

* ``lm[sq]`` / ``lc[sq]``: squares a plain leap reaches to move / to capture;
* ``rides``: (direction, move, capture, limit) slides, resolved with ray tables: the first
  blocker along a ray is the lowest set bit (directions that increase the square index) or
  the highest (the others), and ``ray[d][sq] ^ ray[d][blocker]`` are the squares up to it;
* ``hops``: cannon-like slides over exactly one screen;
* ``lame[sq]`` and ``bent[sq]``: lame and initial-only leaps, and bent (Griffin-like) paths,
  as tuples of (target, block mask, ...) and (first step, direction, near mask, ...).

Reverse tables (which squares attack ``sq``) make attack detection cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .betza import bent_continuations, parse_betza
from .geometry import Geometry


@dataclass(slots=True)
class PieceTables:
    """Compiled moves of one piece type for one colour."""

    lm: list[int]                 # plain leaps that may move (per square)
    lc: list[int]                 # plain leaps that may capture
    rides: tuple                  # (dir, move, capture, limit)
    hops: tuple                   # (dir, move, capture)
    lame: list[tuple]             # per square: ((target, block_mask, move, capture, initial), ...)
    bent: list[tuple]             # per square: ((first_sq, dir, near_mask, move, capture), ...)
    rev_lc: list[int]             # squares from which a plain capture-leap reaches sq
    rev_ride: list[int]           # union of capture-ride rays from sq in reverse directions
    has_special: bool             # hoppers or bent riders (lame leaps are handled inline)
    slides: tuple = ()            # (rays, positive) of unlimited move+capture rides (fast path)
    other_rides: tuple = ()       # the remaining rides: (dir, move, capture, limit)
    setwise: tuple | None = None  # leaps as whole-bitboard shifts (see setwise_leaps), or None
    slide_mask: list = field(default_factory=list)   # per square: the squares whose occupancy decides ``slides``
    slide_cache: list = field(default_factory=list)  # per square: {occupancy & slide_mask: squares the slides reach}


class Tables:
    """All compiled tables of a variant's geometry and pieces."""

    def __init__(self, geometry: Geometry, pieces):
        self.geometry = g = geometry
        self.dirs: list[tuple[int, int]] = []
        self.dir_index: dict[tuple[int, int], int] = {}
        self.ray: list[list[int]] = []          # ray[d][sq]: full ray (stops at edge or hole)
        self.positive: list[bool] = []
        self.limited: dict[tuple[int, int], list[int]] = {}
        self.pieces = [[self._compile(p, color) for p in pieces] for color in (0, 1)]
        # Lines from a square (all rider directions in use): for pin / danger detection.
        self.any_line = [0] * g.size
        for d in range(len(self.dirs)):
            for sq in range(g.size):
                self.any_line[sq] |= self.ray[d][sq]
        self.opposite = [self.dir_index.get((-dx, -dy), -1) for dx, dy in self.dirs]
        # A bitboard of each rank, for promotion zones and initial ranks.
        self.rank_mask = [sum(1 << g.square(f, r) for f in range(g.files) if g.on_board(f, r))
                          for r in range(g.ranks)]
        self.bit = [1 << sq for sq in range(g.size)]

    # -- geometry helpers ------------------------------------------------------------------
    def direction(self, dx: int, dy: int) -> int:
        key = (dx, dy)
        if key in self.dir_index:
            return self.dir_index[key]
        g = self.geometry
        d = len(self.dirs)
        self.dirs.append(key)
        self.dir_index[key] = d
        self.positive.append(dy > 0 or (dy == 0 and dx > 0))
        rays = []
        for sq in range(g.size):
            bb = 0
            if sq not in g.holes:
                f, r = sq % g.files, sq // g.files
                f, r = f + dx, r + dy
                while g.on_board(f, r):
                    bb |= 1 << g.square(f, r)
                    f, r = f + dx, r + dy
            rays.append(bb)
        self.ray.append(rays)
        # make sure the opposite direction exists too (attack detection walks backwards)
        if (-dx, -dy) not in self.dir_index:
            self.direction(-dx, -dy)
        return d

    def limited_ray(self, d: int, limit: int) -> list[int]:
        key = (d, limit)
        if key not in self.limited:
            g = self.geometry
            dx, dy = self.dirs[d]
            out = []
            for sq in range(g.size):
                bb = 0
                if sq not in g.holes:
                    f, r = sq % g.files, sq // g.files
                    for _ in range(limit):
                        f, r = f + dx, r + dy
                        if not g.on_board(f, r):
                            break
                        bb |= 1 << g.square(f, r)
                out.append(bb)
            self.limited[key] = out
        return self.limited[key]

    def first_blocker(self, d: int, b: int) -> int:
        if self.positive[d]:
            return (b & -b).bit_length() - 1
        return b.bit_length() - 1

    # -- compiling a piece -----------------------------------------------------------------
    def _compile(self, piece, color: int) -> PieceTables:
        g = self.geometry
        size = g.size
        sign = 1 if color == 0 else -1
        lm, lc = [0] * size, [0] * size
        lame: list[list] = [[] for _ in range(size)]
        bent: list[list] = [[] for _ in range(size)]
        rides, hops = [], []
        for comp in parse_betza(piece.betza).components:
            vecs = [(dx, dy * sign) for dx, dy in comp.vectors]
            if comp.kind == "leap" and not comp.lame and not comp.initial:
                for sq in range(size):
                    if sq in g.holes:
                        continue
                    f, r = sq % g.files, sq // g.files
                    for dx, dy in vecs:
                        if g.on_board(f + dx, r + dy):
                            t = 1 << g.square(f + dx, r + dy)
                            if comp.move:
                                lm[sq] |= t
                            if comp.capture:
                                lc[sq] |= t
            elif comp.kind == "leap":
                for sq in range(size):
                    if sq in g.holes:
                        continue
                    f, r = sq % g.files, sq // g.files
                    if comp.initial and r != (1 if color == 0 else g.ranks - 2):
                        continue  # "i" moves: only from the initial (pawn) rank
                    for dx, dy in vecs:
                        if not g.on_board(f + dx, r + dy):
                            continue
                        block = 0
                        if comp.lame:
                            path = _lame_path(dx, dy)
                            if any(not g.on_board(f + px, r + py) for px, py in path):
                                continue  # a hole on the way blocks a lame leaper
                            for px, py in path:
                                block |= 1 << g.square(f + px, r + py)
                        lame[sq].append((g.square(f + dx, r + dy), block, comp.move, comp.capture, comp.initial))
            elif comp.kind in ("ride", "hop"):
                for dx, dy in vecs:
                    d = self.direction(dx, dy)
                    if comp.kind == "ride":
                        rides.append((d, comp.move, comp.capture, comp.limit))
                    else:
                        hops.append((d, comp.move, comp.capture))
            else:  # bent
                for sq in range(size):
                    if sq in g.holes:
                        continue
                    f, r = sq % g.files, sq // g.files
                    for dx, dy in vecs:
                        if not g.on_board(f + dx, r + dy):
                            continue
                        first = g.square(f + dx, r + dy)
                        for cx, cy in bent_continuations((dx, dy), comp.then_atom):
                            d = self.direction(cx, cy)
                            near = self.limited_ray(d, comp.then_min - 1)[first] if comp.then_min > 1 else 0
                            bent[sq].append((first, d, near, comp.move, comp.capture))
        # Merge duplicate ride entries (e.g. "QR"): same direction and limit.
        merged: dict[tuple[int, int], list[bool]] = {}
        for d, mv, cp, lim in rides:
            cur = merged.setdefault((d, lim), [False, False])
            cur[0] |= mv
            cur[1] |= cp
        rides_t = tuple((d, mv, cp, lim) for (d, lim), (mv, cp) in merged.items())
        rev_lc = [0] * size
        for sq in range(size):
            bb = lc[sq]
            while bb:
                low = bb & -bb
                rev_lc[low.bit_length() - 1] |= 1 << sq
                bb ^= low
        has_special = any(bent) or bool(hops)   # lame leaps are handled inline
        return PieceTables(
            lm=lm, lc=lc, rides=rides_t, hops=tuple(hops),
            lame=[tuple(x) for x in lame], bent=[tuple(x) for x in bent],
            rev_lc=rev_lc, rev_ride=[0] * size,
            has_special=has_special,
        )

    def finish(self) -> None:
        """Fill reverse ride unions once every direction exists."""
        for color in (0, 1):
            for pt in self.pieces[color]:
                rev = [0] * self.geometry.size
                for d, mv, cp, lim in pt.rides:
                    if not cp:
                        continue
                    od = self.opposite[d]
                    rays = self.ray[od] if lim == 0 else self.limited_ray(od, lim)
                    for sq in range(self.geometry.size):
                        rev[sq] |= rays[sq]
                for d, mv, cp in pt.hops:
                    if cp:
                        od = self.opposite[d]
                        for sq in range(self.geometry.size):
                            rev[sq] |= self.ray[od][sq]
                pt.rev_ride = rev
                pt.slides = tuple((self.ray[d], self.positive[d]) for d, mv, cp, lim in pt.rides
                                  if mv and cp and lim == 0)
                pt.other_rides = tuple(r for r in pt.rides if not (r[1] and r[2] and r[3] == 0))
                pt.setwise = setwise_leaps(self.geometry, pt)
                # A ray's last square never blocks anything behind it: leave it out of the key.
                masks = []
                for sq in range(self.geometry.size):
                    m = 0
                    for d, mv, cp, lim in pt.rides:
                        if mv and cp and lim == 0:
                            r = self.ray[d][sq]
                            if r:
                                last = (r & -r) if not self.positive[d] else 1 << (r.bit_length() - 1)
                                m |= r & ~last
                    masks.append(m)
                pt.slide_mask = masks
                pt.slide_cache = [{} for _ in range(self.geometry.size)]


SLIDE_CACHE_LIMIT = 4096   # entries per square and piece type; the cache starts over beyond


def slide_targets(pt: PieceTables, sq: int, occ: int) -> int:
    """Squares the unlimited slides of ``pt`` reach from ``sq`` (up to and including the first
    piece on each ray), looked up by the occupancy of the squares that matter, computed ray
    by ray the first time."""
    key = occ & pt.slide_mask[sq]
    cache = pt.slide_cache[sq]
    att = cache.get(key)
    if att is None:
        att = 0
        for rays, pos_dir in pt.slides:
            r = rays[sq]
            b = r & occ
            if b:
                r ^= rays[(b & -b).bit_length() - 1 if pos_dir else b.bit_length() - 1]
            att |= r
        if len(cache) >= SLIDE_CACHE_LIMIT:
            cache.clear()
        cache[key] = att
    return att


def setwise_leaps(g: Geometry, pt: PieceTables):
    """A leaper's moves as shifts of a whole bitboard of such pieces, when it has one way to
    each target: ``((shift, sources, blocks, move, capture, initial), ...)``; every piece on
    ``sources`` reaches ``square + shift`` when each ``square + b`` (b in ``blocks``) is empty.
    None for pieces that ride, hop or bend, or that reach a square two ways (counting their
    moves vector by vector would count such a square twice)."""
    if pt.rides or pt.hops or any(pt.bent):
        return None
    vec: dict[tuple, list] = {}    # ("leap", (dx, dy)) or ("lame", (dx, dy), blocks, ...) -> [...]

    def rel(sq, to):
        return (g.file_of(to) - g.file_of(sq), g.rank_of(to) - g.rank_of(sq))

    for sq in range(g.size):
        for bb, is_move in ((pt.lm[sq], True), (pt.lc[sq], False)):
            while bb:
                low = bb & -bb
                bb ^= low
                key: tuple = ("leap", rel(sq, low.bit_length() - 1))
                e = vec.setdefault(key, [0, (), set(), set(), False])
                e[0] |= 1 << sq
                (e[2] if is_move else e[3]).add(sq)
        for to, block, mv, cp, init in pt.lame[sq]:
            blocks = tuple(sorted((b.bit_length() - 1) - sq for b in _singles(block)))
            key = ("lame", rel(sq, to), blocks, mv, cp, init)
            e = vec.setdefault(key, [0, blocks, {sq}, {sq}, init])
            e[0] |= 1 << sq
    out = []
    seen = set()
    for key, (sources, blocks, movers, capturers, init) in vec.items():
        if key[1] in seen:
            return None
        seen.add(key[1])
        dx, dy = key[1]
        if key[0] == "leap":
            every = {b.bit_length() - 1 for b in _singles(sources)}
            mv, cp = movers == every, capturers == every
            if not (mv or cp) or (movers and not mv) or (capturers and not cp):
                return None    # moves on some squares, captures on others: not one shift
        else:
            mv, cp = key[3], key[4]
        out.append((dy * g.files + dx, sources, blocks, mv, cp, init))
    return tuple(out)


def _singles(bb: int):
    while bb:
        low = bb & -bb
        yield low
        bb ^= low


def _lame_path(dx: int, dy: int) -> list[tuple[int, int]]:
    """Squares a lame leap passes: orthogonal steps along the long leg first, then diagonal.

    (2,1) -> (1,0): the Xiangqi horse; (2,0) -> (1,0): the pawn's double step; (2,2) -> (1,1).
    """
    ax, ay = abs(dx), abs(dy)
    sx = (dx > 0) - (dx < 0)
    sy = (dy > 0) - (dy < 0)
    path = []
    x = y = 0
    if ax >= ay:
        for _ in range(ax - ay):
            x += sx
            path.append((x, y))
    else:
        for _ in range(ay - ax):
            y += sy
            path.append((x, y))
    while (x, y) != (dx, dy):
        x += sx if x != dx else 0
        y += sy if y != dy else 0
        if (x, y) != (dx, dy):
            path.append((x, y))
    return path[:-1] if path and path[-1] == (dx, dy) else path


_CACHE: dict = {}


def tables_for(variant) -> Tables:
    """The compiled tables of a variant (built once, then shared)."""
    key = (variant.geometry, tuple((p.betza, p.name) for p in variant.pieces))
    t = _CACHE.get(key)
    if t is None:
        t = Tables(variant.geometry, variant.pieces)
        t.finish()
        _CACHE[key] = t
    return t
