"""The plugin's options: one table of flags with their ini twins, their validators, and `Settings`.

Imported at every pytest start, a campaign asked for or not, and by every xdist
worker: it imports nothing but what pytest has imported already (the package's
`__init__` aside), and builds no dataclass (each costs pytest's start-up most of
a millisecond). The gates' tables and the parsers of their values are here for
that reason; `gates` (imported when a run has a gate) re-exports them.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from . import DEFAULT_STORAGE, DEFAULT_WINDOW, MAX_LINE, ToolSpec

if TYPE_CHECKING:
    from .gates import Gate

#: option / ini stem -> (bucket, direction). One lower bound, four upper bounds.
GATES: dict[str, tuple[str, str]] = {
    "min_sufficient": ("sufficient", "min"),
    "max_explore_again": ("explore_again", "max"),
    "max_read_returned": ("read_returned", "max"),
    "max_read_missed": ("read_missed", "max"),
    "max_search": ("search", "max"),
}
#: The other two metrics' gates: option / ini stem -> (metric, direction).
METRIC_GATES: dict[str, tuple[str, str]] = {
    "min_allocation": ("allocation", "min"),
    "max_residual_share": ("residual_share", "max"),
    "max_duplicate_share": ("duplicate_share", "max"),
}
#: The arm table's bars: a run figure's median against the compared arm, or against the same
#: arm in the baseline: option / ini stem -> (figure, op). ``max_increase``: by at most N (a
#: count); ``max_rel_increase``: by at most FRAC of the reference's median.
RUN_GATES: dict[str, tuple[str, str]] = {
    "max_read_increase": ("read", "max_increase"),
    "max_duration_increase": ("duration", "max_rel_increase"),
    "max_cost_increase": ("cost", "max_rel_increase"),
}
#: Against a baseline: option / ini stem -> (metric, direction).
METRIC_BASELINE_GATES: dict[str, tuple[str, str]] = {
    "max_allocation_drop": ("allocation", "max_drop"),
    "max_residual_growth": ("residual", "max_growth"),
}
#: The ground truth's gates (they need a truth file): option / ini stem -> (metric, direction).
TRUTH_GATES: dict[str, tuple[str, str]] = {
    "min_correct": ("correct", "min"),
    "max_false_sufficient": ("false_sufficient", "max"),
    "min_gold_recall": ("gold_recall", "min"),
}
#: The ground truth against a baseline: option / ini stem -> (metric, direction).
TRUTH_BASELINE_GATES: dict[str, tuple[str, str]] = {
    "max_correct_drop": ("correct", "max_drop"),
}
#: What a metric gate compares, in words, and why it may have no figure.
METRIC_WORDS = {
    "allocation": ("allocation efficiency",
                   "no allocation figure (no explore response with a returned-file section)"),
    "residual_share": ("median retrieval residual share of the final context",
                       "no occupancy figure (no token counts in its logs)"),
    "residual": ("median retrieval residual", "no occupancy figure (no token counts in its logs)"),
    "duplicate_share": ("pooled duplicate share",
                  "no duplicate figure (no explore response with a returned-file section)"),
    "correct": ("correct share", "no answer graded pass, partial or fail against the truth file"),
    "false_sufficient": ("false sufficient share (sufficient calls in failed answers)",
                         "no sufficient call in an answer graded pass, partial or fail"),
    "gold_recall": ("median gold recall", "no answer unit with a judged explore call and gold files"),
}  # fmt: skip
#: What a run gate compares, in words (`RUN_GATES`).
RUN_WORDS = {
    "read": "median Read calls per run",
    "duration": "median duration per run",
    "cost": "median cost per run",
}


def _arm_value(text: str, expected: str) -> tuple[str | None, float]:
    """``VALUE`` or ``ARM:VALUE`` -> (arm, the number); ``expected`` says what a bad one should be."""
    arm, sep, value = text.rpartition(":")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected {expected}") from None
    if sep and not arm:
        raise argparse.ArgumentTypeError(f"{text!r}: empty arm name before ':'")
    return (arm or None), number


def parse_threshold(text: str) -> tuple[str | None, float]:
    """``0.5`` or ``ARM:0.5`` -> (arm, fraction); raises ArgumentTypeError."""
    arm, frac = _arm_value(text, "FRAC or ARM:FRAC with FRAC between 0 and 1 (e.g. 0.5 or with:0.5)")
    if not 0.0 <= frac <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: the fraction must be between 0 and 1")
    return arm, frac


def parse_growth(text: str) -> tuple[str | None, float]:
    """``0.2`` or ``ARM:0.2`` -> (arm, relative growth >= 0); raises ArgumentTypeError."""
    arm, growth = _arm_value(text, "FRAC or ARM:FRAC, a relative growth such as 0.2 (20%)")
    if not 0.0 <= growth < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: the growth must be a number >= 0")
    return arm, growth


DEFAULT_JSON = "explore-suff.json"

settings_key = pytest.StashKey["Settings"]()


class Settings:
    """Every option, resolved once: the command line wins over the ini file."""

    def __init__(self, config: pytest.Config) -> None:
        def opt(name: str) -> Any:
            value = config.getoption(name)
            return value if value not in (None, [], "") else config.getini(name)

        def path_opt(name: str) -> str | None:
            value = config.getoption(name)
            return _user_path(str(value)) if value else _ini_path(config, config.getini(name))

        given = _given_campaigns(config.getoption("explore_suff"))
        if len(given) > 1:
            raise pytest.UsageError(
                f"--explore-suff given {len(given)} times ({', '.join(given)}): one campaign per run"
            )
        # An empty --explore-suff= switches off a campaign the ini file sets.
        self.root: str | None = (given[0] or None) if given else path_opt("explore_suff")
        json_path = path_opt("explore_suff_json") or DEFAULT_JSON
        self.json: str | None = None if json_path == "none" else json_path
        self.html: str | None = path_opt("explore_suff_html")
        self.spec = ToolSpec(
            explore=opt("explore_suff_tool") or ToolSpec.explore,
            family=opt("explore_suff_family") or ToolSpec.family,
            marker=opt("explore_suff_marker") or ToolSpec.marker,
        )
        self.pattern = _regex(opt("explore_suff_pattern"), "--explore-suff-pattern")
        if self.pattern is not None:
            _pattern_groups(self.pattern)
        marker = _regex(self.spec.marker, "--explore-suff-marker")
        if marker is not None and marker.groups != 1:
            raise pytest.UsageError(
                f"--explore-suff-marker: needs exactly one group, the returned file's path "
                f"(this one has {marker.groups}): e.g. '^FILE: (\\S+)'"
            )
        self.max_line: int = (
            _checked(opt("explore_suff_max_line"), _byte_count, "explore_suff_max_line") or MAX_LINE
        )
        self.keep_excluded: bool = bool(opt("explore_suff_keep_excluded"))
        self.strict: bool = bool(opt("explore_suff_strict"))
        self.gates = _gates(config, GATES)
        self.metric_gates = _gates(config, METRIC_GATES)
        self.metric_baseline_gates = _gates(config, METRIC_BASELINE_GATES)
        self.run_gates = _gates(config, RUN_GATES)
        self.control: tuple[str, ...] | None = _checked(
            opt("explore_suff_control"), _groups, "explore_suff_control"
        )
        self.truth_gates = _gates(config, TRUTH_GATES)
        self.truth_baseline_gates = _gates(config, TRUTH_BASELINE_GATES)
        self.window: int = (
            _checked(opt("explore_suff_window"), _positive_tokens, "explore_suff_window") or DEFAULT_WINDOW
        )
        self.gate_on: str = opt("explore_suff_gate_on") or "point"
        if self.gate_on not in GATE_ON:
            raise pytest.UsageError(
                f"explore_suff_gate_on: expected one of {', '.join(GATE_ON)}, got {self.gate_on!r}"
            )
        self.correction: str = opt("explore_suff_correction") or "holm"
        if self.correction not in CORRECTIONS:
            raise pytest.UsageError(
                f"explore_suff_correction: expected one of {', '.join(CORRECTIONS)}, got {self.correction!r}"
            )
        self.min_calls: int | None = _checked(
            opt("explore_suff_min_calls"), _positive_int, "explore_suff_min_calls"
        )
        self.compare: tuple[str, str] | None = _checked(
            opt("explore_suff_compare"), _arm_pair, "explore_suff_compare"
        )
        drop = config.getoption("max_sufficient_drop")
        self.max_drop: float | None = _checked(
            config.getini("explore_suff_max_sufficient_drop") if drop is None else drop,
            _fraction,
            "explore_suff_max_sufficient_drop",
        )
        self.baseline_path: str | None = path_opt("explore_suff_baseline")
        #: the baseline as given: a saved run's name, number or 'last' is not a path
        self.baseline_spec: str | None = opt("explore_suff_baseline") or None
        self.baseline: list[dict[str, Any]] | None = None
        #: what the baseline was judged with (`compare.judged_with`), read with it
        self.baseline_judged: dict[str, Any] | None = None
        save = config.getoption("explore_suff_save")
        self.save: bool = save is not None or bool(config.getini("explore_suff_autosave"))
        self.save_name: str | None = save or None
        self.storage: str = path_opt("explore_suff_storage") or os.path.join(
            str(config.rootpath), DEFAULT_STORAGE
        )
        trend = config.getoption("explore_suff_trend")
        ini_trend = config.getini("explore_suff_trend")
        self.trend: int | None = (
            trend if trend is not None else _checked(ini_trend or None, _run_count, "explore_suff_trend")
        )
        self.trend_fail: bool = bool(opt("explore_suff_trend_fail"))
        self.markdown: str | None = path_opt("explore_suff_md")
        #: the truth file named (None: the campaign's own, if any; "none": no truth file)
        self.truth_path: str | None = path_opt("explore_suff_truth")
        #: the truth file in play, loaded at configure (`truth.Truth`), and whether it is the
        #: campaign's own (found at its root, not named)
        self.truth: Any = None
        self.truth_found = False
        self.cache: bool = not opt("explore_suff_no_cache")
        #: with a truth file and a baseline: the truth file the baseline was graded against
        #: (its ``truth`` entry; ``{}``: none)
        self.baseline_truth: dict[str, Any] | None = None


def _user_path(value: str) -> str:
    """A path from the command line: ``~`` is the user's home, as in a shell (which leaves
    the ``~`` of ``--explore-suff=~/x`` alone)."""
    return os.path.expanduser(value)


def _ini_path(config: pytest.Config, value: str) -> str | None:
    """A path from the ini file: ``~`` is the user's home; a relative path is relative to
    the ini file (``none`` and an empty value are kept as they are: they are no path)."""
    if not value or value == "none":
        return value or None
    base = config.inipath.parent if config.inipath else config.rootpath
    return os.path.join(base, _user_path(value))


def _given_campaigns(values: list[str] | None) -> list[str]:
    """The distinct campaigns given on the command line, ``~`` expanded ('' switches off the ini's)."""
    return list(dict.fromkeys(_user_path(v) if v else v for v in values or ()))


def campaign_roots(config: pytest.Config) -> list[str]:
    """Every campaign this run names, absolute, as early as pytest knows its options and
    its ini file (`pytest_load_initial_conftests`): the command line's, else the ini's."""
    given = _given_campaigns(getattr(config.known_args_namespace, "explore_suff", None))
    if not given:
        ini = _ini_path(config, config.getini("explore_suff"))
        given = [ini] if ini else []
    return [os.path.abspath(root) for root in given if root]


def configure(config: pytest.Config) -> Settings:
    """The options resolved, once per run (also when no campaign is asked for: a bad value is
    an error either way)."""
    settings = config.stash[settings_key] = Settings(config)
    return settings


def truth_digest(config: pytest.Config) -> str | None:
    """The digest of the truth file in play (`truth.digest_of` its bytes; None: no truth
    file), once configure has loaded it. Whatever caches results that depend on the
    ground truth (the records' ``truth`` entries, the arms' figures) must key on it."""
    settings = config.stash.get(settings_key, None)
    truth = settings.truth if settings is not None else None
    return truth.digest if truth is not None else None


def campaign_asked(config: pytest.Config) -> bool:
    """Whether this run grades a campaign: what every hook asks first, before importing the
    modules that do the work."""
    settings = config.stash.get(settings_key, None)
    return settings is not None and settings.root is not None


def _gates(config: pytest.Config, table: dict[str, tuple[str, str]]) -> list[Gate]:
    """The gates of ``table``'s options: the command line's, else the ini's lines."""
    out: list[Gate] = []
    for stem, (metric, op) in table.items():
        parse = parse_growth if op in ("max_growth", "max_increase", "max_rel_increase") else parse_threshold
        values = config.getoption(stem) or [
            _checked(v, parse, f"explore_suff_{stem}") for v in config.getini(f"explore_suff_{stem}")
        ]
        if values:
            from .gates import Gate  # a run with a gate: not every pytest start

            out += [Gate(metric, op, frac, arm) for arm, frac in values]
    return out


def _positive_tokens(text: str) -> int:
    try:
        value = int(str(text).replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of tokens, e.g. 200000") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1 token")
    return value


def _regex(text: str | None, option: str) -> re.Pattern[str] | None:
    if not text:
        return None
    try:
        return re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise pytest.UsageError(f"{option}: not a valid regular expression: {exc}") from None


#: The named groups ``--explore-suff-pattern`` reads.
PATTERN_GROUPS = ("arm", "group", "run", "agent")


def _pattern_groups(pattern: re.Pattern[str]) -> None:
    """A pattern names what it sets: a group it would not read, or none at all, is a typo
    that would leave every transcript where its path puts it."""
    other = [g for g in pattern.groupindex if g not in PATTERN_GROUPS]
    if other or not pattern.groupindex:
        what = f"names the group(s) {', '.join(other)}" if other else "names no group"
        raise pytest.UsageError(
            f"--explore-suff-pattern: {what}; it sets a transcript's {', '.join(PATTERN_GROUPS)} with "
            f"named groups such as (?P<arm>[^/]+)"
        )


GATE_ON = ("point", "bound")
#: How the gates decided on intervals are corrected together: Holm's step-down, or not at all.
CORRECTIONS = ("holm", "none")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of calls") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def _byte_count(text: str) -> int:
    """BYTES, or with a binary suffix: 64MiB, 64M, 512k."""
    t = str(text).strip().lower().removesuffix("b").removesuffix("i")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:], 1)
    try:
        value = int(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a number of bytes, e.g. 67108864 or 64MiB"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1 byte")
    return value


