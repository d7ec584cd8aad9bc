"""A small POSIX-shell reader for pasted launch commands: words, operators, quotes, continuations.

Not a shell: it splits text the way `sh` would split it into words (single quotes, double quotes,
backslashes, `\\<newline>` continuations, `#` comments) and operators (`&&`, `||`, `;`, `|`, `&`,
newlines, redirections such as `>`, `2>&1`, `&>`), and records where a word used an expansion
(`$VAR`, `$(...)`, backquotes) that only a shell could resolve. Expansions are kept as literal text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wizard.sglang.errors import CommandError

REDIRECTIONS = (">>", ">&", ">|", "<<", "<>", "&>>", "&>", ">", "<")


@dataclass(frozen=True)
class Word:
    """One shell word (quotes removed) or operator."""

    text: str
    kind: str = "word"  # "word", "op" (command separator) or "redir" (redirection operator)
    expansion: bool = False  # contains an unquoted or double-quoted `$...` / backquote
    quoted: bool = False  # some part was quoted or escaped (so `A=1` is not an assignment etc.)
    assignment: bool = False  # `NAME=value` with an unquoted NAME= part


def split_words(text: str) -> list[Word]:
    """Split shell text into words and operators; `CommandError` for unclosed quotes."""
    words: list[Word] = []
    i = 0
    n = len(text)
    buf: list[str] = []
    in_word = False
    expansion = False
    quoted = False
    assign_prefix_ok = True  # no quote seen yet in the NAME= part
    assignment = False

    def flush() -> None:
        nonlocal buf, in_word, expansion, quoted, assign_prefix_ok, assignment
        if in_word:
            words.append(Word("".join(buf), "word", expansion, quoted, assignment))
        buf = []
        in_word = False
        expansion = False
        quoted = False
        assign_prefix_ok = True
        assignment = False

    def note_assignment() -> None:
        nonlocal assignment
        if not assignment and assign_prefix_ok and is_name("".join(buf)):
            assignment = True

    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2  # line continuation
                continue
            if i + 1 < n and text[i + 1] == "\r" and i + 2 < n and text[i + 2] == "\n":
                i += 3
                continue
            if i + 1 >= n:
                i += 1  # a trailing backslash: nothing to escape
                continue
            buf.append(text[i + 1])
            in_word = True
            quoted = True
            assign_prefix_ok = assign_prefix_ok and assignment
            i += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise CommandError(
                    "unclosed single quote in the command",
                    flag=text[i : i + 20],
                    suggestion="close the quote, or paste the complete command",
                )
            buf.append(text[i + 1 : end])
            in_word = True
            quoted = True
            assign_prefix_ok = assign_prefix_ok and assignment
            i = end + 1
            continue
        if ch == "$" and i + 1 < n and text[i + 1] == "'":
            # ANSI-C quoting $'...'
            j = i + 2
            out: list[str] = []
            while j < n and text[j] != "'":
                if text[j] == "\\" and j + 1 < n:
                    out.append(_ansi_c_escape(text[j + 1]))
                    j += 2
                    continue
                out.append(text[j])
                j += 1
            if j >= n:
                raise CommandError(
                    "unclosed $'...' quote in the command", suggestion="close the quote"
                )
            buf.append("".join(out))
            in_word = True
            quoted = True
            assign_prefix_ok = assign_prefix_ok and assignment
            i = j + 1
            continue
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                c = text[j]
                if c == "\\" and j + 1 < n:
                    nxt = text[j + 1]
                    if nxt == "\n":
                        j += 2
                        continue
                    if nxt in '$`"\\':
                        buf.append(nxt)
                        j += 2
                        continue
                    buf.append(c)
                    j += 1
                    continue
                if c in "$`":
                    expansion = True
                buf.append(c)
                j += 1
            if j >= n:
                raise CommandError(
                    "unclosed double quote in the command",
                    flag=text[i : i + 20],
                    suggestion="close the quote, or paste the complete command",
                )
            in_word = True
            quoted = True
            assign_prefix_ok = assign_prefix_ok and assignment
            i = j + 1
            continue
        if ch == "#" and not in_word:
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch in " \t\r":
            flush()
            i += 1
            continue
        # operators and redirections (only outside words or right after a word: `cmd>log`)
        op = _operator_at(text, i)
        if op is not None:
            # `2>` / `2>&1`: a digit-only word right before a redirection is its fd
            if op in REDIRECTIONS and in_word and not quoted and "".join(buf).isdigit():
                fd = "".join(buf)
                buf = []
                in_word = False
                flush()
                words.append(Word(fd + op, "redir"))
            else:
                flush()
                words.append(Word(op, "redir" if op in REDIRECTIONS else "op"))
            i += len(op)
            continue
        if ch == "$" or ch == "`":
            expansion = True
        if ch == "=":
            note_assignment()
        buf.append(ch)
        in_word = True
        i += 1
    flush()
    return words


_OPERATOR_START = frozenset(";|&\n<>()")


def _operator_at(text: str, i: int) -> str | None:
    if text[i] not in _OPERATOR_START:
        return None
    for op in ("&>>", "&&", "||", ";;", ">>", ">&", ">|", "<<", "<>", "&>"):
        if text.startswith(op, i):
            return op
    ch = text[i]
    if ch in ";|&\n<>":
        return ch
    if ch == "(" or ch == ")":
        return ch
    return None


def _ansi_c_escape(ch: str) -> str:
    return {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}.get(
        ch, "\\" + ch
    )


def is_name(text: str) -> bool:
    """A shell variable name: ASCII letters, digits and `_`, not starting with a digit."""
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return False
    return all(c.isalnum() or c == "_" for c in text) and text.isascii()


def split_commands(words: list[Word]) -> list[list[Word]]:
    """Split a word list at command separators (`&&`, `;`, `|`, `&`, newline, ...).

    A trailing `&` stays attached to its command (as the last word) so callers can note it.
    """
    commands: list[list[Word]] = []
    current: list[Word] = []
    for word in words:
        if word.kind == "op":
            if word.text == "&":
                current.append(word)
            if current:
                commands.append(current)
            current = []
            continue
        current.append(word)
    if current:
        commands.append(current)
    return commands


def is_run_prefix(words: Sequence[str]) -> int | None:
    """The index of `run` when the words start a `docker run` / `podman run` (after `sudo`)."""
    for index, word in enumerate(words[:-1]):
        if word in ("docker", "podman") or word.endswith(("/docker", "/podman")):
            return index + 1 if words[index + 1] == "run" else None
        if word != "sudo":
            return None
    return None
