"""predictor.algorithms.REGISTRY: the one list of predictors, their parameters and defaults, that the hooks'
config, both command lines and docs/predictors.md all follow."""

import os
import re

import pytest

from predictor.admin.cli import build_parser
from predictor.algorithms import PARAMETERS, REGISTRY, Algorithm, make_algorithm
from predictor.errors import ConfigError
from predictor.server.config import DEFAULTS, parse_hook_config
from replay.shared.predictors import PREDICTORS, describe, resolve

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "predictors.md")


def doc_rows(first_header):
    """The rows of the docs/predictors.md table whose header starts with ``first_header``, as lists of cells."""
    with open(DOC, encoding="utf-8") as stream:
        lines = stream.read().splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("| " + first_header + " |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_docs_table_of_predictors_is_the_registry():
    """The docs' table names every registered predictor, with its default window and reserve."""
    table = {row[0].strip("`"): (row[2], row[3]) for row in doc_rows("name")}
    expected = {name: (str(spec.defaults["window"]), "{} s".format(spec.defaults["reserve_s"])
                       if spec.settable("reserve_s") else "—")
                for name, spec in REGISTRY.items() if name != "tang"}
    assert table == expected


def test_docs_table_of_tang_parameters_is_the_registry():
    """tang's parameter table: every parameter tang can be given, its replay spec and its default, as registered."""
    rows = doc_rows("parameter")
    specs = {re.fullmatch(r"`tang:(\w+)=(.+)`", row[3]).group(1): row[4].strip("`") for row in rows}
    spec = REGISTRY["tang"]
    assert specs == {name: str(value) for name, value in spec.defaults.items() if spec.settable(name)}


def test_algorithm_fields_are_the_parameters():
    """An Algorithm holds the name and every registered parameter, in the registry's order."""
    assert Algorithm._fields == ("name",) + tuple(PARAMETERS)


def test_every_predictor_parameter_is_a_hook_setting():
    """The hook config takes every predictor parameter, None meaning the predictor's default."""
    assert all(DEFAULTS[parameter] is None for parameter in PARAMETERS)


def test_replay_offers_every_registered_algorithm():
    """Each registered algorithm is a replay predictor, described with its defaults."""
    assert set(REGISTRY) <= set(PREDICTORS)
    assert describe("v3") == REGISTRY["v3"].description.format(window=15, reserve_min="15")


@pytest.mark.parametrize("parameter", [name for name in PARAMETERS if not PARAMETERS[name].choices])
def test_bounds_agree_everywhere(parameter):
    """The largest value of a parameter is accepted, and one more refused, by the hook config, the predict
    command and the replay's NAME:param=value alike (the predict command once stopped --window at 10000)."""
    name = next(name for name, spec in REGISTRY.items() if spec.settable(parameter))
    high = PARAMETERS[parameter].high
    settable_window = parameter == "min_history" and REGISTRY[name].settable("window")
    window = {"window": PARAMETERS["window"].high} if settable_window else {}
    option = "--reserve" if parameter == "reserve_s" else "--" + parameter.replace("_", "-")
    args = ["predict", "--user", "a", "--walltime", "60", "--algorithm", name, option]
    assert getattr(build_parser().parse_args(args + [str(high)]), parameter) == high
    assert getattr(parse_hook_config(dict(reader_dsn="host=127.0.0.1", algorithm=name, **dict(
        window, **{parameter: high}))).algorithm, parameter) == high
    assert resolve("{}:{}={}".format(name, parameter, high) + "".join(
        ":{}={}".format(key, value) for key, value in window.items())).window >= 1
    with pytest.raises(SystemExit):
        build_parser().parse_args(args + [str(high + 1)])
    with pytest.raises(ConfigError, match=parameter):
        make_algorithm(name, **{parameter: high + 1})


def test_v1_has_no_reserve():
    """v1's reserve is always 0: another value is refused, naming the predictors that have one."""
    assert make_algorithm("v1", reserve_s=0).reserve_s == 0
    with pytest.raises(ConfigError, match="v1 has no reserve: .* with one: tang, v2, v3, v3-deployed"):
        make_algorithm("v1", reserve_s=900)


def test_unknown_algorithm_of_any_type_is_a_config_error():
    """A list as the algorithm name is refused like an unknown name, not with a TypeError."""
    with pytest.raises(ConfigError, match="unknown algorithm"):
        make_algorithm(["v3"])
