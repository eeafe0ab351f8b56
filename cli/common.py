"""Pieces shared by the commands: option sets, errors as the user typed them, progress."""

from __future__ import annotations

import math
import sys

import click

from lru_mps.defaults import MODEL, MPS, MPS_ORDERS, REALISTIC, RUN
from lru_mps.errors import ParameterError

#: options whose values carry a unit, and the internal unit their converted value is in
_TIME_OPTIONS = {"t_final", "t1", "tphi", "dt", "t_base", "t_eval", "cycle_time", "duration"}
_ENERGY_OPTIONS = {"anharmonicity", "frequency", "disorder", "rate", "e2_spread", "frequency_noise"}

RESETS = ["periodic", "random", "dissipation", "none"]
ENGINES = ["auto", "exact", "sector", "mps"]
PATTERNS = ["box", "gaussian", "quasiperiodic", "alternating"]
BACKENDS = ["numpy", "torch", "torch:cpu", "torch:cuda", "cupy"]


def fail(err: ParameterError):
    """Stop with one line naming the option and the value as the user typed them (and their conversion)."""
    ctx = click.get_current_context(silent=True)
    raise click.UsageError(describe(err, ctx), ctx) from None


def describe(err: ParameterError, ctx: click.Context | None) -> str:
    """``--t-final=-1us (= -31.42/J) is not allowed: ...`` for an error about an option of ``ctx``'s command."""
    param = None
    if ctx is not None:
        param = next((p for p in ctx.command.params if p.name == err.name and isinstance(p, click.Option)), None)
    if param is None:
        return str(err)
    option = max(param.opts, key=len)  # the long name: --t-final, --length
    typed = ctx.params.get(param.name)
    shown = typed if typed is not None else err.value
    text = f"{option}={shown}"
    value = err.value
    if isinstance(value, (int, float)) and not isinstance(value, bool) and str(shown) != str(value):
        if err.name in _TIME_OPTIONS:
            conv = f"{_num(value)}/J"
        elif err.name in _ENERGY_OPTIONS:
            conv = f"{_num(value)} J"
        elif err.name == "temperature":
            conv = f"{_num(value)} K"
        else:
            conv = _num(value)
        if conv.replace(" ", "") != str(shown).replace(" ", "") and not _same_number(shown, value):
            text += f" (= {conv})"
    text += f" is not allowed: {err.allowed}"
    if err.hint:
        text += f" ({err.hint})"
    return text


def _same_number(typed, value: float) -> bool:
    """A bare number that already is the value in units of J: no conversion to show."""
    try:
        return float(typed) == value
    except (TypeError, ValueError):
        return False


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


