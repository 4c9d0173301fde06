#!/usr/bin/env python3
"""Is the plugin fast on big campaigns? One run measures it against the floors.

    .venv/bin/python benchmarks/run.py            # full size: ~100 MB, ~1 GB, 95 MB heavy, 50,000 small
    .venv/bin/python benchmarks/run.py --quick    # tiny sizes, CI smoke test (< 60 s)
    .venv/bin/python benchmarks/run.py --sizes big=200,huge=500,small=5000 --reps 7
    .venv/bin/python benchmarks/run.py --sizes 0.25   # every full size times 0.25

Campaigns are generated with ``benchmarks/generate.py`` under a temporary
directory (``--workdir``; never inside the project) and deleted at the end
unless ``--keep``. Every figure is the median of several repetitions, run
interleaved (each repetition runs every command once, in a rotated order) so
that a noisy neighbour slows all of them alike.

The plugin is the whole ``pytest -p no:cacheprovider --explore-suff=DIR
--explore-suff-json=F -q`` process. Beside it the same run measures the floors
no plugin can go below:

- the decode floor: a bare ``python -c`` that reads every line of the same
  files and decodes each with orjson;
- pytest alone: as many do-nothing items as the small (and the explore-heavy)
  campaign has transcripts (a conftest's ``pytest.File`` whose ``collect()``
  yields items whose ``runtest`` does nothing; this plugin installed but not
  asked for);
- pytest's start-up: the same conftest collecting no item (exit status 5), with
  this plugin installed but not asked for, and with ``-p no:explore_suff``.

The targets, as ratios to those floors measured in the same repetitions:

- installed but not asked for: pytest's empty start-up / the same with
  ``-p no:explore_suff`` <= 1.05;
- asked for, on 10 small transcripts: the run - that empty start-up without
  the plugin <= 0.10 s;
- 50,000 small transcripts: whole run / (pytest alone on as many items +
  decode floor) <= 1.3, and peak RSS / pytest alone's <= 1.1 (``-n 0``);
- a ~95 MB explore-heavy campaign (``generate.py --profile explore-heavy``: 27%
  of the bytes are explore responses, median 26 KB, 2.4 explore calls per
  transcript): (whole run - empty start-up) / decode floor <= 1.5;
- peak RSS of the plugin process on the ~1 GB campaign < 150 MB.

Reported, not gated: the ~100 MB campaign against its floor, pytest alone per
item (whole run / items, and less the empty start-up), the explore-heavy ratio
that pytest alone on as many items plus the decode floor would score (no
plugin that decodes every line goes below it), the explore-heavy run in the
small target's form (plugin / (pytest alone on as many items + floor)), what
the plugin spends beyond both floors per transcript, the small campaign run
from a project (``WORKDIR/project``: its pytest.ini sets ``testpaths =
tests``, whose conftest.py does not cover the campaign) against the same run
from an empty directory, ``-n 2`` on the small campaign (peak RSS of the
controller, and the sampled sum over it and its workers), and the ``-n 2``
speed-up over ``-n 0`` on the ~100 MB campaign (gated at >= 1.5x only with 4
cores or more). The huge campaign is also packed as a ``.tar.gz`` (gzip level 1:
~285 MB at full size) and run as an archive (``archive``), once more without
``-q`` to show, timed, the lines the run prints while it lists the archive,
before pytest's header. ``--only archive`` (or any list of campaigns) measures
only those.

By default the commands run with bytecode caching on (``PYTHONPYCACHEPREFIX``
under the workdir, ``PYTHONDONTWRITEBYTECODE`` dropped), as in a normal
install; ``--inherit-env`` measures the current environment as is.
``--pytest-args`` appends to every pytest command (``-p no:hypothesispytest``
measures without the hypothesis plugin a test venv carries).

The verdict cache (#40) is measured too: ``re-run`` is the plugin with
pytest's cache on, run again on an unchanged campaign (the warm-up filled its
cache folder, one per measure), against pytest alone on as many do-nothing
items with its cache on too, plus the XXH3 floor (a bare process hashing
every file's bytes: what a re-run must still read). ``first run`` clears that
folder first (``--cache-clear``): a first run with the cache's writes. The
targets: the explore-heavy re-run <= 1.1x, the small campaign's <= 1.15x, and
the re-run's report byte-identical to the run without the cache.

``--reference PATH`` names the reference harness's ``parse-run.mjs`` (not part
of this project): ``benchmarks/reference.mjs``, a small Node driver, imports it
and judges every session of the explore-heavy campaign; its CPU, wall and peak
memory are reported beside the plugin's first run and re-run, with the targets
reference CPU >= 3x the re-run's and >= 2x the first run's.

``-n 2`` against ``-n 0`` is also measured on ``tenfold``: ten copies of the
explore-heavy campaign (4,000 transcripts of about 230 KB), and on the huge
campaign, each gated at >= 1.3x (wall) with reports byte-identical.

Wall time gates; CPU time (user + system, workers included) is shown beside
each ratio, as a busy machine changes it less.

The plugin's verdicts are also checked against the generator's truth file, and
the ``-n 2`` report against the ``-n 0`` one. Exit status: 1 when a command
failed or (not with ``--quick``, whose sizes make timing noise) a target was
missed; each target is marked PASS or MISS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
GENERATE = HERE / "generate.py"

FULL = {"big": 100.0, "huge": 1000.0, "small": 50_000, "base": 10, "heavy": 95.0, "tenfold": 10}
QUICK = {"big": 4.0, "huge": 12.0, "small": 300, "base": 10, "heavy": 4.0, "tenfold": 2}

FLOOR = r"""
import os, sys
import orjson
loads = orjson.loads
n = 0
for top, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        if name.endswith(".jsonl"):
            with open(os.path.join(top, name), "rb") as fh:
                for line in fh:
                    if line.strip():
                        loads(line)
                        n += 1
print(n, "lines decoded")
"""

#: What a re-run reads at least: every file's bytes, hashed with XXH3 (as the cache keys them).
HASH_FLOOR = r"""
import os, sys
import xxhash
n = 0
for top, dirs, files in os.walk(sys.argv[1]):
    for name in files:
        with open(os.path.join(top, name), "rb") as fh:
            xxhash.xxh3_128(fh.read()).digest()
            n += 1
