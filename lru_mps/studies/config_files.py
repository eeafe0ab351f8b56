"""A study's configuration resolved and written: its defaults, then a TOML file, then command-line overrides
(:func:`load_config`), the resolved config as TOML (:func:`to_toml`, the output folder's ``config.toml``), and the
``lengths`` form every study reads (:func:`parse_lengths`)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

from ..errors import ParameterError, require

#: model fields of a study config, with the names of `lru-mps simulate`'s options
MODEL_KEYS = ("length", "hopping", "anharmonicity", "frequency", "disorder", "reset", "rate", "conditions", "t1",
              "tphi", "temperature", "e2_spread", "frequency_noise", "disorder_pattern", "hopping_spread",
              "readout_error", "readout_confusion", "device", "thermal_bath", "hopping_profile",
              "geometry", "start_site", "reset_site")


def parse_lengths(text) -> list[int]:
    """'2:40' (every L), '2:40:2' (step), '2,4,8,16' or a list -> sorted unique lengths >= 2."""
    if isinstance(text, (list, tuple)):
        values = [int(x) for x in text]
    else:
        text = str(text).strip()
        try:
            if ":" in text:
                parts = [int(p) for p in text.split(":")]
                require(len(parts) in (2, 3), "lengths", text, "'start:stop' or 'start:stop:step' or a list '2,4,8'")
                step = parts[2] if len(parts) == 3 else 1
                require(step >= 1, "lengths", text, "a positive step")
                values = list(range(parts[0], parts[1] + 1, step))
            else:
                values = [int(p) for p in text.split(",") if p.strip()]
        except ValueError:
            raise ParameterError("lengths", text, "'start:stop', 'start:stop:step' or a list like '2,4,8,16'") from None
    require(len(values) >= 1 and min(values) >= 2, "lengths", text, "lengths L >= 2")
    return sorted(set(values))


def load_config(name: str, defaults: dict, config_file: str | os.PathLike | None, overrides: dict) -> dict:
    """Defaults, then a TOML file, then command-line overrides (None = not given)."""
    cfg = json.loads(json.dumps(defaults))  # deep copy
    if config_file is not None:
        path = Path(config_file)
        if not path.exists():
            raise ParameterError("config", str(config_file), "an existing TOML file")
        with open(path, "rb") as fh:
            try:
                data = tomllib.load(fh)
            except tomllib.TOMLDecodeError as err:
                raise ParameterError("config", str(config_file), f"valid TOML ({err})") from None
        if data.get("study", name) != name:
            raise ParameterError("config", str(config_file), f"a '{name}' study file (it says study = {data['study']!r})")
        _merge(cfg, data, str(config_file))
    for key, value in overrides.items():
        if value is None:
            continue
        if key in cfg and not isinstance(cfg[key], dict):
            cfg[key] = value  # a study-level key (e.g. conditions: ideal|realistic|both)
        elif key in MODEL_KEYS:
            cfg.setdefault("model", {})[key] = value
        else:
            cfg[key] = value
    return cfg


def _merge(cfg: dict, data: dict, where: str) -> None:
    from ..run.settings import MPS_USER_OPTIONS  # the MPS options a study accepts (command line or TOML)

    for key, value in data.items():
        if key in MPS_USER_OPTIONS:
            cfg[key] = value
            continue
        if key == "quick":  # a copied study file keeps its [quick] table: only --quick reads it
            continue
        if key not in cfg:
            raise ParameterError(key, value, f"one of the keys of this study ({', '.join(sorted(cfg))})", f"in {where}")
        if isinstance(cfg[key], dict) and key != "model":  # a per-length table (e.g. { 20 = 5 }): replaced whole
            require(isinstance(value, dict), key, value, "a table, e.g. { 20 = 5 }", f"in {where}")
            cfg[key] = value
        elif isinstance(cfg[key], dict):
            require(isinstance(value, dict), key, value, "a table", f"in {where}")
            for k, v in value.items():
                require(k in MODEL_KEYS or k in cfg[key], f"{key}.{k}", v, f"one of {', '.join(cfg[key])}", f"in {where}")
                cfg[key][k] = v
        else:
            cfg[key] = value


def to_toml(cfg: dict) -> str:
    """A small TOML writer for flat tables of strings, numbers and booleans."""

    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(val(x) for x in v) + "]"
        return json.dumps(str(v))

    lines = [f"{k} = {val(v)}" for k, v in cfg.items() if not isinstance(v, dict) and v is not None]
    for k, v in cfg.items():
        if isinstance(v, dict):
            lines += ["", f"[{k}]"] + [f"{kk} = {val(vv)}" for kk, vv in v.items() if vv is not None]
    return "\n".join(lines) + "\n"
