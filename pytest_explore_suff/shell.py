"""What a Bash command line does to files: read one, search, or neither.

The reference harness matches regular expressions against the raw command
line, which misreads quotes and redirects.  This module tokenizes the line
far enough to see its simple commands and their words, exactly as the
contract ("Shell intent (Bash)" in the sufficiency spec, improvement D1)
states it, and no further:

- quotes and backslashes group words; inside single quotes nothing is an
  operator; inside double quotes only a command substitution, ``$(...)`` or
  backquotes, is parsed (its commands are simple commands of the line), and
  ``$((...))`` is arithmetic text;
- ``;``, ``&``, ``&&``, ``|``, ``||``, newline, ``(``, ``)``, ``$(`` and
  backticks are flat separators of simple commands (nothing nests);
- an unquoted ``#`` that starts a word begins a comment, to the end of the line;
- D10: what wraps a command is not the command. Reserved words at the start
  of a simple command (``if then elif else do while until ! {``, ``time``
  with ``-p``) are dropped; ``fi``, ``done``, ``esac``, ``}`` alone are no
  command; ``for``/``select`` headers and ``case WORD in`` (with the case's
  patterns) are not commands. Wrappers are dropped with their own options
  and operands (``sudo``, ``env``, ``command``, ``exec``, ``nohup``,
  ``nice``, ``timeout``, ``stdbuf``, ``xargs``), as are ``NAME=value``
  assignments; ``command -v``/``-V`` runs nothing;
- a command word that is a path (``/bin/cat``) is its basename;
- the read path is picked by the contract's argument rule alone, for sed and
  awk too: a sed or awk script containing ``/`` or ``.`` can be the path.

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
_DQ_RUN = re.compile(r'[^"\\$`]+')
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")

# What the word after a redirect operator is.
_ARG = 1  # `<` / `<<<`: an ordinary argument (the contract says so)
_OUT = 2  # stdout to a file: a write unless /dev/null
_DUP_OUT = 3  # `>&x`: fd duplication when x is a number, else like _OUT
_DROP = 4  # stderr and other fds, `<&n`: neither write nor argument


#: Nesting of command substitutions inside double quotes parsed, at most
#: (deeper ones stay text: no input may exhaust the stack).
_MAX_DEPTH = 32
#: Reserved words dropped at the start of a simple command (D10).
_RESERVED = frozenset({"if", "then", "elif", "else", "do", "while", "until", "!", "{"})
#: Reserved words that, alone, are no command.
_CLOSERS = frozenset({"fi", "done", "esac", "}"})
_HEADERS = frozenset({"for", "select"})
#: First words that may start shell structure (headers, patterns, closers).
_STRUCTURE_WORDS = _RESERVED | _HEADERS | {"time", "case", "esac"}


def _core(words: list[str]) -> list[str]:
    """The words of a simple command after its leading reserved words (``time -p`` among them)."""
    i = 0
    while i < len(words):
        if words[i] in _RESERVED:
            i += 1
        elif words[i] == "time":
            i += 2 if words[i + 1 : i + 2] == ["-p"] else 1
        else:
            break
    return words[i:]


class _Case:
    """Where the tokenizer is in ``case WORD in PATTERN) ... ;; esac`` constructs."""

    __slots__ = ("depth", "pattern")

    def __init__(self) -> None:
        self.depth = 0  # open cases
        self.pattern = False  # the next words up to `)` are a pattern


def _tokenize(line: str, depth: int = 0) -> tuple[list[list[str]], bool]:
    """Split ``line`` into simple commands (lists of words) and a write flag.

    Commands come in the order they start.  ``$(``, ``)``, ``(`` and
    backticks separate simple commands just as ``;`` does: nothing nests, so
    in ``cat $(echo x) lib/a.js`` the words after ``)`` are a command of
    their own (``lib/a.js``), not more arguments of ``cat``. A substitution
    inside double quotes is parsed on its own, its commands listed after the
    command whose word holds it (which keeps the substitution as text).
    Headers and case patterns are dropped here, where the separator that
    ends a simple command is known.
    """
    words: list[str] = []
    commands: list[list[str]] = [words]
    buf: list[str] = []
    have_word = False  # distinguishes an empty quoted word from no word
    quoted = False  # any quoting in the current word: `"2">x` has no fd prefix
    pending = 0  # what the next word is for, after a redirect operator
    in_dq = False
    write = False
    case = _Case()
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

    def end_command(sep: str = ";") -> None:
        # A redirect operator left without a target word (`cat a.js > $(x)`)
        # redirects nothing: the command is not a write.
        nonlocal words, pending
        flush()
        pending = 0
        _structure(words, sep, case)
        if words:
            words = []
            commands.append(words)

    def substitution(body: str) -> None:
        nonlocal write
        if depth >= _MAX_DEPTH:
            return
        inner, inner_write = _tokenize(body, depth + 1)
        commands.extend(inner)
        write = write or inner_write

    while i < n:
        c = line[i]
        if in_dq:
            # Inside double quotes only `"`, backslash, `$(` and backticks are
            # special: a substitution's commands are commands of the line (D10).
            m = _DQ_RUN.match(line, i)
            if m:
                buf.append(m.group())
                i = m.end()
                continue
            if c == '"':
                in_dq = False
                i += 1
            elif c == "$":
                if line[i + 1 : i + 2] == "(" and line[i + 2 : i + 3] != "(":
                    close = _substitution_end(line, i + 2)
                    buf.append(line[i : close + 1])
                    substitution(line[i + 2 : close])
                    i = close + 1
                elif line[i + 1 : i + 2] == "(":
                    i = _arithmetic(line, i, buf)  # `$((...))`: arithmetic, no command
                else:
                    buf.append("$")
                    i += 1
            elif c == "`":
                close = _backquote_end(line, i + 1)
                buf.append(line[i : close + 1])
                substitution(_BACKQUOTED_ESCAPE.sub(r"\1", line[i + 1 : close]))
                i = close + 1
            else:  # a backslash
                nxt = line[i + 1 : i + 2]
                if nxt in ('"', "\\", "$", "`"):
                    buf.append(nxt)
                elif nxt != "\n":
                    # POSIX keeps the backslash before any other character.
                    buf.append("\\" + nxt)
                i += 2
            continue

        if c == "#" and not have_word:
            # A comment, to the end of the line (the newline still separates).
            at = line.find("\n", i)
            i = n if at < 0 else at
            continue
        m = _PLAIN_RUN.match(line, i)
        if m:
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
                end_command("(")
                i += 2
            else:
                quoted = quoted or nxt == "'"
                i = _dollar(line, i, buf)
                have_word = True
        elif c == ";":
            if case.depth and nxt in (";", "&"):
                # `;;`, `;&`, `;;&` end a case item: a pattern comes next.
                end_command(";")
                case.pattern = True
                i += 3 if line[i + 1 : i + 3] == ";&" else 2
            else:
                end_command(";")
                i += 1
        elif c in "|\n()`":
            end_command(c)
            i += 1
        elif c == "&":
            if nxt == ">":
                flush()
                i += 3 if line[i + 2 : i + 3] == ">" else 2
                pending = _OUT
            else:
                end_command("&")
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
    _structure(words, "\n", case)
    return [w for w in commands if w], write


def _structure(words: list[str], sep: str, case: _Case) -> None:
    """Empty ``words`` (in place) when the simple command is shell structure, not a command (D10):
    a ``for``/``select`` header, a ``case WORD in`` header, a case pattern (the words before its
    ``)``, alternatives split by ``|``), or a closing ``esac``. ``sep`` is what ended the command."""
    if not words or (not case.pattern and words[0] not in _STRUCTURE_WORDS):
        return  # most simple commands: a plain command word
    core = _core(words)
    if not core:
        return
    head = core[0]
    if case.pattern:
        if head == "esac":  # `;; esac`: the case ends where a pattern could have come
            case.depth -= 1
            case.pattern = False
            words.clear()
        elif sep in "|)":
            case.pattern = sep == "|"  # `a|b)`: more of the pattern after `|`
            words.clear()
        else:
            case.pattern = False  # not a pattern after all: an ordinary command
        return
    if head == "case":
        if len(core) >= 3 and core[2] == "in":
            case.depth += 1
            # Words after `in` start the first pattern, which `)` ends and `|` continues.
            case.pattern = len(core) == 3 or sep == "|"
        words.clear()
    elif head in _HEADERS:
        words.clear()
    elif head == "esac" and case.depth:
        case.depth -= 1


_WORD_START = frozenset(" \t\n;&|(")
_WORD_END = frozenset(" \t\n;&|)")


def _keyword_at(line: str, j: int, word: str, start: int) -> bool:
    """Whether ``word`` stands at ``line[j]`` as a word of its own."""
    end = j + len(word)
    return (
        line.startswith(word, j)
        and (j == start or line[j - 1] in _WORD_START)
        and (end == len(line) or line[end] in _WORD_END)
    )


def _substitution_end(line: str, j: int) -> int:
    """The index of the ``)`` that closes the ``$(`` whose body starts at ``j`` (``len(line)``
    when it is never closed). Quotes, nested parentheses and substitutions are skipped, and
    so are the ``)`` that end case patterns (between ``case`` and ``esac``)."""
    start = j
    # Open levels: '"' inside double quotes, else the number of open cases in a parenthesis.
    stack: list[str | int] = [0]
    n = len(line)
    while j < n:
        c = line[j]
        if c == "\\":
            j += 2
            continue
        if c == "`":
            j = _backquote_end(line, j + 1) + 1
            continue
        top = stack[-1]
        if top == '"':
            if c == '"':
                stack.pop()
            elif c == "$" and line[j + 1 : j + 2] == "(":
                stack.append(0)
                j += 1
        elif c == "'":
            close = line.find("'", j + 1)
            j = n if close < 0 else close
        elif c == '"':
            stack.append('"')
        elif c == "(":
            stack.append(0)
        elif c == ")":
            if isinstance(top, int) and top > 0:
                pass  # a case pattern's `)`
            else:
                stack.pop()
                if not stack:
                    return j
        elif isinstance(top, int) and c in "ce":
            if _keyword_at(line, j, "case", start):
                stack[-1] = top + 1
            elif top and _keyword_at(line, j, "esac", start):
                stack[-1] = top - 1
        j += 1
    return n


_BACKQUOTED = re.compile(r"(?:[^\\`]|\\.)*", re.DOTALL)


def _backquote_end(line: str, j: int) -> int:
    """The index of the backquote that closes one opened before ``j`` (``len(line)``: none;
    a backslash escapes the next character)."""
    m = _BACKQUOTED.match(line, j)
    return m.end() if m is not None else j


# Inside backquotes a backslash quotes only `\`, `` ` ``, `$` (and `"` within double quotes).
_BACKQUOTED_ESCAPE = re.compile(r'\\([\\`$"])')


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


class _Wrapper(NamedTuple):
    """How a wrapper command's own options read: which take a value."""

    short: str = ""  # option letters whose value is the rest of the word, or the next word
    long: frozenset[str] = frozenset()  # long options whose value is the next word (without `=`)
    attached: str = ""  # letters whose optional value can only be the rest of the word
    operands: int = 0  # words after the options that belong to the wrapper (timeout's duration)


