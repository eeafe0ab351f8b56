"""Unit parsing and conversion (lru_mps.physics.units): J/2pi = 5 MHz gives 1/J = 31.83 ns."""

import math

import pytest

from lru_mps.errors import ParameterError
from lru_mps.physics.model import ArraySpec
from lru_mps.physics.units import (
    parse_frequency_hz,
    rate_to_hz,
    time_to_us,
    to_energy,
    to_kelvin,
    to_rate,
    to_time,
)

J_HZ = 5e6  # J/2pi
ONE_OVER_J_S = 1.0 / (2 * math.pi * J_HZ)  # 31.83 ns


def test_one_over_J_is_31_83_ns():
    assert ONE_OVER_J_S * 1e9 == pytest.approx(31.83, abs=0.005)
    assert time_to_us(1.0, J_HZ) * 1e3 == pytest.approx(31.831, abs=1e-3)
    assert to_time("31.831ns", "t", J_HZ) == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize(
    "text, expected_hz",
    [("5MHz", 5e6), ("5 MHz", 5e6), ("7.5GHz", 7.5e9), ("500kHz", 5e5), ("12Hz", 12.0), ("1e6Hz", 1e6)],
)
def test_parse_frequency_hz(text, expected_hz):
    assert parse_frequency_hz(text, "hopping") == pytest.approx(expected_hz)


@pytest.mark.parametrize(
    "text, expected_J",
    [
        ("250MHz", 50.0),
        ("250 MHz", 50.0),
        ("0.25GHz", 50.0),
        ("7.5GHz", 1500.0),
        ("500kHz", 0.1),
        ("5e6Hz", 1.0),
        ("50J", 50.0),
        ("50 J", 50.0),
        ("50*J", 50.0),
        ("50", 50.0),
        (50, 50.0),
        (2.5, 2.5),
    ],
)
def test_to_energy(text, expected_J):
    assert to_energy(text, "anharmonicity", J_HZ) == pytest.approx(expected_J, rel=1e-12)


@pytest.mark.parametrize(
    "text, expected_J",
    [
        ("0.03J", 0.03),
        ("0.03", 0.03),
        ("0.15MHz", 0.03),  # Gamma/2pi
        ("150kHz", 0.03),
        ("2/us", 2e6 / (2 * math.pi * J_HZ)),  # 1/tau: 2 per microsecond = 0.0637 J
        ("1/us", 1e6 / (2 * math.pi * J_HZ)),
        ("2 /us", 2e6 / (2 * math.pi * J_HZ)),
        ("3/ms", 3e3 / (2 * math.pi * J_HZ)),
        ("5/ns", 5e9 / (2 * math.pi * J_HZ)),
        ("1000/s", 1e3 / (2 * math.pi * J_HZ)),
    ],
)
def test_to_rate(text, expected_J):
    assert to_rate(text, "rate", J_HZ) == pytest.approx(expected_J, rel=1e-12)


def test_rate_per_time_and_time_are_inverse():
    """A rate '1/tau' and the time 'tau' are reciprocal in J units."""
    assert to_rate("2/us", "rate", J_HZ) * to_time("0.5us", "t1", J_HZ) == pytest.approx(1.0, rel=1e-12)
    assert to_rate("2/us", "rate", J_HZ) == pytest.approx(0.06366, abs=1e-5)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("16.7us", 524.6),
        ("16.7 us", 524.6),
        ("16.7µs", 524.6),
        ("10us", 314.16),
        ("1ms", 31415.9),
        ("31.83ns", 1.0),
        ("1e-6s", 31.416),
        ("200/J", 200.0),
        ("200 /J", 200.0),
        ("200", 200.0),
        (200, 200.0),
    ],
)
def test_to_time(text, expected):
    assert to_time(text, "t1", J_HZ) == pytest.approx(expected, rel=2e-4)


def test_inf_times():
    for text in ("inf", "INF", "+inf", float("inf")):
        assert math.isinf(to_time(text, "t1", J_HZ))
    assert to_time("inf us", "t1", J_HZ) == math.inf


@pytest.mark.parametrize("text, kelvin", [("100mK", 0.1), ("100 mK", 0.1), ("0.1K", 0.1), ("20uK", 2e-5), (0, 0.0), ("0", 0.0)])
def test_to_kelvin(text, kelvin):
    assert to_kelvin(text, "temperature") == pytest.approx(kelvin, rel=1e-12)


def test_back_conversions():
    assert rate_to_hz(50.0, J_HZ) == pytest.approx(250e6)
    assert time_to_us(524.65, J_HZ) == pytest.approx(16.7, rel=1e-4)
    assert to_energy(f"{rate_to_hz(0.37, J_HZ)}Hz", "x", J_HZ) == pytest.approx(0.37, rel=1e-12)


