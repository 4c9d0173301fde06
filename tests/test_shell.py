from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_explore_suff.shell import Intent, bash_intent, invokes

NONE = Intent(None, None)
SEARCH = Intent("search", None)


def read(path: str) -> Intent:
    return Intent("read", path)


# --- The contract's own examples -------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat lib/x.js | grep y", read("lib/x.js")),
        ("cd /r && cat lib/a.js", read("lib/a.js")),
        ("cat lib/x.js 2>/dev/null", read("lib/x.js")),
        ("cat > notes.md <<'EOF'\nhello\nEOF", NONE),
        ("cat > /tmp/note.md <<'EOF'\n# Note\ncat lib/a.js\nEOF", NONE),
        ("nl -ba a.js | sed -n '100,140p'", read("a.js")),
        ("sed -i 's/a/b/' a.js", NONE),
        ("ls -la lib", SEARCH),
        ("npm test | tail -20; cat a.js", read("a.js")),
        ("sed -n '100,200p' lib/response.js", read("lib/response.js")),
        ("grep -rn send lib/", SEARCH),
        ("grep -rn x lib > hits.txt", SEARCH),
        ("awk 'NR>=10 && NR<=60' lib/x.js", read("lib/x.js")),
        ("git grep foo", SEARCH),
        ("cat x.js > out.txt", NONE),
        ("npm test", NONE),
    ],
)
def test_the_contract_examples_hold(command: str, expected: Intent) -> None:
    assert bash_intent(command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("codegraph explore q", True),
        ("/usr/local/bin/codegraph status", True),
        ("cd /r && codegraph query x", True),
        ("sudo FOO=1 codegraph x", True),
        ("grep codegraph src/", False),
        ("ls .codegraph", False),
        ("which codegraph", False),
        ('echo "codegraph x"', False),
    ],
)
def test_the_contract_invocation_examples_hold(command: str, expected: bool) -> None:
    assert invokes(command) is expected


def test_an_intent_is_a_plain_named_tuple() -> None:
    intent = bash_intent("cat lib/a.js")
    assert intent == ("read", "lib/a.js")
    assert (intent.kind, intent.path) == ("read", "lib/a.js")


# --- Quoting ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("cat 'my file.js'", "my file.js"),
        ('cat "my file.js"', "my file.js"),
        ("cat my\\ file.js", "my file.js"),
        ("cat lib/'my file'.js", "lib/my file.js"),
        ('cat "a \\"b\\".js"', 'a "b".js'),
        ('cat "a\\\\b.js"', "a\\b.js"),
        ("cat 'a\\b.js'", "a\\b.js"),
        ("cat $'a\\'b.js'", "a'b.js"),
    ],
)
def test_quotes_and_backslashes_group_a_word_and_are_removed(command: str, path: str) -> None:
    assert bash_intent(command) == read(path)


def test_a_backslash_in_double_quotes_before_an_ordinary_character_is_kept() -> None:
    assert bash_intent('cat "lib\\x.js"') == read("lib\\x.js")


@pytest.mark.parametrize(
    "command",
    [
        "grep 'x; cat a.js' lib",
        'grep "x && cat a.js" lib',
        "grep 'x | cat a.js' lib",
        "grep x\\;cat lib",
    ],
)
def test_nothing_inside_quotes_is_an_operator(command: str) -> None:
    assert bash_intent(command) == SEARCH


@pytest.mark.parametrize(
    "command",
    ["echo 'cat a.js > out'", 'echo "x <<EOF"', "echo 'x 2>&1 > y' && cat a.js"],
)
def test_redirects_and_heredocs_inside_quotes_are_text(command: str) -> None:
    assert bash_intent(command) == (read("a.js") if "&&" in command else NONE)


def test_a_backslash_newline_continues_the_line() -> None:
    assert bash_intent("cat \\\n  lib/a.js") == read("lib/a.js")


