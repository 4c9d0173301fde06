"""What a Bash command line does to files: read one, search, or neither.

The reference harness matches regular expressions against the raw command
line, which misreads quotes and redirects.  This module tokenizes the line
far enough to see its simple commands and their words, exactly as the
contract ("Shell intent (Bash)" in the sufficiency spec, improvement D1)
states it, and no further:

- quotes and backslashes group words; inside quotes nothing is an operator,
  not even ``$(`` or a backtick;
- ``;``, ``&``, ``&&``, ``|``, ``||``, newline, ``(``, ``)``, ``$(`` and
  backticks are flat separators of simple commands (nothing nests);
- only leading ``sudo`` and ``NAME=value`` words are dropped, so a shell
  keyword such as ``then`` is a command word;
- command words match the reader and search sets exactly (``/bin/cat`` is
  not ``cat``); only :func:`invokes` accepts a path ending in ``/program``;
- the read path is picked by the contract's argument rule alone, for sed and
  awk too: a sed or awk script containing ``/`` or ``.`` can be the path;
- ``#`` starts no comment: the contract's word rules have none.

These literal choices are deliberate: where the contract and real shell
behaviour differ, the contract wins, because the results are checked
against an implementation that follows it to the letter.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Intent", "bash_intent", "invokes"]


class Intent(NamedTuple):
    """A command's file intent: ``kind`` is "read", "search" or None."""

    kind: str | None = None
    path: str | None = None  # only for kind == "read": the path, unquoted


_NONE = Intent(None, None)
_SEARCH = Intent("search", None)

_READERS = frozenset({"cat", "bat", "head", "tail", "less", "more", "nl", "sed", "awk"})
_SEARCHERS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "ls", "tree"})

_BLANKS = " \t\r\f\v"
_DIGITS = frozenset("0123456789")
# Runs of characters that can't start quoting, an operator or an expansion;
# consuming them in one step keeps long command lines cheap.
_PLAIN_RUN = re.compile(r"[^ \t\r\f\v\n;&|()<>'\"\\$`]+")
_DQ_RUN = re.compile(r'[^"\\]+')
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

# What the word after a redirect operator is.
_ARG = 1  # `<` / `<<<`: an ordinary argument (the contract says so)
_OUT = 2  # stdout to a file: a write unless /dev/null
_DUP_OUT = 3  # `>&x`: fd duplication when x is a number, else like _OUT
_DROP = 4  # stderr and other fds, `<&n`: neither write nor argument


def _tokenize(line: str) -> tuple[list[list[str]], bool]:
    """Split ``line`` into simple commands (lists of words) and a write flag.

    Commands come in the order they start.  ``$(``, ``)``, ``(`` and
    backticks separate simple commands just as ``;`` does: nothing nests, so
    in ``cat $(echo x) lib/a.js`` the words after ``)`` are a command of
    their own (``lib/a.js``), not more arguments of ``cat``.
    """
    words: list[str] = []
    commands: list[list[str]] = [words]
    buf: list[str] = []
    have_word = False  # distinguishes an empty quoted word from no word
    quoted = False  # any quoting in the current word: `"2">x` has no fd prefix
    pending = 0  # what the next word is for, after a redirect operator
    in_dq = False
    write = False
    n = len(line)
    i = 0

    def flush() -> None:
        nonlocal have_word, quoted, pending, write
        if not have_word:
            return
        word = "".join(buf)
        buf.clear()
        have_word = quoted = False
        kind, pending = pending, 0
        if kind == 0 or kind == _ARG:
            words.append(word)
        elif kind == _OUT:
            write = write or word != "/dev/null"
        elif kind == _DUP_OUT:
            is_fd = word == "-" or (word != "" and all(c in _DIGITS for c in word))
            write = write or not (is_fd or word == "/dev/null")

    def end_command() -> None:
        # A redirect operator left without a target word (`cat a.js > $(x)`)
        # redirects nothing: the command is not a write.
        nonlocal words, pending
        flush()
        pending = 0
        if words:
            words = []
            commands.append(words)

    while i < n:
        c = line[i]
        if in_dq:
            # Inside double quotes only `"` and backslash are special: `$(`
            # and backticks are plain text (the contract: nothing inside
            # quotes is an operator).
            m = _DQ_RUN.match(line, i)
            if m:
                buf.append(m.group())
                i = m.end()
                continue
            if c == '"':
                in_dq = False
                i += 1
            else:  # a backslash
                nxt = line[i + 1 : i + 2]
                if nxt in ('"', "\\", "$", "`"):
                    buf.append(nxt)
                elif nxt != "\n":
                    # POSIX keeps the backslash before any other character.
                    buf.append("\\" + nxt)
                i += 2
            continue

        m = _PLAIN_RUN.match(line, i)
        if m:
            # No comments: `#` is an ordinary character, as the contract's
            # word rules have it (`cat a.js # b.js` names b.js last).
            buf.append(m.group())
            have_word = True
            i = m.end()
            continue
        nxt = line[i + 1 : i + 2]
        if c in _BLANKS:
            flush()
            i += 1
        elif c == "'":
            close = line.find("'", i + 1)
            close = n if close < 0 else close
            buf.append(line[i + 1 : close])
            have_word = quoted = True
            i = close + 1
        elif c == '"':
            in_dq = True
            have_word = quoted = True
            i += 1
        elif c == "\\":
            if nxt and nxt != "\n":
                buf.append(nxt)
                have_word = quoted = True
            i += 2
        elif c == "$":
            if nxt == "(" and line[i + 2 : i + 3] != "(":
                # `$(` is a separator, like `(`; `$((` is arithmetic, a word.
                end_command()
                i += 2
            else:
                quoted = quoted or nxt == "'"
                i = _dollar(line, i, buf)
                have_word = True
        elif c in ";|\n()`":
            end_command()
            i += 1
        elif c == "&":
            if nxt == ">":
                flush()
                i += 3 if line[i + 2 : i + 3] == ">" else 2
                pending = _OUT
            else:
                end_command()
                i += 1
        else:  # c is ">" or "<"
            digits = "".join(buf) if have_word and not quoted else ""
            fd_prefix = digits != "" and all(ch in _DIGITS for ch in digits)
            if fd_prefix:
                stdout = digits == "1"
                buf.clear()
                have_word = False
            else:
                flush()
                stdout = True
            if c == ">":
                pending = (_DUP_OUT if nxt == "&" else _OUT) if stdout else _DROP
                i += 2 if nxt in (">", "|", "&") else 1
            elif nxt == "<":
                if line[i + 2 : i + 3] == "<":
                    pending = _ARG
                    i += 3
                else:
                    # A heredoc's body is data the command writes somewhere;
                    # none of it is shell syntax worth parsing.
                    write = True
                    break
            elif nxt == "&":
                pending = _DROP
                i += 2
            else:
                pending = _ARG
                i += 2 if nxt == ">" else 1
    flush()
    return [w for w in commands if w], write