print(n, "files hashed")
"""

#: A project the plugin runs from (``project``): its ini file points pytest at its own tests,
#: whose conftest.py does not cover the campaign, as in a repository that grades a campaign
#: stored elsewhere. pytest then gives every node outside that conftest's folder a hook proxy
#: of its own unless the plugin shares one (nodes.py).
PROJECT_INI = """[pytest]
testpaths = tests
"""
PROJECT_CONFTEST = """import pytest

@pytest.fixture
def repository_root(tmp_path):
    return tmp_path
"""

#: pytest alone: a conftest whose file ``items-N.trivial`` holds N items that pass at once.
TRIVIAL_CONFTEST = """
import pytest

class Nothing(pytest.Item):
    def runtest(self):
        pass

class Items(pytest.File):
    def collect(self):
        for i in range(int(self.path.stem.split("-")[1])):
            yield Nothing.from_parent(self, name=f"item{i}")

def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".trivial":
        return Items.from_parent(parent, path=file_path)
"""


@dataclass
class Campaign:
    name: str
    path: Path
    truth: Path
    args: list[str]  # generator arguments after the root
    transcripts: int = 0
    bytes: int = 0
    generated: bool = False


@dataclass
class Measure:
    name: str
    campaign: str
    kind: str  # "plugin" | "floor" | "pytest" (pytest alone, do-nothing items)
    extra: tuple[str, ...] = ()
    reps: int = 0
    walls: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    tree_kb: list[int] = field(default_factory=list)  # sampled peak of the sum over the process tree
    cpus: list[float] = field(default_factory=list)  # user + system seconds, workers included
    summary: str = ""
    exit_codes: list[int] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    json: Path | None = None
    cwd: Path | None = None  # where the command runs: the empty directory unless set

    @property
    def dist(self) -> bool:
        """Run with xdist's -n: its workers are processes of their own."""
        return "-n" in self.extra


def machine() -> list[str]:
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        affinity = os.cpu_count()

    def version(mod: str) -> str:
        try:
            from importlib.metadata import version as v

            return v(mod)
        except Exception:
            return "not installed"

    return [
        f"machine: nproc={affinity} (cpu_count={os.cpu_count()}), CPU: {model}, RAM: {mem}",
        f"python {platform.python_version()} ({sys.executable}), {platform.platform()}",
        f"pytest {version('pytest')}, pytest-xdist {version('pytest-xdist')}, orjson {version('orjson')}, "
        f"pytest-explore-suff {version('pytest-explore-suff')}",
        f"at start: {contention()}",
    ]


def contention() -> str:
    """Load average and CPU pressure: how much others used the machine."""
    text = "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        some = Path("/proc/pressure/cpu").read_text().splitlines()[0].split()[1:3]
        text += ", CPU pressure (share of time some task waited for a CPU) " + " ".join(some)
    except (OSError, IndexError):
        pass
    return text


def parse_sizes(text: str | None, base: dict[str, float]) -> dict[str, float]:
    sizes = dict(base)
    if not text:
        return sizes
    try:
        factor = float(text)
    except ValueError:
        for part in text.split(","):
            key, _, value = part.partition("=")
            if key.strip() not in sizes or not value:
                raise SystemExit(
                    f"--sizes: expected FACTOR or big=MB,huge=MB,small=N,base=N,heavy=MB,tenfold=COPIES; "
                    f"got {part!r}"
                ) from None
            sizes[key.strip()] = float(value)
        return sizes
    for key in ("big", "huge", "small", "heavy"):
        sizes[key] = base[key] * factor
    return sizes