# --- Simple commands -------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo x; cat a.js",
        "echo x & cat a.js",
        "echo x && cat a.js",
        "echo x | cat a.js",
        "echo x || cat a.js",
        "echo x\ncat a.js",
        "echo x |& cat a.js",
        "(cat a.js)",
        "echo $(cat a.js)",
        "echo `cat a.js`",
        "diff <(cat a.js) b",
    ],
)
def test_unquoted_operators_separate_simple_commands(command: str) -> None:
    assert bash_intent(command) == read("a.js")


def test_nested_substitutions_are_flat_simple_commands() -> None:
    assert bash_intent("echo $(dirname $(cat lib/a.js))") == read("lib/a.js")
    assert invokes("echo $(basename $(codegraph query x))")


def test_substitutions_inside_double_quotes_are_parsed_but_not_inside_single_quotes() -> None:
    # D10: a command substitution inside double quotes runs its commands.
    assert invokes('OUT="$(codegraph explore q)"; echo "$OUT"')
    assert invokes('echo "hits: `codegraph query x`"')
    assert bash_intent('echo "head: $(head -5 lib/a.js)"') == read("lib/a.js")
    assert bash_intent("echo '$(cat lib/a.js)'") == NONE


def test_a_quoted_substitution_stays_inside_its_word() -> None:
    path = "$(git rev-parse --show-toplevel)/lib/a.js"
    assert bash_intent(f'cat "{path}"') == read(path)


def test_the_command_before_a_substitution_ends_at_it() -> None:
    # `)` separates too: `lib/a.js` is a command of its own, not cat's argument.
    assert bash_intent("cat $(echo x) lib/a.js") == NONE
    assert bash_intent("cat `echo x` lib/a.js") == NONE
    assert bash_intent("cat $(echo x) lib/a.js; head lib/b.js") == read("lib/b.js")
    assert bash_intent("cat lib/$(echo a).js") == read("lib/")


def test_the_commands_come_in_the_order_they_appear() -> None:
    assert bash_intent("head -5 lib/a.js $(cat lib/b.js)") == read("lib/a.js")
    assert bash_intent("echo $(cat lib/b.js) && head lib/a.js") == read("lib/b.js")


def test_arithmetic_expansion_is_a_word_not_a_heredoc() -> None:
    assert bash_intent("echo $((1 << 4)); cat a.js") == read("a.js")
    assert bash_intent('echo "$((2 > 1))"; cat a.js') == read("a.js")


def test_a_parameter_expansion_is_one_word() -> None:
    assert bash_intent("cat ${DIR:-a;b}/x.js") == read("${DIR:-a;b}/x.js")


def test_a_hash_that_starts_a_word_begins_a_comment() -> None:
    assert bash_intent("cat a.js # then b.js") == read("a.js")
    assert bash_intent("# a note\ncat lib/a.js") == read("lib/a.js")
    assert bash_intent("# cat lib/a.js") == NONE
    assert bash_intent("cat lib/a#b.js") == read("lib/a#b.js")
    assert bash_intent("cat '#x' lib/a.js") == read("lib/a.js")


@pytest.mark.parametrize(
    "command",
    [
        "sudo cat a.js",
        "FOO=1 cat a.js",
        "FOO=1 BAR='x y' cat a.js",
        "sudo LANG=C cat a.js",
        "FOO=1 sudo cat a.js",
    ],
)
def test_leading_sudo_and_assignments_are_not_the_command(command: str) -> None:
    assert bash_intent(command) == read("a.js")


def test_only_name_equals_value_is_an_assignment() -> None:
    assert bash_intent("PATH+=:/x cat a.js") == NONE
    assert bash_intent("1X=2 cat a.js") == NONE


def test_an_assignment_alone_is_no_command() -> None:
    assert bash_intent("X=lib/a.js") == NONE
    assert not invokes("CODEGRAPH=codegraph")


