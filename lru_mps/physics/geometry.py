"""Arrays on a coupling graph: which pairs of transmons are coupled, and where the sites sit.

An array is a connected graph: L sites (qutrits) and the edges (i, j), i < j, that carry a hopping
J_e (a_i^dag a_j + h.c.).  The chain's conventions are kept by numbering: the coding qubit (the start
site) is index 0 and the reset sites are the last ``resets`` indices (one on the chain: L - 1), so every
reset, observable and store written for the chain stays valid on a graph.  :meth:`Geometry.relabel`
renumbers a geometry so that a chosen start site comes first and the chosen reset sites last; the
permutation is recorded (``labels``: the original index of every new site) so that per-site results map
back to coordinates.

Constructors: :func:`chain` (edges (l, l+1), coordinates (0, l)), :func:`ladder` (2 x n),
:func:`grid` (R x C, rows of C sites numbered row by row); :func:`parse` reads the user's text
``chain``, ``ladder:N`` or ``grid:RxC`` (a chain's length is the spec's L).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, require

NAME = "geometry"
ALLOWED = ("chain, ladder:N (2 x N sites, N >= 1), grid:RxC (R rows of C sites, R, C >= 1, R C >= 2) or "
           "lru-grid:RxC[:PLACE[:ARM]] (an R x C grid of coding transmons, R, C >= 2, with LRUs of ARM transmons, "
           "default 2, at PLACE: corners (default), sides or boundary)")


@dataclass(frozen=True)
class Geometry:
    """A connected coupling graph of ``L`` sites (0-based), its ``edges`` (i, j), i < j, and per-site
    ``coords`` (row, col); ``labels[k]``: the index site k had before any :meth:`relabel` (identity if none);
    ``resets``: how many sites, the last indices, carry the reset channels (:attr:`reset_sites`)."""

    name: str
    L: int
    edges: tuple
    coords: tuple
    labels: tuple | None = None
    resets: int = 1

    def __post_init__(self):
        L = self.L
        require(isinstance(L, (int, np.integer)) and L >= 2, NAME, self.name, "at least 2 sites")
        edges = []
        for e in self.edges:
            require(len(e) == 2, NAME, self.name, "edges as (i, j) pairs of sites")
            i, j = int(e[0]), int(e[1])
            require(0 <= i < L and 0 <= j < L and i != j, NAME, self.name,
                    f"edges (i, j) with 0 <= i, j < L = {L} and i != j", f"edge {e!r}")
            edges.append((min(i, j), max(i, j)))
        require(len(set(edges)) == len(edges), NAME, self.name, "each edge once")
        object.__setattr__(self, "edges", tuple(edges))
        coords = tuple((int(r), int(c)) for r, c in self.coords)
        require(len(coords) == L, NAME, self.name, f"one (row, col) coordinate per site ({L})")
        object.__setattr__(self, "coords", coords)
        labels = tuple(range(L)) if self.labels is None else tuple(int(x) for x in self.labels)
        require(sorted(labels) == list(range(L)), NAME, self.name, "labels: a permutation of the sites")
        object.__setattr__(self, "labels", labels)
        require(_connected(L, edges), NAME, self.name, "a connected graph (every site reachable from site 0)")
        require(isinstance(self.resets, (int, np.integer)) and 1 <= self.resets <= L - 1, NAME, self.name,
                f"1 to L - 1 = {L - 1} reset sites (the start site is not one)", f"resets={self.resets!r}")
        object.__setattr__(self, "resets", int(self.resets))

    @property
    def reset_sites(self) -> tuple:
        """The indices of the reset sites: the last :attr:`resets` ones."""
        return tuple(range(self.L - self.resets, self.L))

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    @property
    def is_chain(self) -> bool:
        """True when the edges are exactly the chain's (l, l+1), l = 0..L-2, in that order, with one reset site
        (the last): the chain every chain-only method (MPS, the tridiagonal and log-space rates) takes."""
        return self.resets == 1 and self.edges == tuple((l, l + 1) for l in range(self.L - 1))

    def degrees(self) -> np.ndarray:
        """The number of neighbours of every site."""
        deg = np.zeros(self.L, dtype=int)
        for i, j in self.edges:
            deg[i] += 1
            deg[j] += 1
        return deg

    def distance(self, a: int, b: int) -> int:
        """The graph distance (fewest edges) between sites ``a`` and ``b``."""
        return int(self.distances(a)[b])

    def distances(self, a: int) -> np.ndarray:
        """The graph distance (fewest edges) from site ``a`` to every site (L,)."""
        nbrs = {k: [] for k in range(self.L)}
        for i, j in self.edges:
            nbrs[i].append(j)
            nbrs[j].append(i)
        dist, todo = {a: 0}, [a]
        while todo:
            nxt = []
            for k in todo:
                for m in nbrs[k]:
                    if m not in dist:
                        dist[m] = dist[k] + 1
                        nxt.append(m)
            todo = nxt
        return np.array([dist[k] for k in range(self.L)])

    def reset_distance(self, a: int = 0) -> int:
        """The fewest edges from site ``a`` to the nearest reset site."""
        return int(min(self.distances(a)[list(self.reset_sites)]))

    def adjacency(self, couplings=None) -> np.ndarray:
        """The L x L adjacency matrix, entry (i, j) = (j, i) = the coupling of edge (i, j) (1 when None)."""
        J = np.ones(self.n_edges) if couplings is None else np.asarray(couplings, dtype=float)
        A = np.zeros((self.L, self.L))
        for (i, j), x in zip(self.edges, J):
            A[i, j] = A[j, i] = x
        return A

    def symmetries(self, limit: int = 100_000) -> list[tuple[int, ...]]:
        """Every symmetry of the array with its LRUs: the permutations p of the sites (p[k] the image of site k)
        that map the edges onto the edges and the reset sites onto the reset sites (the graph's automorphisms that
        keep the set of reset sites), the identity first.  Coordinates play no part (an arm drawn upward at one
        corner may map to an arm drawn sideways at another).

        Backtracking over the sites in breadth-first order: a site's image must have the same invariant (reset or
        not, the sorted distances to every site and to the reset sites) and the same distance to every image
        placed so far; on a grid the first few placements fix the rest.  At most ``limit`` of them (a graph with
        more, e.g. a star of many arms, is refused naming the geometry).
        """
        L = self.L
        dist = np.array([self.distances(a) for a in range(L)])
        resets = set(self.reset_sites)
        inv = [(k in resets, tuple(sorted(dist[k])), tuple(sorted(dist[k, list(resets)]))) for k in range(L)]
        start = min(range(L), key=lambda k: (sum(inv[m] == inv[k] for m in range(L)), k))
        order = [int(k) for k in np.argsort(dist[start], kind="stable")]
        image = [-1] * L
        used = [False] * L
        found: list[tuple[int, ...]] = []

        def place(i: int) -> None:
            if i == L:
                require(len(found) < limit, NAME, self.name, f"a layout with at most {limit} symmetries")
                found.append(tuple(image))
                return
            u = order[i]
            placed = order[:i]
            for w in range(L):
                if used[w] or inv[w] != inv[u] or any(dist[u, v] != dist[w, image[v]] for v in placed):
                    continue
                image[u], used[w] = w, True
                place(i + 1)
                image[u], used[w] = -1, False

        place(0)
        found.sort(key=lambda p: p != tuple(range(L)))
        return found

    def site_classes(self, sites) -> list[list[int]]:
        """``sites`` grouped into classes of sites that a symmetry (:meth:`symmetries`) maps onto each other, each
        class in the order of ``sites``, the classes in the order of their first site."""
        sites = [int(k) for k in sites]
        autos = self.symmetries()
        out, seen = [], set()
        for k in sites:
            if k in seen:
                continue
            orbit = {p[k] for p in autos}
            cls = [m for m in sites if m in orbit]
            seen.update(cls)
            out.append(cls)
        return out

    def relabel(self, start: int, reset) -> "Geometry":
        """The same graph renumbered so that site ``start`` is index 0 and the reset site(s) the last indices.

        ``reset``: one site index or a sequence of them (several reset sites, in that order at the end).
        The other sites keep their relative order.  ``start`` and ``reset`` are indices of this
        geometry; the result's ``labels`` map every new index to the original one (composed with this
        geometry's own labels).
        """
        L = self.L
        resets = [reset] if isinstance(reset, (int, np.integer)) else list(reset)
        for name, s in [("start", start)] + [("reset", r) for r in resets]:
            require(isinstance(s, (int, np.integer)) and 0 <= s < L, NAME, f"{self.name} {name}={s}",
                    f"a site index 0..{L - 1}")
        require(start not in resets, NAME, f"{self.name} start={start} reset={resets}",
                "different start and reset sites")
        require(len(set(resets)) == len(resets) and resets, NAME, f"{self.name} reset={resets}",
                "at least one reset site, each once")
        order = [start] + [k for k in range(L) if k != start and k not in resets] + resets  # order[new] = old
        new_of = {old: new for new, old in enumerate(order)}
        edges = sorted((min(new_of[i], new_of[j]), max(new_of[i], new_of[j])) for i, j in self.edges)
        return Geometry(self.name, L, tuple(edges), tuple(self.coords[o] for o in order),
                        tuple(self.labels[o] for o in order), len(resets))

    def in_original_order(self, values) -> np.ndarray:
        """Per-site values (first axis: the sites in this numbering) put back in the original site order
        (before any :meth:`relabel`): ``out[labels[k]] = values[k]``."""
        values = np.asarray(values)
        require(values.shape[:1] == (self.L,), NAME, self.name, f"per-site values with a first axis of {self.L}")
        out = np.empty_like(values)
        out[list(self.labels)] = values
        return out

    def as_dict(self) -> dict:
        """JSON-friendly description (for a spec's parameters and cache key)."""
        out = {"geometry": self.name, "geometry_edges": [list(e) for e in self.edges],
               "geometry_coords": [list(c) for c in self.coords], "geometry_labels": list(self.labels)}
        if self.resets > 1:  # (one reset site: the keys as before, so the cache keys are unchanged)
            out["geometry_resets"] = self.resets
        return out


def _connected(L: int, edges) -> bool:
    seen, todo = {0}, [0]
    nbrs = {k: [] for k in range(L)}
    for i, j in edges:
        nbrs[i].append(j)
        nbrs[j].append(i)
    while todo:
        for m in nbrs[todo.pop()]:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return len(seen) == L


def chain(L: int) -> Geometry:
    """The paper's chain: edges (l, l+1), coordinates (0, l)."""
    L = int(L)
    return Geometry("chain", L, tuple((l, l + 1) for l in range(L - 1)), tuple((0, l) for l in range(L)))


def grid(R: int, C: int) -> Geometry:
    """R rows of C sites, site r C + c at (r, c), nearest neighbours coupled (no wrap-around)."""
    R, C = int(R), int(C)
    require(R >= 1 and C >= 1 and R * C >= 2, NAME, f"grid:{R}x{C}", ALLOWED)
    edges = []
    for r in range(R):
        for c in range(C):
            k = r * C + c
            if c + 1 < C:
                edges.append((k, k + 1))
            if r + 1 < R:
                edges.append((k, k + C))
    return Geometry(f"grid:{R}x{C}", R * C, tuple(sorted(edges)), tuple((r, c) for r in range(R) for c in range(C)))


def ladder(n: int) -> Geometry:
    """Two legs of n sites (a 2 x n grid)."""
    g = grid(2, n)
    return Geometry(f"ladder:{int(n)}", g.L, g.edges, g.coords)


#: where a grid of coding transmons carries its LRUs (:func:`lru_grid`)
LRU_PLACES = ("corners", "sides", "boundary")


def lru_grid(R: int, C: int, lrus: str = "corners", arm: int = 2) -> Geometry:
    """An R x C grid of coding transmons with LRUs on its boundary (docs/physics.md §3.4).

    Each LRU is an arm of ``arm`` transmons leading outward from a boundary site, the last of them the reset site
    (``arm`` = 2, a buffer and the reset site, puts a corner qubit as far from its LRU as the paper's L = 3 array
    puts its qubit).  ``lrus``: ``corners`` (an arm at each of the four corners), ``sides`` (at the middle site of
    each side) or ``boundary`` (at every boundary site).  Sites: the grid row by row (site r C + c at (r, c)),
    then each arm outward from its boundary site (coordinates outside the grid: above the top row, below the
    bottom one, left or right of the side columns); the reset sites are the last ``resets`` indices.
    """
    R, C, arm = int(R), int(C), int(arm)
    require(R >= 2 and C >= 2, NAME, f"lru-grid:{R}x{C}", "a grid of at least 2 x 2 coding sites")
    require(lrus in LRU_PLACES, "lrus", lrus, f"one of {', '.join(LRU_PLACES)}")
    require(1 <= arm <= 8, "lru_arm", arm, "1 to 8 transmons per LRU (the last one the reset site)")
    base = grid(R, C)
    if lrus == "corners":
        at = [(0, 0), (0, C - 1), (R - 1, 0), (R - 1, C - 1)]
    elif lrus == "sides":
        at = sorted({(0, (C - 1) // 2), ((R - 1) // 2, 0), ((R - 1) // 2, C - 1), (R - 1, (C - 1) // 2)})
    else:
        at = [(r, c) for r in range(R) for c in range(C) if r in (0, R - 1) or c in (0, C - 1)]
    edges, coords, L = list(base.edges), list(base.coords), base.L
    ends = []
    for r, c in at:
        dr, dc = (-1, 0) if r == 0 else (1, 0) if r == R - 1 else (0, -1) if c == 0 else (0, 1)
        prev = r * C + c
        for k in range(1, arm + 1):
            coords.append((r + k * dr, c + k * dc))
            edges.append((prev, L))
            prev = L
            L += 1
        ends.append(L - 1)
    g = Geometry(f"lru-grid:{R}x{C}:{lrus}:{arm}", L, tuple(sorted(edges)), tuple(coords))
    order = [k for k in range(L) if k not in ends] + ends  # the reset sites last, in the order of ``at``
    new_of = {old: new for new, old in enumerate(order)}
    edges = sorted((min(new_of[i], new_of[j]), max(new_of[i], new_of[j])) for i, j in g.edges)
    return Geometry(g.name, L, tuple(edges), tuple(coords[o] for o in order), None, len(ends))


def coding_sites(g: Geometry) -> list[int]:
    """The indices of an :func:`lru_grid`'s coding transmons (inside its grid), in the grid's row-by-row order."""
    m = re.fullmatch(r"lru-grid:(\d+)x(\d+):\w+:\d+", g.name)
    require(m is not None, NAME, g.name, "an lru-grid layout")
    R, C = int(m.group(1)), int(m.group(2))
    return [g.coords.index((r, c)) for r in range(R) for c in range(C)]


def parse(value, L: int | None = None) -> Geometry | None:
    """The geometry of a user's text: ``chain`` (needs ``L``; None when L is None: the spec's own chain),
    ``ladder:N``, ``grid:RxC``; a :class:`Geometry` or None passes through."""
    if value is None or isinstance(value, Geometry):
        return value
    text = str(value).strip().lower()
    if text == "chain":
        return None if L is None else chain(L)
    m = re.fullmatch(r"ladder:(\d+)", text)
    if m and int(m.group(1)) >= 1:
        return ladder(int(m.group(1)))
    m = re.fullmatch(r"lru-grid:(\d+)x(\d+)(?::(\w+))?(?::(\d+))?", text)
    if m and int(m.group(1)) >= 2 and int(m.group(2)) >= 2:
        return lru_grid(int(m.group(1)), int(m.group(2)), m.group(3) or "corners", int(m.group(4) or 2))
    m = re.fullmatch(r"grid:(\d+)x(\d+)", text)
    if m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1 and int(m.group(1)) * int(m.group(2)) >= 2:
        return grid(int(m.group(1)), int(m.group(2)))
    raise ParameterError(NAME, value, ALLOWED)


def site_index(value, g: Geometry, name: str) -> int:
    """The 0-based index of a user's site on ``g``: a 1-based site number in the layout's order (``3``, ``"3"``)
    or a 1-based coordinate ``"r,c"`` (row, column; also a pair (r, c)); refused naming ``name`` otherwise."""
    allowed = (f"a site number 1..{g.L} in the layout's order, or a coordinate 'r,c' (1-based row and column) of "
               f"{g.name}: " + " ".join(f"{r + 1},{c + 1}" for r, c in g.coords))
    if isinstance(value, (tuple, list)):
        parts = list(value)
    elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        parts = [int(value)]
    else:
        parts = [p.strip() for p in str(value).strip().strip("()").split(",")]
    try:
        nums = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise ParameterError(name, value, allowed) from None
    if len(nums) == 1:
        require(1 <= nums[0] <= g.L, name, value, allowed)
        return nums[0] - 1
    require(len(nums) == 2 and (nums[0] - 1, nums[1] - 1) in g.coords, name, value, allowed)
    return g.coords.index((nums[0] - 1, nums[1] - 1))


def from_user(value, L: int | None, start=None, reset=None) -> Geometry | None:
    """The geometry of the user's ``geometry`` text with its ``start`` and ``reset`` sites (None: the layout's
    first site and the layout's own reset sites: the last one, an lru-grid's LRU ends; :func:`site_index`),
    relabelled so that start is index 0 and the reset site(s) the last.

    ``reset`` may name several reset sites: a list of sites, or a text with ``;`` between them (``"1,3; 3,1"``);
    each carries the reset's channels (docs/physics.md §3.4).  ``chain`` with the default sites is None (the spec's
    own chain, bit for bit); ``L`` is the chain's length (a graph's own L is its number of sites)."""
    g = parse(value, L if L is not None else 2)
    if g is None:  # (a Geometry given as None)
        return None
    s = 0 if start is None else site_index(start, g, "start_site")
    resets = list(g.reset_sites) if reset is None else [site_index(r, g, "reset_site") for r in _reset_list(reset)]
    require(len(set(resets)) == len(resets), "reset_site", reset, "each reset site once")
    for r in resets:
        require(s != r, "reset_site" if reset is not None else "start_site", reset if reset is not None else start,
                f"a site other than the {'start' if reset is not None else 'reset'} site "
                f"({s + 1}, at {g.coords[s][0] + 1},{g.coords[s][1] + 1})", "the qubit and the reset sit on two sites")
    if (s, resets) == (0, list(g.reset_sites)):
        return None if g.name == "chain" and g.is_chain else g
    return g.relabel(s, resets[0] if len(resets) == 1 else resets)


def _reset_list(reset) -> list:
    """The user's reset site(s) as a list: a list of sites (numbers or (r, c) pairs) or a text split at ';'."""
    if isinstance(reset, list) or (isinstance(reset, tuple) and reset and isinstance(reset[0], (tuple, list))):
        return list(reset)
    if isinstance(reset, str) and ";" in reset:
        return [p for p in (x.strip() for x in reset.split(";")) if p]
    return [reset]
