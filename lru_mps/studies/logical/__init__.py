"""Study ``logical``: what the LRU does to a rotated surface code's logical error per cycle.

For code distances d (``distances``, default 3, 5, 7) a Z memory of
``rounds`` rounds (default 3 d) is sampled with leaking data qubits
(:mod:`lru_mps.circuits`, docs/physics.md §8 "The logical error per
cycle") for each LRU kind (:mod:`.kinds`: ``none``, ``array``, ``reset``)
and decoded by matching, leakage-unaware.  From the logical failures P_L of
``shots`` shots per distance and kind:

``points``            every computed (distance, lru, leakage): the logical
                      error per cycle eps = (1 - (1 - 2 P_L)^(1/rounds)) / 2
                      with its error, P_L, the leaked share of the data
                      qubits against p D/(1 + p D);
``lambda``            eps(d) / eps(d + 2) between successive distances;
``sweep``             eps against the leakage rate at one distance
                      (``sweep_distance``, default 5; ``leakage_sweep``,
                      default 0, 1e-4, 3e-4, 1e-3, 3e-3), the break-even
                      rate above which the array beats no LRU, and the
                      array's gap to an ideal reset;
``lrus``              what went into each kind: ``return_probability`` (r_k
                      by age or one number), ``added_error`` (the Pauli
                      probabilities per round), D;
``hardware``          T1q, Tphi, t_c and the bare transmon's Pauli error per
                      cycle beside the circuit's p, with a warning above the
                      surface code's threshold.

Each case's counts are stored under ``work/logical`` as they finish (a
rerun continues from them with the same numbers); the array's qec ensemble
under ``qec/work``.
"""

from __future__ import annotations

import hashlib
import json
import math

from ...atomic import atomic_write_bytes
from ...circuits import Case, per_cycle, steady_leaked_fraction
from ...circuits.sampler import CHUNK, INITIAL, merge, sample_many, summarize
from ...circuits.surface import check_distance, check_probability
from ...errors import ParameterError, require
from ..base import Study, StudyContext, StudyOption
from ..common import conditions_of, dataset_attrs, spec_of
from ..config import Config
from ..qec import cycle_time
from . import kinds as K
from . import report
from .numbers import break_even, gaps, lambdas

HELP = """Logical error per cycle of a surface code with and without the LRU, and Lambda.

For code distances --distances (default 3,5,7) a rotated surface-code Z
memory of 3 d rounds (stim's generated circuit, its four noise parameters
= --physical-error p, default 1e-3) with data qubits that leak with
probability --leakage per round (default 1e-3) and return by their LRU
kind (--lrus none,array,reset): none by the transmon's decay of |2>
(1 - exp(-t_c/T1(|2>)), T1(|2>) = T1q/2), array by the qec study's S(k)
on the same model options (r_k = 1 - S(k+1)/S(k), its added error from the
late-time T1, T2 fits), reset every cycle.  A leaked qubit fully
depolarizes its two-qubit-gate partners and reads at random; pymatching
decodes, leakage-unaware.  Reports eps = (1 - (1 - 2 P_L)^(1/rounds))/2
with its error per distance and kind (--shots each), Lambda between
successive distances, and at d = 5 eps against the leakage rate (0, 1e-4,
3e-4, 1e-3, 3e-3) with the break-even rate above which the array beats no
LRU and its gap to an ideal reset.  --removal R, --added-error E: a
calibrated row (one kind of --lrus; never --removal with array).  Default
hardware T1q = 100 us, Tphi = 200 us, 100 mK (the paper's: --t1 16.7us
--tphi 10us, above threshold, said in the summary); 7 minutes on 2 shared
cores (--quick: 20 s).
"""


def distances_of(cfg: dict, key: str = "distances") -> list[int]:
    """Odd code distances >= 3 from '3,5,7' or a list."""
    value = cfg.get(key)
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else [value]
    out = []
    for x in items:
        try:
            d = int(str(x).strip()) if not isinstance(x, (int, bool)) else x
        except ValueError:
            raise ParameterError(key, value, "odd code distances >= 3, e.g. 3,5,7") from None
        if isinstance(x, float) and x != int(x):
            raise ParameterError(key, value, "odd code distances >= 3, e.g. 3,5,7")
        try:
            out.append(check_distance(d))
        except ParameterError:
            raise ParameterError(key, value, "odd code distances >= 3, e.g. 3,5,7") from None
    require(len(out) >= 1, key, value, "odd code distances >= 3, e.g. 3,5,7")
    return sorted(set(out))


def lrus_of(cfg: dict) -> list[str]:
    value = cfg.get("lrus")
    items = value.split(",") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else [value]
    items = [str(x).strip() for x in items if str(x).strip()]
    require(len(items) >= 1 and all(x in K.KINDS for x in items), "lrus", value,
            f"LRU kinds among {','.join(K.KINDS)}, e.g. none,array,reset")
    return [k for k in K.KINDS if k in items]