def model_options(defaults: bool = True):
    """The model options of every command; names are a contract.  Defaults: lru_mps.defaults.MODEL.

    The hardware quantities (--frequency, --anharmonicity, --t1, --tphi, --temperature; --hopping in Hz) need their
    unit and are held to a transmon's domain by the library (lru_mps.physics.domains, the device file's rules too):
    a bare number is refused with what it would have meant.  The model's multiples of J keep bare numbers (--rate,
    --disorder, the spreads, the run's times as t/J).

    With ``defaults=False`` (studies) an option left out means "the study's
    own value" (its TOML file), and the help says the general default.
    """

    def d(key):
        return MODEL[key] if defaults else None

    def show(key, text):
        return f"{text} [default: {MODEL[key]}]" if not defaults else text

    realistic = f"T1q = {REALISTIC['t1']}, Tphi = {REALISTIC['tphi']}, {REALISTIC['temperature']}"
    opts = [
        click.option("--length", "-L", default=d("length"), show_default=defaults, help=show("length", "Number of transmons L (>= 2).")),
        click.option("--hopping", default=d("hopping"), show_default=defaults,
                     help=show("hopping", "Hopping J/2pi with a frequency unit (e.g. 5MHz); the unit of energies and "
                               "times. Refused where Ubar < 10 J (a warning under 20 J): the leakage stack's "
                               "J_prop = 2 J^2/Ubar needs J small against Ubar.")),
        click.option("--anharmonicity", default=d("anharmonicity"), show_default=defaults,
                     help=show("anharmonicity", "Mean anharmonicity Ubar/2pi with a unit (250MHz, or a multiple of J "
                               "written out, 50J), in 50-500 MHz and >= 10 J.")),
        click.option("--frequency", default=d("frequency"), show_default=defaults,
                     help=show("frequency", "Mean frequency wbar/2pi with a unit (7.5GHz, or 1500J), in 1-20 GHz.")),
        click.option("--disorder", default=d("disorder"), show_default=defaults,
                     help=show("disorder", "Disorder width W/2pi, the full width of the box distribution (100MHz, or "
                               "a multiple of J: 20J or 20).")),
        click.option("--reset", type=click.Choice(RESETS), default=d("reset"), show_default=defaults,
                     help=show("reset", "Last-site reset mechanism.")),
        click.option("--rate", default=d("rate"), show_default=defaults,
                     help=show("rate", "Reset rate G: a multiple of J (0.03J), G/2pi (0.15MHz) or per time (1/us).")),
        click.option("--conditions", type=click.Choice(["ideal", "realistic"] + ([] if defaults else ["both"])),
                     default=d("conditions"), show_default=defaults,
                     help=show("conditions", f"ideal: no noise, 0 K; realistic: {realistic}"
                               + ("" if defaults else "; both: each"))),
        click.option("--t1", default=None,
                     help=f"Override the transmons' T1q, with a unit (16.7us, 500/J, inf), at least 100 ns (a warning "
                          f"under 1 us; realistic: {REALISTIC['t1']})."),
        click.option("--tphi", default=None,
                     help=f"Override the pure dephasing time Tphi, with a unit (10us, inf), at least 100 ns (a warning "
                          f"under 1 us; realistic: {REALISTIC['tphi']})."),
        click.option("--temperature", default=None,
                     help=f"Override the temperature, with a unit (100mK; 0 needs none), under 1 K (a warning above "
                          f"300 mK; realistic: {REALISTIC['temperature']})."),
        click.option("--e2-spread", default=d("e2_spread"), show_default=defaults,
                     help=show("e2_spread", "Std S of the leakage levels' residual detuning per site and realization, "
                               "E2_l = E2 + N(0, S), absorbed by U_l (e.g. 50kHz, 0.5J, 2Jprop with Jprop = 2 J^2/Ubar; 0 = off).")),
        click.option("--frequency-noise", default=d("frequency_noise"), show_default=defaults,
                     help=show("frequency_noise", "Std S of a quasi-static offset N(0, S) of each site's frequency per "
                               "realization (slow flux noise): w_l and E2_l/2 shift together (e.g. 50kHz, 2Jprop; 0 = off).")),
        click.option("--disorder-pattern", type=click.Choice(PATTERNS), default=d("disorder_pattern"), show_default=defaults,
                     help=show("disorder_pattern", "box (the paper); gaussian of the box's std W/sqrt(12); quasiperiodic "
                               "(Aubry-Andre, (W/2) cos(2 pi beta l + phi), golden beta, random phi); alternating (+-W/2, "
                               "random sign of site 1). U_l = Ubar + 2 dw_l for each.")),
        click.option("--readout-error", type=float, default=d("readout_error"), show_default=defaults,
                     help=show("readout_error", "Symmetric readout error EPS in [0, 2/3] of the feedback measurement "
                               "(periodic, random): true outcome m reported as n with p(n|m) = 1 - EPS (n = m), EPS/2 "
                               "(each n != m); the feedback applies X_0n (swap |0>, |n>). 0 = off.")),
        click.option("--readout-confusion", default=None,
                     help="The readout's confusion matrix P[m][n] = p(n|m) instead, rows m = 0, 1, 2 separated by "
                          "';' (e.g. '0.98,0.01,0.01; 0.03,0.95,0.02; 0.01,0.04,0.95'); TOML: readout_confusion = [[...], ...]."),
        click.option("--hopping-spread", default=d("hopping_spread"), show_default=defaults,
                     help=show("hopping_spread", "Relative std X of the per-bond couplings, J_l = J (1 + eps_l) with "
                               "eps_l ~ N(0, X) per bond and realization (a fraction 0.05 or 5%; 0 = off, < 0.25).")),
        click.option("--hopping-profile", default=d("hopping_profile"), show_default=defaults,
                     help=show("hopping_profile", "Engineered nominal couplings J_l along the chain, rescaled to mean "
                               "J: uniform (the paper); transfer (the stack's 2 J_l^2/Ubar ~ sqrt(l (L-l)), perfect "
                               "transfer on a clean chain); linear:A:B (a ramp from A at the qubit to B at the reset "
                               "site); or L-1 relative values, e.g. 1.2,0.9,0.9. The spread multiplies it.")),
        click.option("--thermal-bath/--no-thermal-bath", default=d("thermal_bath"), show_default=defaults,
                     help=show("thermal_bath", "A thermal bath on every site: decay sqrt(gamma (1 + nbar)) a and "
                               "heating sqrt(gamma nbar) a^dag (truncated to the qutrit), gamma = 1/T1, nbar at the "
                               "site's qubit frequency and the temperature; the excitation number can grow, so the "
                               "branch estimator is refused and decay fits go to the equilibrium (docs/physics.md "
                               "§5.1). Off = the paper's decay alone.")),
        click.option("--geometry", default=d("geometry"), show_default=defaults,
                     help=show("geometry", "The coupling graph: chain (the paper's), ladder:N (2 x N sites) or grid:RxC "
                               "(R rows of C sites, nearest neighbours coupled). A graph fixes L (--length refused "
                               "unless equal); the MPS engine and the studies run chains only (docs/physics.md §3.4).")),
        click.option("--start-site", default=None,
                     help="The coding qubit's site: a 1-based site number in the layout's order (row by row: on grid:RxC "
                          "row r, column c is site (r-1) C + c) or a 1-based coordinate 'r,c' (row, column) [default: "
                          "the first site]. The layout is renumbered so that it is site 1."),
        click.option("--reset-site", default=None,
                     help="The reset site, like --start-site (a site number or 'r,c') [default: the last site]; it is "
                          "renumbered to site L. Not the start site. Several reset sites (LRUs) on a graph: separated by "
                          "';' (e.g. '1,3;3,1'), each measured or dissipating (periodic feedback or dissipation)."),
        click.option("--device", default=None,
                     help="A device file (TOML, e.g. studies/device-example.toml): every site's frequency, "
                          "anharmonicity and coupling, optionally T1, Tphi (one or one per site) and the temperature, each "
                          "with its unit ('7.52GHz', '16.7us'; a bare number is refused). "
                          "It fixes --length, --frequency, --anharmonicity, --disorder and --hopping (refused with "
                          "it); --conditions fills the hardware figures it lacks; --t1, --tphi, --temperature "
                          "override; the spreads are drawn on top (docs/physics.md §3.2)."),
    ]

    def deco(f):
        for opt in reversed(opts):
            f = opt(f)
        return f

    return deco