@pytest.mark.parametrize(
    "command",
    [
        "if [ -f x ]; then cat lib/a.js; fi",
        "for f in 1 2; do cat lib/a.js; done",
        "time cat lib/a.js",
        "{ cat lib/a.js; }",
        "! cat lib/a.js",
        "while true; do cat lib/a.js; done",
    ],
)
def test_a_shell_reserved_word_is_not_the_command_word(command: str) -> None:
    # D10: reserved words at the start of a simple command are dropped.
    assert bash_intent(command) == read("lib/a.js")
    assert invokes(command.replace("cat", "codegraph"))


def test_a_keyword_in_its_own_simple_command_leaves_the_next_one_alone() -> None:
    assert bash_intent("if true\nthen\ncat lib/a.js\nfi") == read("lib/a.js")
    assert bash_intent("(cat a.js)") == read("a.js")


@pytest.mark.parametrize(
    ("command", "intent"),
    [
        ("/bin/cat lib/a.js", Intent("read", "lib/a.js")),
        ("/usr/bin/grep -rn x lib", SEARCH),
        ("./ls", SEARCH),
        ("/usr/bin/git grep x", SEARCH),
    ],
)
def test_a_command_named_by_its_path_is_its_basename(command: str, intent: Intent) -> None:
    # D10 (before it, a path matched no set).
    assert bash_intent(command) == intent


# --- Heredocs and redirects ------------------------------------------------


@pytest.mark.parametrize("op", ["<<", "<<-", "<< ", "<<'EOF'"])
def test_a_heredoc_makes_the_command_a_write(op: str) -> None:
    assert bash_intent(f"cat lib/a.js {op}EOF\nx\nEOF") == NONE


def test_a_heredoc_body_is_not_parsed() -> None:
    body = "python - <<'EOF'\nimport os\nos.system('cat lib/a.js')\nEOF"
    assert bash_intent(body) == NONE
    assert not invokes("cat <<EOF\ncodegraph explore q\nEOF")
    assert not invokes("cat <<EOF\n$(codegraph explore q)\nEOF")


def test_a_heredoc_does_not_prevent_a_search() -> None:
    assert bash_intent("grep -f - lib <<EOF\nx\nEOF") == SEARCH


@pytest.mark.parametrize("command", ['cat <<< "lib/a.js"', "cat <<<lib/a.js"])
def test_a_here_string_target_is_an_argument(command: str) -> None:
    assert bash_intent(command) == read("lib/a.js")


@pytest.mark.parametrize("command", ["cat < lib/a.js", "cat <lib/a.js", "cat 0<lib/a.js"])
def test_an_input_redirect_target_is_an_argument(command: str) -> None:
    assert bash_intent(command) == read("lib/a.js")


@pytest.mark.parametrize("op", [">", ">>", "1>", "1>>", "&>", "&>>", ">|", ">&"])
@pytest.mark.parametrize("space", ["", " "])
def test_a_stdout_redirect_to_a_file_is_a_write(op: str, space: str) -> None:
    assert bash_intent(f"cat lib/a.js {op}{space}out.txt") == NONE


@pytest.mark.parametrize(
    "redirect",
    [
        "2>err.log",
        "2> err.log",
        "2>>err.log",
        "2>&1",
        ">&2",
        "1>&2",
        ">&-",
        ">/dev/null",
        "> /dev/null",
        "1>/dev/null",
        ">>/dev/null",
        "&>/dev/null",
        ">/dev/null 2>&1",
        "3>x.log",
    ],
)
def test_other_redirects_are_not_writes(redirect: str) -> None:
    assert bash_intent(f"cat lib/a.js {redirect}") == read("lib/a.js")


def test_a_redirect_target_is_not_an_argument() -> None:
    assert bash_intent("cat lib/a.js 2>err.log") == read("lib/a.js")
    assert bash_intent("cat lib/a.js 2> err.log") == read("lib/a.js")
    assert bash_intent("cat lib/a.js 2>&1 | head -5") == read("lib/a.js")