def rates_of(cfg: dict, key: str) -> list[float]:
    value = cfg.get(key)
    items = value.split(",") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else [value]
    out = [check_probability(key, x.strip() if isinstance(x, str) else x) for x in items]
    require(len(out) >= 1, key, value, "leakage probabilities per round in [0, 1), e.g. 0,1e-4,1e-3")
    return sorted(set(out))


def rounds_of(cfg: dict, d: int) -> int:
    """'3d' (or 'Nd'): N d rounds; an integer: that many at every distance."""
    value = cfg.get("rounds", "3d")
    text = str(value).strip().lower()
    try:
        n = int(float(text[:-1]) * d) if text.endswith("d") else int(text)
        ok = n >= 1 and (text.endswith("d") or float(text) == n)
    except ValueError:
        ok = False
    require(not isinstance(value, bool) and ok, "rounds", value, "a number of rounds >= 1, or 'Nd' (N d rounds; 3d)")
    return n


def case_seed(seed: int, d: int, lru: str, leakage: float) -> int:
    """A case's own stream: the study seed, the distance, the kind and the leakage rate."""
    key = json.dumps([int(seed), int(d), lru, repr(float(leakage))]).encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little")


def extra_shots(raw: dict, rounds: int, target: float | None, max_shots: int) -> int:
    """The shots to add to a case's first ``raw`` counts so that eps's relative error meets ``target`` with a 20 %
    margin (relative error ~ 1/sqrt(shots P_L)), at most ``max_shots`` in all; 0 where it is met, where there is
    no target, or where P_L >= 1/2."""
    eps = per_cycle(raw["failures"], raw["shots"], rounds)
    if target is None or eps["value"] is None or raw["shots"] >= max_shots:
        return 0
    rel = eps["error"] / eps["value"] if eps["value"] > 0 else math.inf
    if rel <= target:
        return 0
    need = max_shots if not math.isfinite(rel) else math.ceil(raw["shots"] * (rel / target) ** 2 * 1.2)
    return int(min(need, max_shots) - raw["shots"])


def targets_of(cfg: dict, distances) -> dict:
    """The relative error each distance's eps is sampled to (``target_error``: a table of distances, e.g. { 3 = 0.1,
    7 = 0.2 }; a distance not in it takes the next smaller one's, or the smallest's; an empty table: none)."""
    table = cfg.get("target_error", {})
    require(isinstance(table, dict), "target_error", table, "a table of distances and relative errors, e.g. "
            "{ 3 = 0.1, 7 = 0.2 } (empty: shots alone)")
    pairs = []
    for k, v in table.items():
        require(str(k).isdigit() and not isinstance(v, bool) and isinstance(v, (int, float)) and 0 < v < 1,
                f"target_error.{k}", v, "a code distance and a relative error in (0, 1)")
        pairs.append((int(k), float(v)))
    pairs.sort()
    out = {}
    for d in distances:
        below = [v for k, v in pairs if k <= d]
        out[d] = below[-1] if below else (pairs[0][1] if pairs else None)
    return out


