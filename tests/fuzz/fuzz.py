"""One long fuzz run of the readers and the classifier, not part of CI.

    python tests/fuzz/fuzz.py PART N SEED     # PART: events | bytes | mutated | metamorphic
    bash tests/fuzz/run_all.sh                # the 100,000-example run the README reports

It drives the property tests of tests/test_properties.py with many more examples.
"""

import json
import os
import sys
import time
import traceback
import warnings

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hseed
from hypothesis import strategies as st

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import test_properties as tp  # noqa: E402 - lives in tests/, put on the path above

part, N, SEED = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
count = {"examples": 0}
S = settings(
    max_examples=N,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=(Phase.generate, Phase.shrink),
    report_multiple_bugs=False,
)


def tick():
    count["examples"] += 1


@hseed(SEED)
@S
@given(
    kind=st.sampled_from(["stream-json", "interactive"]),
    contents=st.lists(tp.file_bytes, min_size=1, max_size=3),
    meta=st.one_of(st.none(), st.binary(max_size=200)),
)
def fuzz_bytes(kind, contents, meta):
    tick()
    tp.test_no_exception_escapes_on_arbitrary_bytes.hypothesis.inner_test(kind, contents, meta)


@hseed(SEED)
@S
@given(
    kind=st.sampled_from(["stream-json", "interactive"]),
    main=tp.event_files,
    subagents=st.lists(st.tuples(tp.event_files, st.none() | tp.meta_files), max_size=2),
)
def fuzz_events(kind, main, subagents):
    tick()
    tp.test_no_exception_escapes_on_arbitrary_json_events.hypothesis.inner_test(kind, main, subagents)


@hseed(SEED)
@S
@given(
    plan=tp.plans, muts=tp.mutations, layout=st.sampled_from(["stream-json", "inline", "flat", "subagents"])
)
def fuzz_mutated(plan, muts, layout):
    tick()
    tp.test_no_exception_escapes_on_mutated_real_transcripts.hypothesis.inner_test(plan, muts, layout)


@hseed(SEED)
@S
@given(
    plan=tp.plans,
    which=st.integers(0, 5),
    inserts=st.lists(st.tuples(st.integers(0, 999), st.integers(0, 99)), min_size=1, max_size=8),
    pick=st.integers(0, 99),
    to=st.integers(0, 999),
    cuts=st.lists(st.integers(0, 999), max_size=3),
    layout=st.sampled_from(["inline", "flat", "subagents"]),
)
def fuzz_metamorphic(plan, which, inserts, pick, to, cuts, layout):
    tick()
    if which == 0:
        tp.test_unknown_events_and_blank_lines_never_change_a_verdict.hypothesis.inner_test(plan, inserts)
    elif which == 1:
        tp.test_one_line_per_message_instead_of_per_block_never_changes_a_verdict.hypothesis.inner_test(plan)
    elif which == 2:
        tp.test_moving_a_tool_result_anywhere_never_changes_a_verdict.hypothesis.inner_test(plan, pick, to)
    elif which == 3:
        tp.test_renaming_task_to_agent_changes_only_the_delegation_labels.hypothesis.inner_test(plan)
    elif which == 4:
        tp.test_splitting_a_run_into_turn_files_never_changes_a_verdict.hypothesis.inner_test(plan, cuts)
    else:
        tp.test_a_run_reads_the_same_as_stream_json_and_as_an_interactive_session.hypothesis.inner_test(
            plan, layout
        )


fn = {"bytes": fuzz_bytes, "events": fuzz_events, "mutated": fuzz_mutated, "metamorphic": fuzz_metamorphic}[
    part
]
t = time.time()
status = "ok"
try:
    fn()
except BaseException as exc:
    status = "FAILED: " + "".join(traceback.format_exception(exc))[-3000:]
print(
    json.dumps(
        {
            "part": part,
            "max_examples": N,
            "seed": SEED,
            "examples_run": count["examples"],
            "seconds": round(time.time() - t, 1),
            "status": status,
        }
    ),
    flush=True,
)