@pytest.mark.parametrize("command", ['cat lib/a.js "2">out', "cat lib/a.js \\2>out", "cat lib/a.js x2>out"])
def test_an_fd_prefix_counts_only_as_unquoted_leading_digits(command: str) -> None:
    assert bash_intent(command) == NONE


def test_a_redirect_into_a_substituted_name_is_a_write() -> None:
    assert bash_intent('cat lib/a.js > "$(mktemp)"') == NONE


def test_a_redirect_cut_off_by_a_separator_has_no_target() -> None:
    # Unquoted `$(` ends the simple command, so `>` is left without a target.
    assert bash_intent("cat lib/a.js > $(mktemp)") == read("lib/a.js")
    assert bash_intent("tee >(cat lib/a.js)") == read("lib/a.js")


def test_a_write_anywhere_makes_the_whole_command_a_write() -> None:
    assert bash_intent("cat lib/a.js; echo done > log.txt") == NONE
    assert bash_intent("(cat lib/a.js) > out.txt") == NONE


# --- Intent ----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git grep foo -- lib/a.js",
        "git grep -n foo",
        "cat lib/a.js; git grep foo",
        "git grep foo > hits.txt",
    ],
)
def test_git_grep_is_a_search_before_anything_else(command: str) -> None:
    assert bash_intent(command) == SEARCH


@pytest.mark.parametrize(
    "command", ["git log --grep foo", "git commit -m grep", "git -C grep log", "git -C /repo grep foo"]
)
def test_other_git_commands_are_not_git_grep(command: str) -> None:
    assert bash_intent(command) == NONE


@pytest.mark.parametrize("program", ["cat", "bat", "head", "tail", "less", "more", "nl", "sed", "awk"])
def test_every_reader_reads_the_path_it_names(program: str) -> None:
    assert bash_intent(f"{program} 1p lib/a.js") == read("lib/a.js")
    assert bash_intent(f"{program} lib/a.js") == read("lib/a.js")


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("head -n 20 lib/a.js", "lib/a.js"),
        ("tail -20 lib/a.js", "lib/a.js"),
        ("tail -n +20 lib/a.js", "lib/a.js"),
        ("sed -n 100,200p lib/a.js", "lib/a.js"),
        ("cat lib/a.js lib/b.js", "lib/b.js"),
        ("cat lib/a.js README", "lib/a.js"),
        ("head --lines=5 lib/a.js", "lib/a.js"),
        ("cat -- lib/a.js", "lib/a.js"),
    ],
)
def test_the_read_path_is_the_last_path_like_argument(command: str, path: str) -> None:
    assert bash_intent(command) == read(path)


@pytest.mark.parametrize(
    "command", ["cat README", "cat Makefile LICENSE", "head -5", "cat 2024.log", "tail -f"]
)
def test_a_reader_without_a_path_like_argument_names_no_path(command: str) -> None:
    assert bash_intent(command) == NONE


def test_the_first_command_that_names_a_path_decides() -> None:
    assert bash_intent("cat lib/a.js; cat lib/b.js") == read("lib/a.js")
    assert bash_intent("tail -20; head lib/b.js") == read("lib/b.js")
    assert bash_intent("echo x | sed -n 1p; cat lib/b.js") == read("lib/b.js")


@pytest.mark.parametrize(
    "flag",
    ["-i", "-i.bak", "-ni", "-Ei", "-i''", "-i ''", "--in-place", "--in-place=.bak", "-n -i"],
)
def test_sed_in_place_is_an_edit_that_names_no_path(flag: str) -> None:
    assert bash_intent(f"sed {flag} 's/a/b/' lib/a.js") == NONE


def test_sed_in_place_lets_a_later_command_name_the_path() -> None:
    assert bash_intent("sed -i s/a/b/ lib/a.js && cat lib/b.js") == read("lib/b.js")