def case_key(case: Case, shots: int, seed: int) -> str:
    """What a case's counts depend on, as a file name (the resume key)."""
    text = json.dumps([case.distance, case.rounds, repr(case.p), repr(case.added), repr(case.leakage),
                       [repr(x) for x in case.returns.r], repr(case.returns.tail), case.initial, int(shots), int(seed),
                       "v3"])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class Logical(Study):
    """The logical study (module docstring)."""

    NAME = "logical"
    OPTIONS = (
        StudyOption("distances", "Odd code distances >= 3, e.g. 3,5,7."),
        StudyOption("lrus", "LRU kinds, e.g. none,array,reset: none (the transmon's decay of |2>), array (the qec "
                    "study's S(k) on these model options), reset (ideal, every cycle)."),
        StudyOption("physical_error", "p, each of stim's four noise parameters of the circuit."),
        StudyOption("leakage", "Leakage probability per data qubit per round."),
        StudyOption("removal", "A constant return probability per round R in (0, 1] in place of a kind's own (one "
                    "kind of --lrus, not array)."),
        StudyOption("added_error", "A depolarizing probability per data qubit per round in place of a kind's added "
                    "error (one kind of --lrus)."),
        StudyOption("shots", "Shots per distance and case; more where eps is short of its target error (the study "
                    "file's target_error, at most max_shots).", kind="int"),
        StudyOption("rounds", "Rounds per memory: 3d (3 d) or a number."),
        StudyOption("leakage_sweep", "Leakage rates of the sweep, e.g. 0,1e-4,3e-4,1e-3,3e-3."),
        StudyOption("sweep_distance", "The sweep's code distance.", kind="int"),
    )
    HELP = HELP
    TIME_UNITS = ("us", "1/J")  # no time axis: its figures count cycles and distances

    def check_given(self, cfg: dict, given: set) -> None:
        lrus = lrus_of(cfg)
        K.check_calibrations(lrus, K.calibration(cfg, "removal", 1.0, True),
                             K.calibration(cfg, "added_error", K.MAX_ADDED, False))

    def compute(self, cfg: dict, ctx: StudyContext):
        c = Config(cfg)
        distances = distances_of(cfg)
        lrus = lrus_of(cfg)
        p = check_probability("physical_error", cfg.get("physical_error"), upper=0.5)
        leakage = check_probability("leakage", cfg.get("leakage"))
        removal = K.calibration(cfg, "removal", 1.0, True)
        added = K.calibration(cfg, "added_error", K.MAX_ADDED, False)
        K.check_calibrations(lrus, removal, added)
        shots = c.integer("shots", min=1)
        sweep = rates_of(cfg, "leakage_sweep")
        sweep_d = distances_of(cfg, "sweep_distance")[0]
        initial = str(cfg.get("initial_leakage", "steady"))
        require(initial in INITIAL, "initial_leakage", initial, f"one of {', '.join(INITIAL)}")
        threshold = c.number("threshold_error", above=0, below=1)
        rounds = {d: rounds_of(cfg, d) for d in sorted(set(distances) | {sweep_d})}
        cond = conditions_of(cfg, allow_both=False)[0]
        spec = spec_of(cfg, conditions=cond)
        t_c = cycle_time(cfg, spec.J_hz)
        hw = K.hardware(spec, t_c, threshold, p)
        info = {}
        for kind in lrus:
            if kind == "none":
                info[kind] = K.none_kind(cfg, spec, t_c, removal, added)
            elif kind == "reset":
                info[kind] = K.reset_kind(cfg, removal, added)
            else:
                info[kind] = K.array_kind(cfg, ctx, leakage, added)
        wanted = [(d, kind, leakage) for d in distances for kind in lrus]
        wanted += [(sweep_d, kind, l) for l in sweep for kind in lrus if (sweep_d, kind, l) not in wanted]
        cases = [Case(d, rounds[d], p, info[kind]["added_error"]["p_total"], l, info[kind]["model"], initial)
                 for d, kind, l in wanted]
        if initial == "steady":
            for case in cases:  # a kind whose leaked qubits never return has no steady state: one line, before any shot
                if case.leakage > 0:
                    case.returns.steady_ages(case.leakage)
        targets = targets_of(cfg, rounds)
        max_shots = c.integer("max_shots", min=1)
        counts = self._sample(cases, [case_seed(cfg["seed"], d, k, l) for d, k, l in wanted], shots,
                              [targets[d] for d, _, _ in wanted], max_shots, ctx)
        points = []
        for (d, kind, l), case, raw in zip(wanted, cases, counts):
            n = summarize(raw)
            D = info[kind]["model"].mean_duration
            eps = per_cycle(n["failures"], n["shots"], case.rounds)
            points.append({
                "distance": d, "lru": kind, "leakage": l, "rounds": case.rounds,
                "logical_error_per_cycle": {"value": eps["value"], "error": eps["error"]},
                "logical_error": {"value": eps["P_L"], "error": eps["P_L_error"]},
                "failures": n["failures"], "shots": n["shots"], "extra_shots": raw["extra_shots"],
                "leaked_fraction": n["leaked_fraction"],
                "leaked_fraction_steady": steady_leaked_fraction(l, D),
                "sweep": d == sweep_d and l in sweep, **({"reason": eps["reason"]} if "reason" in eps else {})})
        lam = [x for kind in lrus for x in lambdas(points, kind, leakage, distances)]
        summary = {
            "study": self.NAME,
            "parameters": {**spec.as_dict(), "seed": int(cfg["seed"]), "distances": distances, "lrus": lrus,
                           "physical_error": p, "leakage": leakage, "removal": removal, "added_error": added,
                           "rounds": {str(d): r for d, r in rounds.items()}, "shots": shots,
                           "target_error": {str(d): t for d, t in targets.items()}, "max_shots": max_shots,
                           "leakage_sweep": sweep, "sweep_distance": sweep_d, "initial_leakage": initial,
                           "conditions": cond,
                           **({} if removal is not None else {"removal_reason": "not given: each kind's own return "
                                                              "probability (--removal sets one)"}),
                           **({} if added is not None else {"added_error_reason": "not given: each kind's own added "
                                                            "error (--added-error sets one)"})},
            "hardware": hw,
            "lrus": {kind: {k: v for k, v in info[kind].items() if k != "model"} for kind in lrus},
            "points": points,
            "lambda": lam,
            "sweep": {"distance": sweep_d, "leakages": sweep,
                      "break_even": break_even(points, sweep_d, sweep, int(cfg["seed"])),
                      "gap_to_reset": [g for g in gaps(points) if g["distance"] == sweep_d]},
            "gap_to_reset": [g for g in gaps(points) if g["leakage"] == leakage],
            "note": NOTES,
        }
        if hw["warning"]:
            summary["warning"] = hw["warning"]
        return report.dataset(summary, dataset_attrs(spec, cfg, cycle_time_J=t_c)), summary

    def _sample(self, cases: list[Case], seeds: list[int], shots: int, targets: list[float], max_shots: int,
                ctx: StudyContext) -> list[dict]:
        """Every case's counts: ``shots`` each, then, where eps's relative error is above the case's target, more
        shots (their chunks continuing the case's streams) up to the count that meets it with a 20 % margin, at
        most ``max_shots`` in all (:func:`extra_shots`).  Each pass's counts are stored under work/logical as
        they finish and read back on a rerun."""
        store = ctx.out / "work" / "logical"
        store.mkdir(parents=True, exist_ok=True)
        first = self._pass(store, [(c, shots, s, 0) for c, s in zip(cases, seeds)], ctx, "logical")
        more = [extra_shots(n, c.rounds, t, max_shots) for n, c, t in zip(first, cases, targets)]
        jobs = [(c, m, s, -(-shots // CHUNK)) for c, m, s in zip(cases, more, seeds)]
        want = [i for i, m in enumerate(more) if m > 0]
        second = self._pass(store, [jobs[i] for i in want], ctx, "logical: more shots where eps is short of its error")
        out = [dict(n, extra_shots=0) for n in first]
        for i, n in zip(want, second):
            out[i] = dict(merge([first[i], n]), extra_shots=more[i])
        return out

    def _pass(self, store, jobs: list[tuple], ctx: StudyContext, label: str) -> list[dict]:
        """The raw counts of ``jobs`` (case, shots, seed, first chunk): those stored, then the rest in one pool."""
        keys = [case_key(c, n, s) + (f"-{f}" if f else "") for c, n, s, f in jobs]
        out: list[dict | None] = [None] * len(jobs)
        for i, k in enumerate(keys):
            path = store / f"{k}.json"
            if path.exists():
                out[i] = json.loads(path.read_text())
        todo = [i for i in range(len(jobs)) if out[i] is None]
        bar = ctx.report(f"{label}: {len(todo)} cases") if todo else None

        def stored(j, counts):
            i = todo[j]
            out[i] = counts
            atomic_write_bytes(store / f"{keys[i]}.json", json.dumps(counts).encode())
            if bar is not None:
                bar(j + 1, len(todo))

        if todo:
            sample_many([jobs[i] for i in todo], ctx.workers, on_case=stored)
        return out

    def table(self, summary: dict) -> str:
        return report.table(summary)

    def plot(self, ds, summary: dict, figdir) -> list:
        return report.plot(ds, summary, figdir)


NOTES = {
    "logical_error_per_cycle": "eps = (1 - (1 - 2 P_L)^(1/rounds)) / 2 from the logical failures P_L of the shots; "
                               "error propagated from P_L's binomial error (with no failure, that of one); null "
                               "where P_L >= 1/2",
    "circuit": "stim's surface_code:rotated_memory_z, after_clifford_depolarization = "
               "before_round_data_depolarization = before_measure_flip_probability = after_reset_flip_probability = "
               "p; per round, after the data depolarization: leaked qubits return with r_k by age (maximally "
               "mixed), then unleaked data qubits leak with the leakage probability (maximally mixed); a leaked "
               "qubit fully depolarizes each two-qubit-gate partner and reads at random at the end; the LRU's "
               "added error a DEPOLARIZE1 per data qubit per round; measure qubits reset every round; decoded by "
               "pymatching on the leakage-free circuit's detector error model (added error included)",
    "leaked_fraction": "the leaked share of the data qubits at the rounds' starts after the returns, mean over shots "
                       "with its standard error; leaked_fraction_steady = p D/(1 + p D) of the kind's r_k",
    "initial_leakage": "steady: the memory starts in the leakage steady state (ages drawn from p S(a)/(1 + p D)), "
                       "as on a processor that has been running; none: without leakage",
    "break_even": "the leakage rate at the sweep distance above which eps(array) < eps(none), linear in the rate "
                  "between the sweep points of ln(eps_none/eps_array); error: spread over draws within the errors",
    "lambda": "eps(d)/eps(d+2) at the study's leakage rate, relative errors in quadrature",
}

STUDIES = {Logical.NAME: Logical()}