def _as_int(ctx, param, value):
    """A choice of numbers (click gives the string typed) as the int the library takes."""
    return None if value is None else int(value)


def engine_options(defaults: bool = True):
    """--engine and the MPS options (defaults: lru_mps.defaults.RUN and MPS; a study's engine from its TOML).

    The values go to the library as typed (``--order`` as an int): :func:`lru_mps.run.settings.mps_options`
    parses them, the engine checks them."""
    opts = [
        click.option("--engine", type=click.Choice(ENGINES), default=RUN["engine"] if defaults else None,
                     help="State backend: exact (3^L space, L <= 7), sector (exact fixed-N sectors), mps (TEBD on a "
                          "qutrit MPS); auto picks the cheapest exact or converged one for each case and says which"
                          + (f" [default: {RUN['engine']}]." if defaults else " [default: the study's]."),
                     show_default=False),
        click.option("--dt", default=None, help=f"MPS time step [default: {MPS['dt']:g}/J]."),
        click.option("--order", default=None, type=click.Choice([str(o) for o in MPS_ORDERS]), callback=_as_int,
                     help=f"MPS Trotter order (Suzuki 2, 4; Kahan-Li 6) [default: {MPS['order']}]."),
        click.option("--max-bond", default=None, type=int, help=f"MPS maximum bond dimension [default: {MPS['max_bond']}]."),
        click.option("--cutoff", default=None, type=float,
                     help=f"MPS absolute singular-value cutoff [default: {MPS['cutoff']:g}]."),
    ]

    def deco(f):
        for opt in reversed(opts):
            f = opt(f)
        return f

    return deco


def progress(as_json: bool):
    """A Progress on stderr when it is a terminal and the output is not JSON."""
    from lru_mps.run.progress import Progress

    return Progress(enabled=not as_json and sys.stderr.isatty())