@pytest.mark.parametrize(
    "command",
    ["sed -es/i/x/ lib/a.js", "sed -fi.sed lib/a.js", "sed -li lib/a.js", "sed -n s/a/b/ -i lib/a.js"],
)
def test_any_short_sed_cluster_with_an_i_is_in_place(command: str) -> None:
    assert bash_intent(command) == NONE


@pytest.mark.parametrize(
    "command",
    [
        "sed -n -e s/i/x/p lib/a.js",
        "sed --silent lib/a.js",
        "sed --in-placed lib/a.js",
        "sed s/-i/x/ lib/a.js",
    ],
)
def test_other_sed_words_are_not_in_place(command: str) -> None:
    assert bash_intent(command) == read("lib/a.js")


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("git log | sed 's/a/b/'", "s/a/b/"),
        ("grep x lib | sed 's/^/x/'", "s/^/x/"),
        ("grep -n x lib | sed 's/^/> /'", "s/^/> /"),
        ("ps aux | awk '{print $2/1024}'", "{print $2/1024}"),
        ("sed 's/a/b/' README", "s/a/b/"),
        ("sed -f edit.sed", "edit.sed"),
    ],
)
def test_a_sed_or_awk_script_can_be_the_path(command: str, path: str) -> None:
    # The contract's argument rule knows no scripts; a read beats a search.
    assert bash_intent(command) == read(path)


def test_a_script_without_a_slash_or_dot_is_no_path() -> None:
    assert bash_intent("echo x | awk -F. '{print $1}'") == NONE
    assert bash_intent("git log | sed 's,a,b,'") == NONE


@pytest.mark.parametrize(
    ("command", "path"),
    [
        ("sed -e 's/a/b/' f.js", "f.js"),
        ("sed -e 's/a/b/' lib/a.js", "lib/a.js"),
        ("sed -f edit.sed lib/a.js", "lib/a.js"),
        ("sed --expression=1p lib/a.js", "lib/a.js"),
        ("awk -f prog.awk lib/a.js", "lib/a.js"),
        ("awk -v n=1.5 '{print}' lib/a.js", "lib/a.js"),
        ("awk '{print}' lib/a.js x=1.5", "x=1.5"),
        ("awk -F. '{print $1}' lib/a.js", "lib/a.js"),
    ],
)
def test_sed_and_awk_arguments_follow_the_plain_rule(command: str, path: str) -> None:
    assert bash_intent(command) == read(path)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("awk -i inplace '{print}' lib/a.js", read("lib/a.js")),
        ("awk --include=inplace '{print}' lib/a.js", read("lib/a.js")),
        ("gawk -i inplace '{print}' lib/a.js", NONE),
    ],
)
def test_awk_is_always_a_plain_reader(command: str, expected: Intent) -> None:
    assert bash_intent(command) == expected


def test_a_write_prevents_a_read() -> None:
    assert bash_intent("cat lib/a.js > lib/b.js") == NONE
    assert bash_intent("head -5 lib/a.js >> notes.md") == NONE


@pytest.mark.parametrize("program", ["grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "ls", "tree"])
def test_every_search_program_is_a_search(program: str) -> None:
    assert bash_intent(f"{program} x") == SEARCH


def test_a_write_does_not_prevent_a_search() -> None:
    assert bash_intent("ls -R lib > files.txt") == SEARCH
    assert bash_intent("find . -name '*.js' -exec cat {} \\; > all.txt") == SEARCH


def test_a_read_wins_over_a_search() -> None:
    assert bash_intent("grep -n x lib/a.js; sed -n 1,9p lib/a.js") == read("lib/a.js")
    assert bash_intent("rg -l x | xargs cat; cat lib/b.js") == read("lib/b.js")


@pytest.mark.parametrize("command", ["", "   ", "npm test", "echo lib/a.js", "python x.py", "cd lib && make"])
def test_anything_else_has_no_intent(command: str) -> None:
    assert bash_intent(command) == NONE


# --- Robustness ------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cat 'lib/a.js", read("lib/a.js")),
        ('cat "lib/a.js', read("lib/a.js")),
        ("cat $'lib/a.js", read("lib/a.js")),
        ("cat lib/a.js $(echo", read("lib/a.js")),
        ("echo `cat lib/a.js", read("lib/a.js")),
        ("cat ${x", NONE),
        ("cat lib/a.js \\", read("lib/a.js")),
        ('cat "lib/a.js\\', read("lib/a.js\\")),
        ("cat lib/a.js >", read("lib/a.js")),
        ("cat lib/a.js) )", read("lib/a.js")),
    ],
)
def test_an_unterminated_construct_ends_with_the_input(command: str, expected: Intent) -> None:
    assert bash_intent(command) == expected