#: D10: wrappers, dropped with their own options and operands. ``command -v``
#: and ``-V`` are handled apart (they only look a command up).
_SUDO_LONG = frozenset(
    [
        "--user",
        "--group",
        "--prompt",
        "--close-from",
        "--other-user",
        "--role",
        "--type",
        "--chdir",
        "--chroot",
        "--command-timeout",
        "--host",
    ]
)
_XARGS_LONG = frozenset(
    ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"]
)
_WRAPPERS = {
    "sudo": _Wrapper("ugpCUrtDRT", _SUDO_LONG),
    "env": _Wrapper("uCS", frozenset({"--unset", "--chdir", "--split-string"})),
    "command": _Wrapper(),
    "exec": _Wrapper("a"),
    "nohup": _Wrapper(),
    "nice": _Wrapper("n", frozenset({"--adjustment"})),
    "timeout": _Wrapper("sk", frozenset({"--signal", "--kill-after"}), operands=1),
    "stdbuf": _Wrapper("ioe", frozenset({"--input", "--output", "--error"})),
    "xargs": _Wrapper("aEdILnPs", _XARGS_LONG, attached="eil"),
    "time": _Wrapper(),  # the reserved word, with its `-p`
}


def _command_name(word: str) -> str:
    """A command word named by a path (``/bin/cat``) is its basename."""
    if "/" not in word:
        return word
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def _options(words: list[str], i: int, wrapper: _Wrapper, dash_is_option: bool) -> int:
    """The index of the first word after a wrapper's options (and operands) from ``words[i]``."""
    n = len(words)
    while i < n:
        word = words[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or (word == "-" and not dash_is_option):
            break
        i += 1
        if word.startswith("--"):
            if "=" not in word and word in wrapper.long:
                i += 1  # its value
            continue
        for at, letter in enumerate(word[1:], 1):
            if letter in wrapper.attached:
                break  # the rest of the word, if any, is its value
            if letter in wrapper.short:
                if at == len(word) - 1:
                    i += 1  # the value is the next word
                break
    return min(i + wrapper.operands, n)


def _argv(words: list[str]) -> list[str]:
    """The simple command's own words: without what wraps it (D10).

    Leading reserved words, ``NAME=value`` assignments and wrappers (with
    their options and operands) are dropped, in any order and as often as
    they come; a closing reserved word alone (``fi``, ``done``, ``esac``,
    ``}``) and ``command -v NAME`` leave no command. The command word is
    given as its basename when it is a path.
    """
    i = 0
    n = len(words)
    while i < n:
        word = words[i]
        if word in _RESERVED or _ASSIGNMENT.match(word):
            i += 1
            continue
        name = _command_name(word)
        wrapper = _WRAPPERS.get(name)
        if wrapper is None:
            if name in _CLOSERS:
                return []  # `fi`, `done`, `esac`, `}` (with any redirect targets): no command
            return [name, *words[i + 1 :]]
        if (
            name == "command"
            and i + 1 < n
            and words[i + 1].startswith("-")
            and ("v" in words[i + 1] or "V" in words[i + 1])
        ):
            return []  # `command -v NAME`: a lookup, nothing is run
        i = _options(words, i + 1, wrapper, dash_is_option=name == "env")
    return []


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
    # Command words are basenames already (`/bin/cat` is `cat`), wrappers dropped.
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


_QUOTING = str.maketrans("", "", "'\"\\")


def _may_name(command: str, program: str) -> bool:
    """Whether some word of ``command`` can be ``program``: quote removal only ever deletes
    quotes, backslashes and escaped newlines, so the program's name is in what is left."""
    return program in command or program in command.replace("\\\n", "").translate(_QUOTING)


def invokes(command: str, program: str = "codegraph") -> bool:
    """True when a simple command's command word is ``program`` or a path
    ending in ``/program`` (after dropping what wraps it, as for `bash_intent`:
    ``sudo -u app codegraph q`` invokes it, ``command -v codegraph`` does not)."""
    if not isinstance(program, str) or not program:
        return False
    if not isinstance(command, str) or not _may_name(command, program):
        return False  # most commands: no word of them can be the program, no parse needed
    argvs, _ = _commands(command)
    suffix = "/" + program
    return any(argv[0] == program or argv[0].endswith(suffix) for argv in argvs)