#: Runs a command and writes "wall-seconds max-rss-kb cpu-seconds" of it to a file (CPU: user
#: and system time of the command and the children it waited for, xdist's workers). A child forked from
#: this script would inherit its memory (the generator's truth files): the kernel counts
#: that in the child's peak RSS even after exec. Forked from this small fresh process, the
#: command's peak RSS is its own (with -n, the largest of it and its workers).
LAUNCHER = r"""
import os, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as fh:
    fh.write(f"{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _tree_rss_kb(root: int) -> int:
    """Resident KB of the descendants of a process now (Linux /proc; 0 elsewhere)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])  # ppid
        rss[int(entry)] = int(fields[21]) * page_kb  # rss, in pages
    total, todo = 0, [child for child, parent in parents.items() if parent == root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(child for child, parent in parents.items() if parent == pid)
    return total


def run_timed(
    cmd: list[str], log: Path, cwd: Path, env: dict[str, str], *, tree: bool = False
) -> tuple[float, int, int, int, float]:
    """(wall seconds, exit code, max RSS in KB of the command's largest process, peak KB
    of the sum over the command and its children: xdist's workers, CPU seconds). ``tree``:
    sample that sum every 0.1 s (a little CPU); otherwise it is the largest process's."""
    figures = log.with_suffix(".figures")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(figures), *cmd], cwd=cwd,
                                stdout=out, stderr=subprocess.STDOUT, env=env)  # fmt: skip
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.1):
                peak[0] = max(peak[0], _tree_rss_kb(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        if tree:
            sampler.start()
        code = proc.wait()
        done.set()
        if tree:
            sampler.join()
    try:
        wall_text, rss_text, cpu_text = figures.read_text().split()
    except (OSError, ValueError):  # the launcher itself failed: say so through the exit code
        return 0.0, code or 1, 0, 0, 0.0
    rss = int(rss_text)
    return float(wall_text), code, rss, max(peak[0], rss), float(cpu_text)


def archive_of(huge: Campaign, workdir: Path) -> Campaign:
    """The huge campaign as a .tar.gz (gzip level 1, as a CI job would pack it fast), made
    once per generated campaign: the archive a user points --explore-suff at."""
    import tarfile

    path = workdir / "huge.tar.gz"
    stamp = workdir / "archive.stamp"
    made = stamp.exists() and stamp.read_text() == json.dumps(huge.args) and path.is_file()
    if not made:
        t0 = time.perf_counter()
        with tarfile.open(path, "w:gz", compresslevel=1) as tar:
            tar.add(huge.path, arcname="huge")
        stamp.write_text(json.dumps(huge.args))
        print(f"archive: {path} ({path.stat().st_size / 1e6:.0f} MB from {huge.bytes / 1e6:.0f} MB) "
              f"[wall {time.perf_counter() - t0:.1f} s]")  # fmt: skip
    else:
        print(f"archive: reusing {path} ({path.stat().st_size / 1e6:.0f} MB)")
    return Campaign("archive", path, huge.truth, [], huge.transcripts, path.stat().st_size, not made)


def timed_lines(cmd: list[str], cwd: Path, env: dict[str, str], until: str) -> list[tuple[float, str]]:
    """The lines a command prints, each with the seconds since its start, up to the first that
    matches ``until`` (then the rest is read unshown), and the end."""
    import re

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out: list[tuple[float, str]] = []
    shown = True
    for raw in proc.stdout:
        if shown:
            line = raw.decode("utf-8", "replace").rstrip()
            out.append((time.perf_counter() - t0, line))
            shown = not re.search(until, line)
    code = proc.wait()
    out.append((time.perf_counter() - t0, f"(the run ended, exit {code})"))
    return out


def last_line(log: Path) -> str:
    lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
    return lines[-1].strip("= ") if lines else "(no output)"


def compare_truth(report: dict[str, Any], truth: dict[str, Any]) -> tuple[int, int, list[str]]:
    records = {r["path"]: r for r in report.get("transcripts", [])}
    keys = ("status", "answered", "errored", "concurrent", "counts")
    bad: list[str] = []
    for t in truth["transcripts"]:
        r = records.get(t["path"])
        if r is None:
            bad.append(f"{t['path']}: not in the report")
            continue
        got = {k: r.get(k) for k in keys}
        want = {k: t[k] for k in keys}
        if got != want:
            diff = {k: (got[k], want[k]) for k in keys if got[k] != want[k]}
            bad.append(f"{t['path']}: (plugin, expected) {diff}")
    extra = set(records) - {t["path"] for t in truth["transcripts"]}
    bad += [f"{p}: in the report, not generated" for p in sorted(extra)]
    return len(truth["transcripts"]), len(bad), bad


def fmt_s(x: float) -> str:
    return f"{x:.3f}"


def table(rows: list[list[str]], headers: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 repetitions (CI smoke, < 60 s)")
    parser.add_argument("--sizes", help="FACTOR, or big=MB,huge=MB,small=N,base=N,heavy=MB,tenfold=COPIES "
                        "(full: 100,1000,50000,10,95,10)")  # fmt: skip
    parser.add_argument("--reference", metavar="PARSE_RUN_MJS",
                        help="the reference harness's parse-run.mjs: measured beside the plugin on the "
                        "explore-heavy campaign (needs node)")  # fmt: skip
    parser.add_argument("--reps", type=int, help="repetitions per measurement (default 5; --quick 2)")
    parser.add_argument("--huge-reps", type=int, help="repetitions on the huge campaign (default: <= 3)")
    parser.add_argument(
        "--startup-reps", type=int,
        help="repetitions of the start-up measures and of the 10-transcript run (default 101; --quick "
        "2): a quarter of a second each, whose spread here (tens of ms) is the size of the targets: "
        "a median of 41 still moved by 4%% from one sitting to the next",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="measure only these campaigns, comma-separated, of big, huge, small, "
                        "base, heavy, tenfold, archive (the huge campaign as a .tar.gz), empty (the start-up "
                        "measures); default all")  # fmt: skip
    parser.add_argument("--workdir", help="where campaigns go (default: a fresh temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the generated campaigns and logs")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the venv to measure")
    parser.add_argument("--pytest-args", default="", help="more arguments for every pytest command, "
                        "e.g. '-p no:hypothesispytest'")  # fmt: skip
    parser.add_argument(
        "--inherit-env",
        action="store_true",
        help="run the commands in this environment "
        "as is (default: bytecode caching on, under WORKDIR/pycache, as in a normal install)",
    )
    args = parser.parse_args(argv)

    sizes = parse_sizes(args.sizes, QUICK if args.quick else FULL)
    reps = args.reps or (2 if args.quick else 5)
    huge_reps = args.huge_reps or min(reps, 3)
    startup_reps = args.startup_reps or (2 if args.quick else 101)
    py = args.python
    pytest_exe = Path(py).parent / "pytest"
    pytest_cmd = [str(pytest_exe)] if pytest_exe.exists() else [py, "-m", "pytest"]

    print("\n".join(machine()))
    print(
        f"sizes: big={sizes['big']:g} MB, huge={sizes['huge']:g} MB, small={int(sizes['small'])} "
        f"transcripts, base={int(sizes['base'])} transcripts, tenfold={int(sizes['tenfold'])} copies of "
        "heavy; "
        f"{reps} repetitions ({huge_reps} on huge, "
        f"{startup_reps} of the start-up and base measures); "
        f"seed {args.seed}"
    )

    own_workdir = args.workdir is None
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="explore-suff-bench-")).resolve()
    if workdir == PROJECT or PROJECT in workdir.parents:
        raise SystemExit(f"--workdir {workdir} is inside the project: use a temporary directory")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "logs").mkdir(exist_ok=True)
    (workdir / "json").mkdir(exist_ok=True)
    cwd = workdir / "cwd"  # an empty directory: no ini file of any project applies
    cwd.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    env["PY_COLORS"] = "0"
    print(f"workdir: {workdir}")
    if not args.inherit_env:
        # PYTHONDONTWRITEBYTECODE makes every start compile pytest (and rewrite the asserts of every
        # plugin) from source: seconds that a normal install never pays. Cache bytecode instead, in
        # the workdir, so that nothing is written next to the sources.
        if env.pop("PYTHONDONTWRITEBYTECODE", None):
            print("note: PYTHONDONTWRITEBYTECODE is set here; the commands run without it, with their "
                  "bytecode cached under WORKDIR/pycache (--inherit-env to measure as is)")  # fmt: skip
        env["PYTHONPYCACHEPREFIX"] = str(workdir / "pycache")
    hypothesis = subprocess.run([py, "-c", "import _hypothesis_pytestplugin"], capture_output=True,
                                check=False).returncode == 0  # fmt: skip
    if hypothesis and "hypothesispytest" not in args.pytest_args:
        print("note: hypothesis's pytest plugin is installed in this venv and loads with every pytest "
              "start (--pytest-args='-p no:hypothesispytest' to measure without it)")  # fmt: skip

    seed = str(args.seed)
    campaigns = {
        "big": Campaign("big", workdir / "big", workdir / "big.truth.json",
                        ["--size-mb", f"{sizes['big']:g}", "--seed", seed]),
        "huge": Campaign("huge", workdir / "huge", workdir / "huge.truth.json",
                         ["--size-mb", f"{sizes['huge']:g}", "--seed", str(args.seed + 1)]),
        "small": Campaign("small", workdir / "small", workdir / "small.truth.json",
                          ["--small", str(int(sizes["small"])), "--seed", seed]),
        "base": Campaign("base", workdir / "base", workdir / "base.truth.json",
                         ["--small", str(int(sizes["base"])), "--seed", seed]),
        "heavy": Campaign("heavy", workdir / "heavy", workdir / "heavy.truth.json",
                          ["--size-mb", f"{sizes['heavy']:g}", "--profile", "explore-heavy", "--seed", seed]),
        # copies of "heavy" (made after it): 4,000 transcripts of about 230 KB at full size
        "tenfold": Campaign("tenfold", workdir / "tenfold", workdir / "tenfold.truth.json",
                            ["copies-of-heavy", str(int(sizes["tenfold"])), f"{sizes['heavy']:g}", seed]),
    }  # fmt: skip

    only = set(args.only.split(",")) if args.only else {*campaigns, "archive", "empty"}
    unknown = only - {*campaigns, "archive", "empty"}
    if unknown:
        raise SystemExit(f"--only: no campaign {', '.join(sorted(unknown))}")
    # what another campaign is made from: the archive from huge, tenfold from heavy
    needed = only | ({"huge"} if "archive" in only else set()) | ({"heavy"} if "tenfold" in only else set())
    for name in [n for n in campaigns if n not in needed]:
        del campaigns[name]
    free = shutil.disk_usage(workdir).free
    need = (sizes["big"] + sizes["huge"] * 1.4 + sizes["heavy"] * (1 + sizes["tenfold"])) * 1.1e6 \
        + sizes["small"] * 12_000 + 2e8
    if free < need:
        print(f"disk: {free / 1e9:.1f} GB free in {workdir}, ~{need / 1e9:.1f} GB needed: skipping 'huge'")
        del campaigns["huge"]
    else:
        print(f"disk: {free / 1e9:.1f} GB free in {workdir}, ~{need / 1e9:.1f} GB needed")

    failed = False
    try:
        print("\n== generating campaigns")
        for c in campaigns.values():
            stamp = workdir / f"{c.name}.stamp"
            if stamp.exists() and stamp.read_text() == json.dumps(c.args) and c.path.is_dir():
                print(f"{c.name}: reusing {c.path}")
            elif c.name == "tenfold":
                t0 = time.perf_counter()
                heavy = campaigns["heavy"]
                shutil.rmtree(c.path, ignore_errors=True)
                truth = json.loads(heavy.truth.read_text())
                copies = []
                for k in range(int(sizes["tenfold"])):
                    shutil.copytree(heavy.path, c.path / f"copy{k}")
                    copies += [{**t, "path": f"copy{k}/{t['path']}"} for t in truth["transcripts"]]
                c.truth.write_text(json.dumps({**truth, "transcripts": copies}))
                c.generated = True
                stamp.write_text(json.dumps(c.args))
                took = time.perf_counter() - t0
                print(f"{c.name}: {int(sizes['tenfold'])} copies of heavy [wall {took:.1f} s]")
            else:
                t0 = time.perf_counter()
                cmd = [py, str(GENERATE), str(c.path), *c.args, "--truth", str(c.truth), "--force"]
                done = subprocess.run(cmd, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    print(f"generator failed: {' '.join(cmd)}\n{done.stdout}{done.stderr}")
                    return 1
                c.generated = True
                stamp.write_text(json.dumps(c.args))
                print(f"{c.name}: {done.stdout.strip()} [wall {time.perf_counter() - t0:.1f} s]")
            truth = json.loads(c.truth.read_text())
            c.transcripts = len(truth["transcripts"])
            c.bytes = sum(f.stat().st_size for f in c.path.rglob("*.jsonl"))
        if "archive" in only and "huge" in campaigns:
            campaigns["archive"] = archive_of(campaigns["huge"], workdir)

        # xdist.plugin: an uninstalled xdist can leave a folder that imports as a namespace package
        probe = subprocess.run([py, "-c", "import xdist.plugin"], capture_output=True, check=False)
        xdist = probe.returncode == 0
        measures = [
            Measure("plugin", "big", "plugin"),
            Measure("floor", "big", "floor"),
            Measure("plugin -n 0", "big", "plugin", ("-n", "0")),
            Measure("plugin -n 2", "big", "plugin", ("-n", "2")),
            Measure("plugin", "small", "plugin"),
            Measure("from a project", "small", "plugin"),
            Measure("plugin", "base", "plugin"),
            Measure("plugin -n 2", "small", "plugin", ("-n", "2")),
            Measure("pytest alone", "small", "pytest"),
            Measure("floor", "small", "floor"),
            Measure("start-up", "empty", "startup"),
            Measure("no plugin", "empty", "startup", ("-p", "no:explore_suff")),
            Measure("plugin", "heavy", "plugin"),
            Measure("pytest alone", "heavy", "pytest"),
            Measure("floor", "heavy", "floor"),
            Measure("plugin", "huge", "plugin"),
            Measure("floor", "huge", "floor"),
            # the verdict cache (#40): pytest's cache on for the plugin and for pytest alone
            Measure("first run", "heavy", "first"),
            Measure("re-run", "heavy", "cached"),
            Measure("pytest alone, cache", "heavy", "pytest-cached"),
            Measure("xxh3 floor", "heavy", "hash"),
            Measure("re-run", "small", "cached"),
            Measure("pytest alone, cache", "small", "pytest-cached"),
            Measure("xxh3 floor", "small", "hash"),
            # workers on medium transcripts, and on the huge campaign
            Measure("plugin", "tenfold", "plugin"),
            Measure("plugin -n 2", "tenfold", "plugin", ("-n", "2")),
            Measure("plugin -n 2", "huge", "plugin", ("-n", "2")),
            Measure("plugin", "archive", "plugin"),
        ]
        if args.reference:
            measures.append(Measure("reference", "heavy", "reference"))
        if not xdist:
            print("pytest-xdist is not installed: the -n measurements are skipped")
        measures = [m for m in measures if m.campaign in only
                    and (m.campaign in campaigns or m.kind == "startup")
                    and (xdist or not m.dist)]  # fmt: skip
        more_args = shlex.split(args.pytest_args)
        trivial = workdir / "trivial"
        trivial.mkdir(exist_ok=True)
        (trivial / "conftest.py").write_text(TRIVIAL_CONFTEST)
        (trivial / "items-0.trivial").touch()  # the empty collection of the start-up measure
        project = workdir / "project"
        (project / "tests").mkdir(parents=True, exist_ok=True)
        (project / "pytest.ini").write_text(PROJECT_INI)
        (project / "tests" / "conftest.py").write_text(PROJECT_CONFTEST)
        for m in measures:
            m.reps = (
                huge_reps if m.campaign in ("huge", "archive")
                else startup_reps if m.kind == "startup" or m.campaign == "base"
                else reps
            )  # fmt: skip
            if m.kind == "startup":
                m.cmd = [*pytest_cmd, "-p", "no:cacheprovider", f"--rootdir={trivial}",
                         str(trivial / "items-0.trivial"), "-q", *m.extra, *more_args]  # fmt: skip
                continue
            c = campaigns[m.campaign]
            slug = f"{m.campaign}-{m.name.replace(' ', '')}"
            cache = ["-o", f"cache_dir={workdir / 'cache' / slug}"]
            if m.kind == "plugin":
                m.json = workdir / "json" / f"{slug}.json"
                m.cmd = [*pytest_cmd, "-p", "no:cacheprovider", f"--explore-suff={c.path}",
                         f"--explore-suff-json={m.json}", "-q", *m.extra, *more_args]  # fmt: skip
                if m.name == "from a project":
                    m.cwd = project
            elif m.kind in ("cached", "first"):
                m.json = workdir / "json" / f"{slug}.json"
                clear = ["--cache-clear"] if m.kind == "first" else []
                m.cmd = [*pytest_cmd, *cache, *clear, f"--explore-suff={c.path}",
                         f"--explore-suff-json={m.json}", "-q", *m.extra, *more_args]  # fmt: skip
            elif m.kind == "pytest-cached":
                items = trivial / f"items-{c.transcripts}.trivial"
                items.touch()
                m.cmd = [*pytest_cmd, *cache, f"--rootdir={trivial}", str(items), "-q", *m.extra, *more_args]
            elif m.kind == "hash":
                m.cmd = [py, "-c", HASH_FLOOR, str(c.path)]
            elif m.kind == "reference":
                reference = str(Path(args.reference).resolve())
                m.cmd = ["node", str(HERE / "reference.mjs"), reference, str(c.path)]
            elif m.kind == "pytest":
                items = trivial / f"items-{c.transcripts}.trivial"
                items.touch()
                m.cmd = [*pytest_cmd, "-p", "no:cacheprovider", f"--rootdir={trivial}", str(items), "-q",
                         *m.extra, *more_args]  # fmt: skip
            else:
                m.cmd = [py, "-c", FLOOR, str(c.path)]

        print(
            f"\n== commands (cwd: an empty directory, but 'from a project': {project}, whose\n"
            f"   pytest.ini sets testpaths = tests and whose tests/conftest.py has one fixture)"
        )
        for m in measures:
            shown = [{FLOOR: "<FLOOR>", HASH_FLOOR: "<HASH_FLOOR>"}.get(part, part) for part in m.cmd]
            print(f"{m.campaign:>5} {m.name:<14} {' '.join(shown)}")
        print(f"FLOOR = {FLOOR.strip()!r}")
        print(f"HASH_FLOOR = {HASH_FLOOR.strip()!r}")

        print("\n== warm-up (not measured)")
        for m in measures:
            # --quick: one plugin and one floor run compile and cache what all need
            # (a re-run's warm-up fills its cache: always run)
            if m.kind == "cached" or (m.campaign not in ("huge", "archive")
                                      and (not args.quick or (m.campaign == "base"))):
                wall, code, _, _, _ = run_timed(m.cmd, workdir / "logs" / "warmup.log", m.cwd or cwd, env)
                print(f"{m.campaign:>5} {m.name:<14} {wall:7.2f} s  exit {code}")

        print("\n== measuring")
        t_start = time.perf_counter()
        for rep in range(max(m.reps for m in measures)):
            due = [m for m in measures if rep < m.reps]
            k = rep % len(due)
            order = due[k:] + due[:k]  # rotated: no measurement always runs first or after the heaviest
            cells = []
            for m in order:
                log = workdir / "logs" / f"{m.campaign}-{m.name.replace(' ', '')}-{rep}.log"
                wall, code, rss, tree, cpu = run_timed(m.cmd, log, m.cwd or cwd, env, tree=m.dist)
                m.cpus.append(cpu)
                m.walls.append(wall)
                m.rss_kb.append(rss)
                m.tree_kb.append(tree)
                m.exit_codes.append(code)
                if rep == 0:
                    m.summary = last_line(log)
                if code != (5 if m.kind == "startup" else 0):  # 5: pytest collected nothing, as asked
                    failed = True
                    print(f"  FAILED (exit {code}): {' '.join(m.cmd[:3])}... see {log}")
                cells.append(f"{m.campaign}/{m.name}={wall:.2f}")
            print(f"rep {rep + 1}: " + ", ".join(cells))
        print(f"measuring took {time.perf_counter() - t_start:.0f} s; at the end: {contention()}")

        def get(campaign: str, name: str) -> Measure | None:
            return next((m for m in measures if m.campaign == campaign and m.name == name), None)

        med = {(m.campaign, m.name): statistics.median(m.walls) for m in measures}
        # CPU seconds (user + system): what a busy neighbour changes less than wall time.
        cpu = {(m.campaign, m.name): statistics.median(m.cpus) for m in measures}

        print("\n== raw figures (seconds of wall time; max RSS of the process; with -n, also the "
              "sampled peak of the sum over the controller and its workers)")  # fmt: skip
        rows = []
        for m in measures:
            c = campaigns.get(m.campaign)
            wall = med[(m.campaign, m.name)]
            rows.append([
                m.campaign, f"{c.bytes / 1e6:.1f} MB / {c.transcripts}" if c else "no items", m.name,
                str(len(m.walls)), fmt_s(wall), fmt_s(min(m.walls)), fmt_s(max(m.walls)),
                fmt_s(statistics.median(m.cpus)), f"{statistics.median(m.rss_kb) / 1024:.0f} MB"
                + (f" (sum {statistics.median(m.tree_kb) / 1024:.0f})" if m.dist else ""),
                f"{c.bytes / 1e6 / wall:.1f}" if c else "",
                ",".join(map(str, sorted(set(m.exit_codes)))), m.summary[:60],
            ])  # fmt: skip
        print(table(rows, ["campaign", "size / transcripts", "command", "n", "median", "min", "max",
                           "CPU", "max RSS", "MB/s", "exit", "output (last line)"]))  # fmt: skip

        print("\n== targets")
        results: list[list[str]] = []

        def verdict(ok: bool | None) -> str:
            return "n/a" if ok is None else ("PASS" if ok else "MISS")

        def paired(values: list[float]) -> str:
            """The spread of a ratio computed within each repetition (its measures ran back to back)."""
            ordered = sorted(values)
            return f"paired per rep {ordered[0]:.2f}-{ordered[-1]:.2f}"

        n_small = campaigns["small"].transcripts if "small" in campaigns else 0
        up = get("empty", "start-up")
        startup = med[("empty", "start-up")] if up else None
        if up:
            results.append(["(context) pytest start-up, the plugin installed, an empty collection",
                            fmt_s(med[("empty", "start-up")]) + " s", "", "info"])  # fmt: skip
        bare = get("empty", "no plugin")
        if up and bare:
            tu, tb = med[("empty", "start-up")], med[("empty", "no plugin")]
            per_rep = [a / b for a, b in zip(up.walls, bare.walls, strict=True)]
            cpu_ratio = cpu[("empty", "start-up")] / cpu[("empty", "no plugin")]
            results.append(["installed, not asked for: pytest's empty start-up / the same with "
                            "-p no:explore_suff",
                            f"{tu / tb:.2f}x ({tu:.3f} s against {tb:.3f} s; {paired(per_rep)}; "
                            f"CPU time {cpu_ratio:.2f}x)", "<= 1.05", verdict(tu / tb <= 1.05)])  # fmt: skip
        b = get("base", "plugin")
        if b and bare:
            tp, tb = med[("base", "plugin")], med[("empty", "no plugin")]
            per_rep = [a - c for a, c in zip(b.walls, bare.walls, strict=True)]
            extra_cpu = cpu[("base", "plugin")] - cpu[("empty", "no plugin")]
            results.append([f"asked for, {campaigns['base'].transcripts} small transcripts: the run - "
                            "pytest's empty start-up with -p no:explore_suff",
                            f"{tp - tb:+.3f} s ({tp:.3f} s against {tb:.3f} s; paired per rep "
                            f"{min(per_rep):+.3f}-{max(per_rep):+.3f} s; CPU time {extra_cpu:+.3f} s)",
                            "<= 0.10 s", verdict(tp - tb <= 0.10)])  # fmt: skip
        p, alone, f = get("small", "plugin"), get("small", "pytest alone"), get("small", "floor")
        if p and alone and f:
            tp, ta, tf = med[("small", "plugin")], med[("small", "pytest alone")], med[("small", "floor")]
            ratio = tp / (ta + tf)
            per_rep = [a / (b + c) for a, b, c in zip(p.walls, alone.walls, f.walls, strict=True)]
            cpu_ratio = cpu[("small", "plugin")] / (cpu[("small", "pytest alone")] + cpu[("small", "floor")])
            results.append([
                f"{n_small} small transcripts: plugin / (pytest alone on {n_small} do-nothing items + floor)",
                f"{ratio:.2f}x ({tp:.2f} s against {ta:.2f} + {tf:.2f} s; {paired(per_rep)}; "
                f"CPU time {cpu_ratio:.2f}x)", "<= 1.3", verdict(ratio <= 1.3),
            ])  # fmt: skip
            results.append(["(context) what the plugin spends beyond both floors, per transcript",
                            f"{(tp - ta - tf) / n_small * 1000:.3f} ms", "", "info"])  # fmt: skip
        if p and get("small", "from a project"):
            tp, tj = med[("small", "plugin")], med[("small", "from a project")]
            results.append([f"(context) {n_small} small transcripts, run from a project with its own "
                            "conftest.py / run from an empty directory",
                            f"{tj / tp:.2f}x ({tj:.2f} s against {tp:.2f} s; "
                            f"{(tj - tp) / n_small * 1000:+.3f} ms a transcript)", "", "info"])  # fmt: skip
        if alone:
            ta = med[("small", "pytest alone")]
            text = f"{ta / n_small * 1000:.3f} ms (whole run / items)"
            if startup is not None:
                text += f"; {(ta - startup) / n_small * 1000:.3f} ms less the empty start-up"
            results.append(
                [f"(context) pytest alone, per do-nothing item ({n_small} items)", text, "", "info"]
            )
        if p and alone:
            rss, rss_alone = statistics.median(p.rss_kb) / 1024, statistics.median(alone.rss_kb) / 1024
            ratio = rss / rss_alone
            results.append([f"peak RSS, {n_small} small transcripts (-n 0) / pytest alone's",
                            f"{ratio:.2f}x ({rss:.0f} MB against {rss_alone:.0f} MB)", "<= 1.1",
                            verdict(ratio <= 1.1)])  # fmt: skip
        m = get("small", "plugin -n 2")
        if m:
            # The largest process, as /usr/bin/time and wait4 report it (the controller), and
            # the sum over the workers, which each start at ~45 MB: reported, not gated.
            results.append([f"(context) peak RSS, {n_small} small transcripts (-n 2)",
                            f"{statistics.median(m.rss_kb) / 1024:.0f} MB (sum over controller and workers "
                            f"{statistics.median(m.tree_kb) / 1024:.0f} MB)", "", "info"])  # fmt: skip
        p, f = get("heavy", "plugin"), get("heavy", "floor")
        if p and f and up and startup is not None:
            tp, tf = med[("heavy", "plugin")], med[("heavy", "floor")]
            ratio = (tp - startup) / tf
            # the start-up has more repetitions: paired with the first ones, run in the same rounds
            ups = up.walls[: len(p.walls)]
            per_rep = [(a - b) / c for a, b, c in zip(p.walls, ups, f.walls, strict=True)]
            mb = campaigns["heavy"].bytes / 1e6
            cpu_ratio = (cpu[("heavy", "plugin")] - cpu[("empty", "start-up")]) / cpu[("heavy", "floor")]
            results.append([f"{mb:.0f} MB explore-heavy: (plugin - empty start-up) / floor",
                            f"{ratio:.2f}x ({tp:.2f} - {startup:.2f} s against {tf:.2f} s; "
                            f"{paired(per_rep)}; CPU time {cpu_ratio:.2f}x)", "<= 1.5",
                            verdict(ratio <= 1.5)])  # fmt: skip
            alone = get("heavy", "pytest alone")
            if alone:
                # What a plugin that did nothing but decode would score: pytest's own items
                # (less its start-up, as above) plus the decode floor, over the floor.
                ta = med[("heavy", "pytest alone")]
                bound = (ta - startup + tf) / tf
                cpu_bound = (cpu[("heavy", "pytest alone")] - cpu[("empty", "start-up")]
                             + cpu[("heavy", "floor")]) / cpu[("heavy", "floor")]  # fmt: skip
                n = campaigns["heavy"].transcripts
                results.append([f"(context) the same ratio for pytest alone on {n} do-nothing items + floor",
                                f"{bound:.2f}x ({ta:.2f} - {startup:.2f} + {tf:.2f} s against {tf:.2f} s; "
                                f"CPU time {cpu_bound:.2f}x): no plugin that decodes every line goes below",
                                "", "info"])  # fmt: skip
                # The small target's form, for comparison: the whole run over pytest alone
                # on as many items plus the floor (start-up is in both sides).
                c_plugin, c_alone, c_floor = (cpu[("heavy", k)] for k in ("plugin", "pytest alone", "floor"))
                cpu_form = c_plugin / (c_alone + c_floor)
                results.append([f"(context) {mb:.0f} MB explore-heavy: plugin / (pytest alone on {n} "
                                "do-nothing items + floor)",
                                f"{tp / (ta + tf):.2f}x ({tp:.2f} s against {ta:.2f} + {tf:.2f} s; "
                                f"CPU time {cpu_form:.2f}x)", "", "info"])  # fmt: skip
        p, f = get("big", "plugin"), get("big", "floor")
        if p and f:
            tp, tf = med[("big", "plugin")], med[("big", "floor")]
            text = f"{tp / tf:.2f}x ({tp:.2f} s against {tf:.2f} s)"
            if startup is not None:
                text += f"; less the empty start-up {(tp - startup) / tf:.2f}x"
            results.append([f"(context) {campaigns['big'].bytes / 1e6:.0f} MB campaign: plugin / floor",
                            text, "", "info"])  # fmt: skip
        h = get("huge", "plugin")
        if h:
            rss = statistics.median(h.rss_kb) / 1024
            results.append([
                f"peak RSS of the plugin, {campaigns['huge'].bytes / 1e6:.0f} MB campaign",
                f"{rss:.0f} MB (max {max(h.rss_kb) / 1024:.0f})", "< 150 MB", verdict(rss < 150),
            ])  # fmt: skip
        else:
            why = "skipped (disk)" if "huge" in only else "not measured (--only)"
            results.append(["peak RSS of the plugin, ~1 GB campaign", why, "< 150 MB", "n/a"])
        n0, n2 = get("big", "plugin -n 0"), get("big", "plugin -n 2")
        if n0 and n2:
            t0, t2 = med[("big", "plugin -n 0")], med[("big", "plugin -n 2")]
            results.append([
                f"-n 2 speed-up over -n 0, {campaigns['big'].bytes / 1e6:.0f} MB campaign",
                f"{t0 / t2:.2f}x ({t0:.2f} s -> {t2:.2f} s)", ">= 1.5x",
                # two workers cannot win on two cores (start-up, collection): reported, not gated
                verdict(t0 / t2 >= 1.5) if len(os.sched_getaffinity(0)) >= 4 else "info (< 4 cores)",
            ])  # fmt: skip
        else:
            why = "skipped (no xdist)" if "big" in only else "not measured (--only)"
            results.append(["-n 2 speed-up over -n 0", why, ">= 1.5x", "n/a"])
        # The verdict cache: a re-run of an unchanged campaign against pytest alone on as many items
        # (its cache on too) plus the XXH3 pass over the campaign's bytes.
        for campaign, bound in (("heavy", 1.1), ("small", 1.15)):
            r, a = get(campaign, "re-run"), get(campaign, "pytest alone, cache")
            h = get(campaign, "xxh3 floor")
            if r and a and h:
                tr, ta, th = (med[(campaign, k)] for k in ("re-run", "pytest alone, cache", "xxh3 floor"))
                per_rep = [x / (y + z) for x, y, z in zip(r.walls, a.walls, h.walls, strict=True)]
                cr, ca, ch = (cpu[(campaign, k)] for k in ("re-run", "pytest alone, cache", "xxh3 floor"))
                n = campaigns[campaign].transcripts
                results.append([f"{campaign} re-run (cache on): plugin / (pytest alone on {n} do-nothing "
                                "items, cache on, + XXH3 floor)",
                                f"{tr / (ta + th):.2f}x ({tr:.2f} s against {ta:.2f} + {th:.2f} s; "
                                f"{paired(per_rep)}; CPU time {cr / (ca + ch):.2f}x)", f"<= {bound}",
                                verdict(tr / (ta + th) <= bound)])  # fmt: skip
        first, rerun, off = get("heavy", "first run"), get("heavy", "re-run"), get("heavy", "plugin")
        if first and off:
            results.append(["(context) heavy first run, writing the cache / the run without it, CPU time",
                            f"{cpu[('heavy', 'first run')] / cpu[('heavy', 'plugin')]:.3f}x "
                            f"({cpu[('heavy', 'first run')]:.2f} s against {cpu[('heavy', 'plugin')]:.2f} s)",
                            "", "info"])  # fmt: skip
        ref = get("heavy", "reference")
        if ref and first and rerun:
            cref = cpu[("heavy", "reference")]
            for name, bound in (("re-run", 3.0), ("first run", 2.0)):
                mine = cpu[("heavy", name)]
                results.append([f"reference harness (node) / the plugin's {name}, CPU time, heavy",
                                f"{cref / mine:.2f}x ({cref:.2f} s against {mine:.2f} s; wall "
                                f"{med[('heavy', 'reference')]:.2f} s against {med[('heavy', name)]:.2f} s; "
                                f"peak RSS {statistics.median(ref.rss_kb) / 1024:.0f} MB against "
                                f"{statistics.median(get('heavy', name).rss_kb) / 1024:.0f} MB)",  # type: ignore[union-attr]
                                f">= {bound:g}x", verdict(cref / mine >= bound)])  # fmt: skip
        for campaign, plain in (("tenfold", "plugin"), ("huge", "plugin")):
            one, two = get(campaign, plain), get(campaign, "plugin -n 2")
            if one and two:
                t0, t2 = med[(campaign, plain)], med[(campaign, "plugin -n 2")]
                per_rep = [a / b for a, b in zip(one.walls, two.walls, strict=True)]
                size = campaigns[campaign].bytes / 1e6
                results.append([f"-n 2 speed-up over -n 0, {campaign} ({size:.0f} MB, "
                                f"{campaigns[campaign].transcripts} transcripts)",
                                f"{t0 / t2:.2f}x ({t0:.2f} s -> {t2:.2f} s; {paired(per_rep)}; CPU "
                                f"{cpu[(campaign, plain)]:.2f} s -> {cpu[(campaign, 'plugin -n 2')]:.2f} s)",
                                ">= 1.3x", verdict(t0 / t2 >= 1.3)])  # fmt: skip
        print(table(results, ["target", "value", "goal", "verdict"]))
        missed = [r[0] for r in results if r[3] == "MISS"]
        if args.quick:
            print("(--quick: the sizes are too small for these verdicts to mean anything: not gated)")
        elif missed:
            print(f"missed {len(missed)} target(s): {'; '.join(missed)}")
            failed = True

        if "archive" in campaigns:
            print("\n== archive: what a run says while it lists a .tar.gz (one run, not -q, lines timed)")
            c = campaigns["archive"]
            cmd = [*pytest_cmd, "-p", "no:cacheprovider", f"--explore-suff={c.path}",
                   f"--explore-suff-json={workdir / 'json' / 'archive-said.json'}", *more_args]  # fmt: skip
            for at, line in timed_lines(cmd, cwd, env, until=r"test session starts"):
                print(f"  {at:7.2f} s  {line}")

        print("\n== checks")
        for m in measures:
            if m.kind not in ("plugin", "cached", "first") or m.json is None:
                continue
            c = campaigns[m.campaign]
            try:
                report = json.loads(m.json.read_text())
            except (OSError, ValueError) as exc:
                print(f"{m.campaign}/{m.name}: no readable JSON report ({exc})")
                failed = True
                continue
            total, nbad, bad = compare_truth(report, json.loads(c.truth.read_text()))
            statuses: dict[str, int] = {}
            for r in report["transcripts"]:
                statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            ok = "agree" if not nbad else "DISAGREE"
            print(
                f"{m.campaign}/{m.name}: verdicts {ok} with the generator's truth on {total - nbad}/{total} "
                f"transcripts; statuses {statuses}; ignored {len(report.get('ignored', []))}"
            )
            for line in bad[:5]:
                print(f"    {line}")
        for campaign, plain in (("big", "plugin -n 0"), ("small", "plugin")):
            one, two = get(campaign, plain), get(campaign, "plugin -n 2")
            if one and two and one.json and two.json and one.json.exists() and two.json.exists():
                # (a run that failed wrote none: said above)
                a, b = json.loads(one.json.read_text()), json.loads(two.json.read_text())
                same = a["transcripts"] == b["transcripts"] and a["arms"] == b["arms"]
                print(f"{campaign}: the -n 2 report {'equals' if same else 'DIFFERS FROM'} the -n 0 report")
                failed = failed or not same
        # byte for byte: the cache and the workers change no report
        for campaign, name, against in (("heavy", "re-run", "plugin"), ("heavy", "first run", "plugin"),
                                        ("small", "re-run", "plugin"), ("tenfold", "plugin -n 2", "plugin"),
                                        ("huge", "plugin -n 2", "plugin")):  # fmt: skip
            one, two = get(campaign, against), get(campaign, name)
            if one and two and one.json and two.json and one.json.exists() and two.json.exists():
                same = one.json.read_bytes() == two.json.read_bytes()
                print(f"{campaign}: the {name} report is {'byte-identical to' if same else 'NOT'} "
                      f"the {against} report{'' if same else ' (byte for byte)'}")
                failed = failed or not same
    finally:
        if args.keep:
            print(f"\nkept: {workdir}")
        else:
            for c in campaigns.values():
                if c.generated and c.path.is_file():  # the archive
                    c.path.unlink(missing_ok=True)
                    (workdir / f"{c.name}.stamp").unlink(missing_ok=True)
                elif c.generated:
                    shutil.rmtree(c.path, ignore_errors=True)
                    for leftover in (c.truth, workdir / f"{c.name}.stamp"):
                        leftover.unlink(missing_ok=True)
            if own_workdir:
                shutil.rmtree(workdir, ignore_errors=True)
            else:
                shutil.rmtree(workdir / "pycache", ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