@pytest.mark.parametrize(
    "func, value, name",
    [
        (lambda v, n: to_energy(v, n, J_HZ), "250 parsec", "anharmonicity"),
        (lambda v, n: to_energy(v, n, J_HZ), "250us", "disorder"),
        (lambda v, n: to_energy(v, n, J_HZ), "MHz", "frequency"),
        (lambda v, n: to_energy(v, n, J_HZ), "", "frequency"),
        (lambda v, n: to_energy(v, n, J_HZ), True, "anharmonicity"),
        (lambda v, n: to_rate(v, n, J_HZ), "2/fortnight", "rate"),
        (lambda v, n: to_rate(v, n, J_HZ), "2us", "rate"),
        (lambda v, n: to_rate(v, n, J_HZ), "0.03/J", "rate"),
        (lambda v, n: to_time(v, n, J_HZ), "16.7MHz", "t1"),
        (lambda v, n: to_time(v, n, J_HZ), "16.7 years", "tphi"),
        (lambda v, n: to_time(v, n, J_HZ), "50J", "t_final"),
        (lambda v, n: to_time(v, n, J_HZ), "nan", "t1"),
        (lambda v, n: to_kelvin(v, n), "100mC", "temperature"),
        (lambda v, n: to_kelvin(v, n), 0.1, "temperature"),  # bare non-zero number: unit required
        (lambda v, n: to_kelvin(v, n), "100MHz", "temperature"),
        (lambda v, n: parse_frequency_hz(v, n), "5", "hopping"),
        (lambda v, n: parse_frequency_hz(v, n), "5J", "hopping"),
        (lambda v, n: parse_frequency_hz(v, n), None, "hopping"),
    ],
)
def test_bad_units_raise_parameter_error_naming_the_parameter(func, value, name):
    with pytest.raises(ParameterError) as info:
        func(value, name)
    assert info.value.name == name
    assert str(info.value).startswith(f"{name}=")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"anharmonicity": "250 bananas"}, "anharmonicity"),
        ({"hopping": "5"}, "hopping"),
        ({"rate": "2/fortnight"}, "rate"),
        ({"t1": "16.7 MHz"}, "t1"),
        ({"tphi": "ten us"}, "tphi"),
        ({"temperature": "100"}, "temperature"),
        ({"frequency": "7.5 GHzz"}, "frequency"),
        ({"disorder": "100 mK"}, "disorder"),
        ({"length": "three"}, "length"),
        ({"length": 2.5}, "length"),
        ({"conditions": "lunar"}, "conditions"),
    ],
)
def test_from_user_names_the_bad_parameter(kwargs, name):
    with pytest.raises(ParameterError) as info:
        ArraySpec.from_user(**kwargs)
    assert info.value.name == name
    assert name in str(info.value)


def test_from_user_defaults_in_J_units():
    spec = ArraySpec.from_user(conditions="realistic")
    assert spec.Ubar == pytest.approx(50.0)
    assert spec.W == pytest.approx(20.0)
    assert spec.wbar == pytest.approx(1500.0)
    assert spec.reset.rate == pytest.approx(0.03)
    assert spec.conditions.T1q == pytest.approx(524.6, rel=1e-4)
    assert spec.conditions.Tphi == pytest.approx(314.16, rel=1e-4)
    assert spec.conditions.temperature_K == pytest.approx(0.1)
    spec = ArraySpec.from_user(hopping="2.5MHz", anharmonicity="250MHz", rate="2/us", t1="inf")
    assert spec.Ubar == pytest.approx(100.0)
    assert spec.reset.rate == pytest.approx(2e6 / (2 * math.pi * 2.5e6))
    assert math.isinf(spec.conditions.T1q)


def test_milli_is_not_mega():
    """'1mHz' must either raise or mean 1e-3 Hz; it must not be read as 1 MHz."""
    try:
        value = to_energy("1mHz", "rate", J_HZ)
    except ParameterError:
        return
    assert value == pytest.approx(1e-3 / J_HZ)


@pytest.mark.parametrize("text, multiple", [("2Jprop", 2.0), ("2 Jprop", 2.0), ("0.5J_prop", 0.5), ("3*Jprop", 3.0),
                                            ("1xJprop", 1.0)])
def test_multiples_of_J_prop(text, multiple):
    """'Jprop' = J_prop = 2 J^2/Ubar: at Ubar = 50 J (250 MHz at J/2pi = 5 MHz) 1 Jprop = 0.04 J = 200 kHz."""
    from lru_mps.physics.units import j_prop

    assert j_prop(50.0) == pytest.approx(0.04, rel=1e-12)
    assert to_energy(text, "e2_spread", J_HZ, Ubar=50.0) == pytest.approx(multiple * 0.04, rel=1e-12)
    assert to_rate(text, "rate", J_HZ, Ubar=25.0) == pytest.approx(multiple * 0.08, rel=1e-12)
    # the same spread typed as a frequency: 1 Jprop = 2 (J/2pi)^2 / (Ubar/2pi) = 200 kHz at 5 MHz, 250 MHz
    assert to_energy(f"{multiple * 200}kHz", "e2_spread", J_HZ, Ubar=50.0) == pytest.approx(multiple * 0.04, rel=1e-12)


def test_J_prop_needs_the_anharmonicity():
    """Without Ubar (the default) 'Jprop' is refused with an error naming the parameter."""
    for func in (to_energy, to_rate):
        with pytest.raises(ParameterError) as info:
            func("2Jprop", "disorder", J_HZ)
        assert info.value.name == "disorder" and "Jprop" in str(info.value)
    with pytest.raises(ParameterError):
        to_energy("2Jpropp", "e2_spread", J_HZ, Ubar=50.0)
