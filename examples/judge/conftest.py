"""An example judge for pytest-explore-suff's ground truth: asks an external command.

Copy this file into the ``conftest.py`` of the folder you run pytest from (never into
the campaign: a campaign's own conftest.py is never loaded), or load it as a plug-in
(``-p`` with this file's folder on ``PYTHONPATH``). For each answer unit a truth
file's question covers, the plugin calls ``pytest_explore_suff_judge`` once per
question and answer text (verdicts are kept in pytest's cache directory:
``--cache-clear`` forgets them); this implementation writes a grading prompt to the
command's standard input and reads one JSON verdict from its output.

The command is ``claude -p`` by default, run from an empty temporary folder, so the
judging model sees the question, the hand-verified facts and the answer, and no
repository it could read to make up for a wrong answer (the original harness judged
so). Change it with ``EXPLORE_SUFF_JUDGE_COMMAND`` (split like a shell command line)
and its time limit with ``EXPLORE_SUFF_JUDGE_TIMEOUT`` (seconds, default 300). A
command that fails, times out or prints no verdict raises: the plugin fails that
transcript's item with one line, and the rest of the campaign reports.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from typing import Any

DEFAULT_COMMAND = "claude -p"

PROMPT = """You grade an answer a coding agent gave about a code base.

Question id: {id}
Gold files (a correct answer draws on these): {answer}
KEY SYMBOLS a correct answer must hit: {symbols}
A correct answer says (regular expressions): {must}
Known wrong claims (regular expressions): {must_not}

The agent's answer:
<<<
{text}
>>>

Reply with one line of JSON and nothing else:
{{"verdict": "pass" | "partial" | "fail", "score": <0-100>, "note": "<one sentence>"}}
"""


def prompt_for(question: dict[str, Any], answer: str) -> str:
    def listed(key: str) -> str:
        return ", ".join(question.get(key) or []) or "(none given)"

    return PROMPT.format(
        id=question.get("id", ""),
        answer=listed("answer"),
        symbols=listed("symbols"),
        must=listed("must"),
        must_not=listed("must_not"),
        text=answer,
    )


def verdict_of(output: str) -> dict[str, Any]:
    """The last line of ``output`` that is a JSON object with a verdict."""
    for line in reversed(output.strip().splitlines()):
        line = line.strip().strip("`")
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict) and "verdict" in found:
                return found
    last = output.strip().splitlines()[-1:] or ["(nothing)"]
    raise ValueError(f"no JSON verdict in the judge's output (last line: {last[0][:120]!r})")


def pytest_explore_suff_judge(question: dict[str, Any], answer: str, transcript: str) -> dict[str, Any]:
    command = shlex.split(os.environ.get("EXPLORE_SUFF_JUDGE_COMMAND", DEFAULT_COMMAND))
    timeout = float(os.environ.get("EXPLORE_SUFF_JUDGE_TIMEOUT", "300"))
    with tempfile.TemporaryDirectory(prefix="explore-suff-judge-") as neutral:
        try:
            done = subprocess.run(
                command, input=prompt_for(question, answer), capture_output=True, text=True,
                cwd=neutral, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"{command[0]} gave no verdict within {timeout:g} s") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise RuntimeError(f"{command[0]} exited with status {done.returncode}: {why[:200]}")
    return verdict_of(done.stdout)