def _dollar(line: str, i: int, buf: list[str]) -> int:
    """Consume the expansion starting at ``line[i] == "$"``; return the new index."""
    nxt = line[i + 1 : i + 2]
    if nxt == "(":
        return _arithmetic(line, i, buf)
    if nxt == "{":
        # `${x:-a;b}` is one word; its `;` is not a separator.
        close = line.find("}", i + 2)
        close = len(line) - 1 if close < 0 else close
        buf.append(line[i : close + 1])
        return close + 1
    if nxt == "'":
        # ANSI-C quoting: backslash escapes, so `\'` does not end it.
        j = i + 2
        n = len(line)
        while j < n and line[j] != "'":
            if line[j] == "\\" and j + 1 < n:
                j += 1
            buf.append(line[j])
            j += 1
        return j + 1
    buf.append("$")
    return i + 1


def _arithmetic(line: str, i: int, buf: list[str]) -> int:
    """Consume ``$((...))`` at ``line[i]`` as word text; return the new index."""
    # Its `<<` and `>` are shifts and comparisons, not heredocs or redirects.
    depth = 0
    n = len(line)
    j = i + 1
    while j < n:
        if line[j] == "(":
            depth += 1
        elif line[j] == ")":
            depth -= 1
            if depth == 0:
                break
        j += 1
    buf.append(line[i : j + 1])
    return j + 1


def _argv(words: list[str]) -> list[str]:
    """Drop the leading words that are not the command: sudo and NAME=value."""
    start = 0
    for word in words:
        if word == "sudo" or _ASSIGNMENT.match(word):
            start += 1
        else:
            break
    return words[start:]


def _is_git_grep(argv: list[str]) -> bool:
    # Literally `git grep ...` (D3). `git -C dir grep` is left out on purpose:
    # the contract names the two words, and verdicts must agree with it.
    return len(argv) > 1 and argv[1] == "grep"


def _sed_in_place(args: list[str]) -> bool:
    """D2: `--in-place[=SUF]`, or a short-option cluster containing `i`."""
    for arg in args:
        if arg == "--in-place" or arg.startswith("--in-place="):
            return True
        if arg.startswith("-") and not arg.startswith("--") and "i" in arg:
            # `-i`, `-i.bak`, `-ni`, and also `-es/i/x/`: the contract does
            # not tell an option's value from its flags.
            return True
    return False


def _read_path(argv: list[str]) -> str | None:
    """The path a reader command names, per the contract's argument rule.

    Every reader, sed and awk included, gets the same rule: drop arguments
    starting with `-` or a digit; the path is the last remaining one that
    contains `/` or `.`.  No option takes a value here, so a sed or awk
    script (`s/a/b/`) or an awk `x=1.5` operand can be the path.
    """
    args = argv[1:]
    if argv[0] == "sed" and _sed_in_place(args):
        return None
    for arg in reversed(args):
        if arg and arg[0] != "-" and arg[0] not in _DIGITS and ("/" in arg or "." in arg):
            return arg
    return None


def _commands(command: object) -> tuple[list[list[str]], bool]:
    if not isinstance(command, str):
        return [], False
    commands, write = _tokenize(command)
    return [argv for argv in map(_argv, commands) if argv], write


def bash_intent(command: str) -> Intent:
    """Classify a Bash command line as a read of one path, a search, or neither."""
    argvs, write = _commands(command)
    # Command words match exactly: `/bin/cat` is not `cat` here.
    if any(argv[0] == "git" and _is_git_grep(argv) for argv in argvs):
        return _SEARCH
    if not write:
        for argv in argvs:
            if argv[0] in _READERS:
                path = _read_path(argv)
                if path is not None:
                    return Intent("read", path)
    if any(argv[0] in _SEARCHERS for argv in argvs):
        return _SEARCH
    return _NONE


def invokes(command: str, program: str = "codegraph") -> bool:
    """True when a simple command's command word is ``program`` or a path
    ending in ``/program`` (after dropping leading sudo and NAME=value words)."""
    if not isinstance(program, str) or not program:
        return False
    argvs, _ = _commands(command)
    suffix = "/" + program
    return any(argv[0] == program or argv[0].endswith(suffix) for argv in argvs)