#: ``--explore-suff-trend`` when given without a count: every saved run.
ALL_RUNS = 0


def _run_count(text: str) -> int:
    """N saved runs, or 'all' (0)."""
    if str(text).strip().lower() == "all":
        return ALL_RUNS
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number of runs, or 'all'") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"{text!r}: a trend needs at least 2 runs")
    return value


def _fraction(text: str) -> float:
    arm, frac = parse_threshold(text)
    if arm is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: expected FRAC, without an arm")
    return frac


def _groups(text: str) -> tuple[str, ...]:
    groups = tuple(dict.fromkeys(p.strip() for p in str(text).split(",")))
    if not groups or not all(groups):
        raise argparse.ArgumentTypeError(f"{text!r}: expected one or more groups, as GROUP[,GROUP]")
    return groups


def _arm_pair(text: str) -> tuple[str, str]:
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: expected two different arms, as A,B")
    return parts[0], parts[1]


def _checked(value: Any, parse: Any, ini: str) -> Any:
    """Values from the command line are parsed already; from the ini, parse them here."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        return value
    try:
        return parse(value)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"ini {ini}: {exc}") from None


class Option:
    """A command-line option and its ini twin (the command line wins, see `Settings`).

    The ini twin takes the flag's help; its type follows the flag's action: a
    ``store_true`` flag is a bool, an ``append`` flag a line list (unless
    ``ini_type`` says it is one string), anything else a string. (A plain class,
    not a dataclass: see the module's docstring.)
    """

    __slots__ = ("action", "choices", "const", "dest", "flag", "help", "ini", "ini_type", "metavar",
                 "nargs", "type")  # fmt: skip

    def __init__(
        self,
        flag: str,
        ini: str,
        help: str,
        dest: str | None = None,  # default: the ini name
        metavar: str | None = None,
        action: str | None = None,
        type: Callable[[str], Any] | None = None,
        choices: tuple[str, ...] | None = None,
        ini_type: str | None = None,
        nargs: str | None = None,
        const: Any = None,
    ) -> None:
        self.flag, self.ini, self.help, self.dest, self.metavar = flag, ini, help, dest, metavar
        self.action, self.type, self.choices, self.ini_type = action, type, choices, ini_type
        self.nargs, self.const = nargs, const

    def __repr__(self) -> str:
        return f"Option({self.flag!r}, {self.ini!r})"

    def add(self, parser: pytest.Parser) -> None:
        group = parser.getgroup("explore-suff", "explore sufficiency of coding-agent campaigns")
        kwargs: dict[str, Any] = {
            name: value
            for name, value in (
                ("metavar", self.metavar),
                ("action", self.action),
                ("type", self.type),
                ("choices", self.choices),
                ("nargs", self.nargs),
                ("const", self.const),
            )
            if value is not None
        }
        if self.action == "store_true":
            kwargs["default"] = None  # not False: a flag left off lets the ini decide
        group.addoption(self.flag, dest=self.dest or self.ini, help=self.help, **kwargs)
        # argparse formats a flag's help with %, pytest prints an ini setting's as it is.
        ini_help = self.help.replace("%%", "%")
        if self.action == "store_true" or self.ini_type == "bool":
            parser.addini(self.ini, ini_help, type="bool", default=False)
        elif self.action == "append" and self.ini_type is None:
            parser.addini(self.ini, ini_help, type="linelist")
        else:
            parser.addini(self.ini, ini_help)


def _gate_option(stem: str, metric: str, op: str) -> Option:
    bound = "at least" if op == "min" else "at most"
    return Option(
        f"--{stem.replace('_', '-')}",
        f"explore_suff_{stem}",
        dest=stem,
        action="append",
        type=parse_threshold,
        metavar="[ARM:]FRAC",
        help=f"fail unless the {metric} share is {bound} FRAC, in ARM or in every arm with answered "
        "calls (repeatable)",
    )


def _truth_gate_option(stem: str, metric: str, op: str) -> Option:
    words = METRIC_WORDS[metric][0]
    if op == "max_drop":
        what = f"fail when the {words} fell by more than FRAC from the baseline"
    else:
        what = f"fail unless the {words} is {'at least' if op == 'min' else 'at most'} FRAC"
    return Option(
        f"--{stem.replace('_', '-')}",
        f"explore_suff_{stem}",
        dest=stem,
        action="append",
        type=parse_threshold,
        metavar="[ARM:]FRAC",
        help=f"{what}, in ARM or in every arm that has the figure (needs a truth file; repeatable)",
    )


def _metric_gate_option(stem: str, metric: str, op: str) -> Option:
    words = METRIC_WORDS[metric][0]
    if op in ("max_drop", "max_growth"):
        how = "fell by more than FRAC" if op == "max_drop" else "grew by more than FRAC (0.2: 20%%)"
        what = f"fail when the {words} {how} from the baseline"
    else:
        what = f"fail unless the {words} is {'at least' if op == 'min' else 'at most'} FRAC"
    return Option(
        f"--{stem.replace('_', '-')}",
        f"explore_suff_{stem}",
        dest=stem,
        action="append",
        type=parse_growth if op == "max_growth" else parse_threshold,
        metavar="[ARM:]FRAC",
        help=f"{what}, in ARM or in every arm with answered calls (repeatable)",
    )


def _run_gate_option(stem: str, figure: str, op: str) -> Option:
    how = "by more than N calls (0: must not increase)" if op == "max_increase" else (
        "by more than FRAC of the reference's (0.1: 10%%)")  # fmt: skip
    return Option(
        f"--{stem.replace('_', '-')}",
        f"explore_suff_{stem}",
        dest=stem,
        action="append",
        type=parse_growth,
        metavar="[ARM:]N" if op == "max_increase" else "[ARM:]FRAC",
        help=f"fail when the {RUN_WORDS[figure]} rose {how}, against the same arm in the baseline "
        "(--explore-suff-baseline), else against the other arm of the compared pair; in ARM, or in "
        "every arm that has the figure (repeatable)",
    )


#: Every option, in the order ``pytest --help`` lists them; the gates come from `gates.GATES`.
OPTIONS: tuple[Option, ...] = (
    Option(
        "--explore-suff",
        "explore_suff",
        metavar="DIR",
        action="append",
        ini_type="string",
        help="classify every transcript of the campaign DIR, a folder or a .tar.gz/.tgz/.tar/.zip "
        "archive (collects the campaign and any paths named on the command line; an empty DIR "
        "switches off a campaign set in the ini file)",
    ),
    Option(
        "--explore-suff-json",
        "explore_suff_json",
        metavar="PATH",
        help=f"where to write the JSON report (default: {DEFAULT_JSON}; 'none' to skip)",
    ),
    Option(
        "--explore-suff-html",
        "explore_suff_html",
        metavar="PATH",
        help="also write the report as one self-contained HTML page (charts, per-call drill-down)",
    ),
    Option(
        "--explore-suff-pattern",
        "explore_suff_pattern",
        metavar="REGEX",
        help="regex with named groups arm, group, run, agent, searched in each transcript's relative path",
    ),
    Option(
        "--explore-suff-tool",
        "explore_suff_tool",
        metavar="SUBSTR",
        help=f"judge tool calls whose name contains SUBSTR (default: {ToolSpec.explore})",
    ),
    Option(
        "--explore-suff-family",
        "explore_suff_family",
        metavar="SUBSTR",
        help="a call of any tool containing SUBSTR is 'explore again'; also its CLI name "
        f"(default: {ToolSpec.family})",
    ),
    Option(
        "--explore-suff-marker",
        "explore_suff_marker",
        metavar="REGEX",
        help="regex whose first group is a returned file's path (default: the **`path`** line marker)",
    ),
    Option(
        "--explore-suff-max-line",
        "explore_suff_max_line",
        type=_byte_count,
        metavar="BYTES",
        help="a line longer than BYTES is corrupt: skipped unread, with a warning "
        f"(default: {MAX_LINE >> 20}MiB; suffixes k, M, G)",
    ),
    Option(
        "--explore-suff-keep-excluded",
        "explore_suff_keep_excluded",
        action="store_true",
        help="keep raced and contaminated runs in the aggregates instead of skipping them",
    ),
    Option(
        "--explore-suff-strict",
        "explore_suff_strict",
        action="store_true",
        help="fail a transcript that has corrupt lines (default: a warning)",
    ),
    Option(
        "--explore-suff-gate-on",
        "explore_suff_gate_on",
        choices=GATE_ON,
        help="decide threshold gates on the point estimate (default) or on the 95%% interval's bound",
    ),
    Option(
        "--explore-suff-correction",
        "explore_suff_correction",
        choices=CORRECTIONS,
        help="how the gates that fail on evidence (drops and growth on the bound, the trend, "
        "control groups) are decided together: holm (default; the chance that any fails when "
        "nothing is worse stays at 2.5%%) or none (each at 2.5%% alone)",
    ),
    Option(
        "--explore-suff-min-calls",
        "explore_suff_min_calls",
        type=_positive_int,
        metavar="N",
        help="fail when an arm has answered calls, but fewer than N",
    ),
    Option(
        "--explore-suff-compare",
        "explore_suff_compare",
        type=_arm_pair,
        metavar="A,B",
        help="the two arms to compare (default: the arms with answered calls, when there are exactly two)",
    ),
    Option(
        "--explore-suff-baseline",
        "explore_suff_baseline",
        metavar="REPORT",
        help="compare with a saved JSON report of an earlier campaign",
    ),
    Option(
        "--max-sufficient-drop",
        "explore_suff_max_sufficient_drop",
        dest="max_sufficient_drop",
        type=_fraction,
        metavar="FRAC",
        help="fail when an arm's sufficient share fell by more than FRAC from the baseline",
    ),
    *(_gate_option(stem, metric, op) for stem, (metric, op) in GATES.items()),
    Option(
        "--explore-suff-window",
        "explore_suff_window",
        type=_positive_tokens,
        metavar="TOKENS",
        help=f"the nominal context window of the occupancy figures (default: {DEFAULT_WINDOW}; "
        "a Codex log's own window wins)",
    ),
    *(_metric_gate_option(stem, metric, op) for stem, (metric, op) in METRIC_GATES.items()),
    *(_metric_gate_option(stem, metric, op) for stem, (metric, op) in METRIC_BASELINE_GATES.items()),
    *(_run_gate_option(stem, figure, op) for stem, (figure, op) in RUN_GATES.items()),
    Option(
        "--explore-suff-control",
        "explore_suff_control",
        type=_groups,
        metavar="GROUP[,GROUP]",
        help="control groups (repositories the change must not affect): fail when any metric of "
        "theirs, in any arm, moved beyond noise against the baseline (95%%, Holm-corrected over "
        "the metrics); needs --explore-suff-baseline",
    ),
    Option(
        "--explore-suff-save",
        "explore_suff_autosave",
        dest="explore_suff_save",
        nargs="?",
        const="",
        metavar="NAME",
        ini_type="bool",
        help="save this run's JSON report in the storage folder, named NAME if given (the ini "
        "setting explore_suff_autosave = true saves every run)",
    ),
    Option(
        "--explore-suff-storage",
        "explore_suff_storage",
        metavar="DIR",
        help=f"the folder of saved runs (default: {DEFAULT_STORAGE}/ in the rootdir)",
    ),
    Option(
        "--explore-suff-trend",
        "explore_suff_trend",
        type=_run_count,
        metavar="N",
        help="show the trend of each arm's metrics over the last N runs, this one included "
        "('all': every saved run)",
    ),
    Option(
        "--explore-suff-trend-fail",
        "explore_suff_trend_fail",
        action="store_true",
        help="fail when this run's sufficient share or allocation efficiency is worse, beyond "
        "noise, than the best of the trend's earlier runs",
    ),
    Option(
        "--explore-suff-truth",
        "explore_suff_truth",
        metavar="FILE",
        help="grade the answers against the ground truth of the TOML file FILE (default: the "
        "campaign's explore-suff-truth.toml, if it has one; 'none' to use none)",
    ),
    *(_truth_gate_option(stem, metric, op) for stem, (metric, op) in TRUTH_GATES.items()),
    *(_truth_gate_option(stem, metric, op) for stem, (metric, op) in TRUTH_BASELINE_GATES.items()),
    Option(
        "--explore-suff-md",
        "explore_suff_md",
        metavar="PATH",
        help="append a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    ),
    Option(
        "--explore-suff-no-cache",
        "explore_suff_no_cache",
        action="store_true",
        help="judge every transcript again: neither read nor write the verdict cache (kept in "
        "pytest's cache directory; --cache-clear empties it)",
    ),
)


#: How each option bears on a transcript's record: the verdict cache (`cache`) keys every
#: record by the values these give (ini name -> its resolved value, from `Settings`)...
RECORD_OPTIONS: dict[str, Callable[[Settings], Any]] = {
    "explore_suff_tool": lambda s: s.spec.explore,
    "explore_suff_family": lambda s: s.spec.family,
    "explore_suff_marker": lambda s: s.spec.marker,
    "explore_suff_pattern": lambda s: s.pattern.pattern if s.pattern is not None else None,
    "explore_suff_max_line": lambda s: s.max_line,
    "explore_suff_keep_excluded": lambda s: s.keep_excluded,
    "explore_suff_strict": lambda s: s.strict,
    "explore_suff_window": lambda s: s.window,
    # the truth file in play (named, or the campaign's own) by its bytes
    "explore_suff_truth": lambda s: s.truth.digest if s.truth is not None else None,
}
#: ... and these change no record: what is gated, compared, written or saved of the records.
#: Every option of `OPTIONS` is in exactly one of the two (tests/test_cache.py checks it): a
#: new option that changes what a transcript's record says goes into `RECORD_OPTIONS`.
NOT_IN_RECORDS: frozenset[str] = frozenset({
    "explore_suff",  # the campaign itself: its transcripts and their bytes are keyed one by one
    "explore_suff_json", "explore_suff_html", "explore_suff_md",
    "explore_suff_gate_on", "explore_suff_min_calls", "explore_suff_compare",
    "explore_suff_baseline", "explore_suff_max_sufficient_drop",
    *(f"explore_suff_{stem}" for stem in (*GATES, *METRIC_GATES, *METRIC_BASELINE_GATES, *RUN_GATES,
                                          *TRUTH_GATES, *TRUTH_BASELINE_GATES)),
    "explore_suff_control",  # a gate over the control groups' aggregates
    "explore_suff_correction",  # how the gates' family is corrected (Holm, ...)
    "explore_suff_autosave", "explore_suff_storage", "explore_suff_trend", "explore_suff_trend_fail",
    "explore_suff_no_cache",
})  # fmt: skip


def record_key(settings: Settings) -> tuple[tuple[str, Any], ...]:
    """The values of the options that change a record (`RECORD_OPTIONS`), in a fixed order."""
    return tuple((name, value(settings)) for name, value in sorted(RECORD_OPTIONS.items()))


def add_options(parser: pytest.Parser) -> None:
    for option in OPTIONS:
        option.add(parser)