@pytest.mark.parametrize("value", [None, 1, b"cat a.js", ["cat", "a.js"]])
def test_a_non_string_has_no_intent_and_invokes_nothing(value: object) -> None:
    assert bash_intent(value) == NONE  # type: ignore[arg-type]
    assert invokes(value) is False  # type: ignore[arg-type]


def test_no_input_string_makes_it_raise() -> None:
    pieces = [
        *" \t\n;&|()<>'\"\\$`#{}=-./01aic",
        "<<", "<<<", "$(", "$((", "${", "$'", "2>", "&>", ">&", "cat", "sed",
        "git", "grep", "sudo", "codegraph", "-i", "--",
    ]  # fmt: skip
    rng = random.Random(20240601)
    for _ in range(5000):
        command = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        intent = bash_intent(command)
        assert intent.kind in (None, "read", "search")
        assert (intent.path is not None) == (intent.kind == "read")
        assert isinstance(invokes(command), bool)


# --- invokes ---------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "./codegraph explore q",
        "FOO=1 codegraph",
        "npm test; codegraph status",
        "echo $(codegraph query x)",
        "(codegraph init)",
        "sudo /opt/bin/codegraph index",
        "'codegraph' explore q",
        "echo `codegraph query x`",
        "x=$(codegraph query x)",
        "cd /r && ~/bin/codegraph q",
        'X="$(codegraph q)"',
        "then codegraph q",
        # D10: what wraps the command is not the command
        "sudo -u app codegraph explore q",
        "if true; then codegraph q; fi",
        "for f in a b; do codegraph q $f; done",
        'echo "$(codegraph query x)"',
        "/usr/local/bin/codegraph status",
        "timeout 60 codegraph index",
        "find . | xargs codegraph q",
        "nohup codegraph serve &",
    ],
)
def test_a_command_word_of_codegraph_is_an_invocation(command: str) -> None:
    assert invokes(command)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'codegraph x'",
        "cat codegraph.md",
        "codegraph-server start",
        "ls /usr/bin/codegraph",
        "cat lib/a.js # codegraph explore",
        "mycodegraph x",
        # D10: a lookup, a header, arithmetic, quotes, a comment
        "command -v codegraph",
        "command -V codegraph",
        "for codegraph in a; do echo; done",
        "case $x in codegraph) echo;; esac",
        "echo $((codegraph + 1))",
        "echo '$(codegraph q)'",
        "# codegraph q",
        "",
    ],
)
def test_a_mention_of_codegraph_is_not_an_invocation(command: str) -> None:
    assert not invokes(command)


def test_invokes_looks_for_the_program_it_is_given() -> None:
    assert invokes("cd x && /usr/bin/rg foo", "rg")
    assert not invokes("codegraph explore q", "rg")
    assert not invokes("codegraph explore q", "")


# --- D10: what wraps a command is not the command ----------------------------
#
# Every example the contract gives, then the property: wrapping a read, a
# search or a command of no intent in any of these constructs never changes
# its intent, nor whether it invokes the codegraph CLI.


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
