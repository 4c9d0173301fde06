"""D10: what wraps a command is not the command (loops, conditionals, wrappers).

Every example the contract gives, then the property: wrapping a read, a
search or a command of no intent in any of these constructs never changes
its intent, nor whether it invokes the codegraph CLI.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_explore_suff.shell import Intent, bash_intent, invokes

NONE = Intent(None, None)
SEARCH = Intent("search", None)


def read(path: str) -> Intent:
    return Intent("read", path)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # the contract's own examples
        ("if [ -f a.js ]; then cat a.js; fi", read("a.js")),
        ('for f in lib/*.js; do rg x "$f"; done', SEARCH),
        ("sudo -u app tail -n 50 /var/log/x.log", read("/var/log/x.log")),
        ('echo "$(cat a.js)"', read("a.js")),
        ("find . | xargs grep x", SEARCH),
        ("/bin/cat a.js", read("a.js")),
        ("/usr/bin/sed -n 1,20p a.js", read("a.js")),
        ("echo $((1 + 2))", NONE),
        ('echo "$((3 > 2))"', NONE),
        ("command -v cat", NONE),
        ("command -V rg", NONE),
        # each reserved word and closer
        ("if true\nthen cat a.js\nelif false\nthen head b.js\nelse tail c.js\nfi", read("a.js")),
        ("while true; do cat a.js; done", read("a.js")),
        ("until false; do grep -n x a.js; done", SEARCH),
        ("! cat a.js", read("a.js")),
        ("{ cat a.js; }", read("a.js")),
        ("time cat a.js", read("a.js")),
        ("time -p cat a.js", read("a.js")),
        ("fi", NONE),
        ("done", NONE),
        ("esac", NONE),
        ("}", NONE),
        ("select f in lib/a.js lib/b.js; do cat $f; done", NONE),
        # headers are not commands, even when they name paths or searchers
        ("for f in cat lib/a.js; do echo $f; done", NONE),
        ("for ls in x; do echo; done", NONE),
        ("case lib/a.js in *) echo;; esac", NONE),
        # case patterns are not commands
        ('case "$1" in a) cat a.js;; b) head b.js;; esac', read("a.js")),
        ("case $x in ls) echo hi;; *) echo;; esac", NONE),
        ("case $x in cat|ls) echo hi;; esac", NONE),
        ("case $x in\n  ls)\n    echo hi\n    ;;\n  *) head lib/b.js ;;\nesac", read("lib/b.js")),
        ("case $x in (ls) echo;; esac; cat a.js", read("a.js")),
        # wrappers, with their options and operands
        ("sudo -E cat a.js", read("a.js")),
        ("sudo -u app -g staff -- cat a.js", read("a.js")),
        ("sudo --user=app cat a.js", read("a.js")),
        ("env cat a.js", read("a.js")),
        ("env -i FOO=1 BAR=2 cat a.js", read("a.js")),
        ("env -u HOME -C /tmp cat a.js", read("a.js")),
        ("command cat a.js", read("a.js")),
        ("command -p grep x a.js", SEARCH),
        ("exec cat a.js", read("a.js")),
        ("exec -a name cat a.js", read("a.js")),
        ("nohup cat a.js", read("a.js")),
        ("nice cat a.js", read("a.js")),
        ("nice -n 10 cat a.js", read("a.js")),
        ("nice -10 cat a.js", read("a.js")),
        ("timeout 10 cat a.js", read("a.js")),
        ("timeout -s KILL -k 5 30s cat a.js", read("a.js")),
        ("timeout --signal=TERM 1m rg x", SEARCH),
        ("stdbuf -oL cat a.js", read("a.js")),
        ("stdbuf -o L -e 0 grep x a.js", SEARCH),
        ("git ls-files | xargs grep -n foo", SEARCH),
        ("ls | xargs -n 1 -P 4 cat", SEARCH),
        ("printf x | xargs -I{} cat lib/a.js", read("lib/a.js")),
        ("printf x | xargs -0 -r cat lib/a.js", read("lib/a.js")),
        ("sudo env LANG=C nice -n 5 timeout 10 /usr/bin/cat a.js", read("a.js")),
        # substitutions inside double quotes, and backquotes there
        ('echo "`cat a.js`"', read("a.js")),
        ('X="$(grep -rn x lib)"', SEARCH),
        ('echo "a $(echo "$(cat lib/a.js)") b"', read("lib/a.js")),
        ("echo '$(cat a.js)'", NONE),
        ('echo "\\$(cat a.js)"', NONE),
        # wrappers alone run nothing
        ("sudo", NONE),
        ("env FOO=1", NONE),
        ("exec > log.txt 2>&1", NONE),
    ],
)
def test_what_wraps_a_command_is_not_the_command(command: str, expected: Intent) -> None:
    assert bash_intent(command) == expected


# -- the property ----------------------------------------------------------------------

READS = [
    "cat lib/a.js",
    "sed -n '1,80p' lib/a.js",
    "head -n 20 src/x.py",
    "/bin/cat lib/a.js",
    "tail -5 lib/a.js 2>/dev/null",
    "nl -ba a.js",
    "awk 'NR>=10 && NR<=60' lib/a.js",
]
SEARCHES = ["rg -n foo lib", 'grep -rn "foo bar" .', "git grep x", "find . -name '*.py'", "ls -la", "fd x"]
NEITHER = ["npm test", "echo hi", "python -m pytest -q", "sed -i 's/a/b/' a.js"]

#: Constructs that hold any command (compound commands, reserved words, lists).
STRUCTURES = [
    "if [ -f lib/b.js ]; then {}; fi",
    "if {}; then :; fi",
    "if false; then :; elif true; then {}; else :; fi",
    "if false; then :; else {}; fi",
    "while true; do {}; done",
    "until false; do {}; done",
    "for f in lib/*.js; do {}; done",
    "for f in a b\ndo\n{}\ndone",
    "select f in a b; do {}; done",
    "case lib/b.js in *.js) {};; *) :;; esac",
    "case $x in\n  ls|cat) {} ;;\nesac",
    "{{ {}; }}",
    "! {}",
    "time {}",
    "time -p {}",
    "echo $((1 + 2)); {}",
]
#: Wrappers of a simple command: they run a command, never a compound one (`sudo if` is no shell).
PREFIXES = [
    "sudo {}",
    "sudo -u app {}",
    "sudo -E -- {}",
    "env {}",
    "env -i LANG=C {}",
    "FOO=1 {}",
    "command {}",
    "exec {}",
    "nohup {}",
    "nice {}",
    "nice -n 5 {}",
    "timeout 10 {}",
    "timeout -s KILL 5s {}",
    "stdbuf -oL {}",
    "stdbuf -i 0 -o L {}",
    "printf x | xargs {}",
    "printf x | xargs -0 -n 1 -I{{}} {}",
]
#: Substitutions: a simple command again, around anything.
SUBSTITUTIONS = ['echo "$({})"', 'X="$({})"']
BACKQUOTABLE = 'echo "`{}`"'


def _program(command: str) -> str:
    """The command with its command word turned into ``codegraph``."""
    word, _, rest = command.partition(" ")
    return f"codegraph {rest}" if word != "git" else f"codegraph {rest.partition(' ')[2]}"


@given(
    st.sampled_from(READS + SEARCHES + NEITHER),
    st.lists(st.sampled_from([*STRUCTURES, *PREFIXES, *SUBSTITUTIONS, BACKQUOTABLE]), min_size=1, max_size=3),
)
def test_wrapping_never_changes_a_commands_intent(command: str, wraps: list[str]) -> None:
    wrapped = command
    cg = _program(command)
    simple = True  # whether `wrapped` is still a simple command
    for i, wrap in enumerate(wraps):
        if wrap == BACKQUOTABLE and (i or '"' in command):
            continue  # quotes inside backquotes inside quotes: not a shape anyone writes
        if wrap in PREFIXES and not simple:
            continue
        wrapped = wrap.format(wrapped)
        cg = wrap.format(cg)
        simple = wrap not in STRUCTURES
    assert bash_intent(wrapped) == bash_intent(command)
    assert invokes(cg)
    assert invokes(wrapped) == invokes(command)


PIECES = [
    *" \t\n;&|()<>'\"\\$`#{}=-./01", "\\\n", "<<", "$(", "$((", "$'", "cat", "sudo", "code", "graph",
    "codegraph", "if", "then", "for", "in", "case", "esac", "command", "-v", "timeout", "5",
]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=25).map("".join))
def test_invokes_skips_the_parse_only_when_no_word_can_be_the_program(command: str) -> None:
    from pytest_explore_suff.shell import _commands

    parsed = any(argv[0] == "codegraph" or argv[0].endswith("/codegraph") for argv in _commands(command)[0])
    assert invokes(command) == parsed
