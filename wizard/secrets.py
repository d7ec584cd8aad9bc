"""Secrets in a profile: stored as a reference to a variable, never as the value.

Environment: a profile keeps `HF_TOKEN = "env:HF_TOKEN"`: the launch reads the value from the
environment of the process that launches (`resolve_env`), screens and exports show `$HF_TOKEN`,
and a literal token typed or imported is turned into such a reference (`protect_env`) before it
is kept, saved or shown. Which names are secret: `is_secret_name` (HF_TOKEN, *_API_KEY, ...).

Flags: SGLang reads `--api-key` (and `--admin-api-key`, `--ssl-keyfile-password`: the options
`secret_flags()` lists, derived from the flag tables) only from its command line; no variable in
its env tables sets them. A profile keeps `--api-key env:SGLANG_WIZARD_API_KEY` in extra_args
(`protect_argv`); the launch puts the variable's value into the server's argv
(`resolve_argv`), screens show `"$SGLANG_WIZARD_API_KEY"`, a literal value shows as `***`.
This module is the one place that knows which names and flags are secret.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path

from wizard.sglang.errors import FlagDataError

#: A value of this form names the variable to read at launch: `env:HF_TOKEN`.
REF_PREFIX = "env:"
MASK = "***"

_SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|KEY|APIKEY|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|PRIVATE|AUTH)(?:_|$)",
    re.IGNORECASE,
)
_REF = re.compile(r"env:([A-Za-z_][A-Za-z0-9_]*)")
SECRET_FLAGS_FILE = Path(__file__).resolve().parent / "sglang" / "data" / "secret-flags.json"
#: The variable a secret flag's reference names by default: `--api-key` -> SGLANG_WIZARD_API_KEY
#: (read by the wizard at launch; SGLang itself reads no variable for these flags).
REFERENCE_VAR_PREFIX = "SGLANG_WIZARD_"

#: How a command-line word names a secret option: the option (`--api-key`) or None. The default
#: matches exact spellings (`--api-key`, `--api-key=X`); `wizard.sglang.render` passes one that
#: also resolves argparse prefixes through the release's flag table.
OptionOf = Callable[[str], "str | None"]


def is_secret_name(name: str) -> bool:
    """True for variable names that look like they hold a secret (HF_TOKEN, OPENAI_API_KEY, ...)."""
    return bool(_SECRET_NAME.search(name))


def reference_name(value: str) -> str | None:
    """The variable a reference names (`env:HF_TOKEN` -> `HF_TOKEN`), None for a plain value."""
    match = _REF.fullmatch(value)
    return match.group(1) if match else None


def protect_env(env: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """`env` with every literal secret value replaced by a reference to its own name, and the
    names that were replaced (an empty value is left alone: there is nothing to hide)."""
    out: dict[str, str] = {}
    moved: list[str] = []
    for name, value in env.items():
        if is_secret_name(name) and value and reference_name(value) is None:
            out[name] = REF_PREFIX + name
            moved.append(name)
        else:
            out[name] = value
    return out, moved


def display_value(name: str, value: str) -> str:
    """How screens and exports show a value: `$NAME` for a reference, `***` for a literal secret."""
    ref = reference_name(value)
    if ref is not None:
        return f"${ref}"
    return MASK if is_secret_name(name) and value else value


def display_env(env: Mapping[str, str]) -> dict[str, str]:
    """`display_value` for every variable."""
    return {name: display_value(name, value) for name, value in env.items()}


def unset_references(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> list[str]:
    """Variables that references name and that are not set in `environ` (default: this process)."""
    environ = os.environ if environ is None else environ
    names = (reference_name(v) for v in env.values())
    return [n for n in names if n is not None and n not in environ]


def resolve_env(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to launch with: references read from `environ` (default: this process);
    an unset one is left out, so the server sees it unset rather than the text `env:NAME`."""
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name, value in env.items():
        ref = reference_name(value)
        if ref is None:
            out[name] = value
        elif ref in environ:
            out[name] = environ[ref]
    return out


# ---------------------------------------------------------------------------------------------
# Secret-valued flags (--api-key ...)


class UnsetSecretError(ValueError):
    """A secret flag's reference names a variable that is not set where the launch runs."""

    def __init__(self, option: str, var: str) -> None:
        super().__init__(
            f"{option} reads ${var}, which is not set here: export {var}=... before launching "
            "(the profile keeps only the reference; SGLang would otherwise start without it)")
        self.option = option
        self.var = var


@cache
def secret_flags() -> dict[str, str]:
    """option -> dest of every secret-valued SGLang flag (`--api-key` -> `api_key`), from
    `sglang/data/secret-flags.json` (derived from the flag tables by
    `wizard.sglang.flags.secret_flag_data`)."""
    try:
        data = json.loads(SECRET_FLAGS_FILE.read_text(encoding="utf-8"))
        return {str(o): str(e["dest"]) for o, e in data["options"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        # a packaging problem, like a missing flag table (the file is committed, and a test
        # ties it to the tables); reading the tables here would make this module import flags
        raise FlagDataError(
            f"{SECRET_FLAGS_FILE}: missing or malformed ({exc}); "
            "`wizard.sglang.flags.write_secret_flags()` writes it again"
        ) from exc


def exact_secret_option(word: str) -> str | None:
    """The secret option `word` spells exactly (`--api-key`, `--api-key=X`), else None."""
    name = word.partition("=")[0]
    return name if name in secret_flags() else None


def reference_var(option: str) -> str:
    """The variable a reference for `option` names by default (`--api-key` ->
    `SGLANG_WIZARD_API_KEY`)."""
    dest = secret_flags().get(option) or option.lstrip("-").replace("-", "_")
    return REFERENCE_VAR_PREFIX + dest.upper()


def _secret_slots(argv: Sequence[str], option_of: OptionOf) -> Iterator[tuple[int, str, bool]]:
    """(index, option, inline) for each secret flag value in argv: argv[index] is the value, or
    for `--api-key=X` (inline) the whole word."""
    index = 0
    while index < len(argv):
        word = argv[index]
        option = option_of(word) if word.startswith("-") else None
        if option is None:
            index += 1
        elif "=" in word:
            yield index, option, True
            index += 1
        elif index + 1 < len(argv):
            yield index + 1, option, False
            index += 2
        else:
            index += 1


def _value_of(word: str, inline: bool) -> str:
    return word.partition("=")[2] if inline else word


def _with_value(word: str, inline: bool, value: str) -> str:
    return f"{word.partition('=')[0]}={value}" if inline else value


def protect_argv(argv: Sequence[str], option_of: OptionOf = exact_secret_option,
                 ) -> tuple[list[str], list[str]]:
    """argv with every literal secret flag value replaced by a reference
    (`--api-key sk-1` -> `--api-key env:SGLANG_WIZARD_API_KEY`), and the options replaced."""
    out = list(argv)
    moved: list[str] = []
    for index, option, inline in _secret_slots(argv, option_of):
        value = _value_of(argv[index], inline)
        if value and reference_name(value) is None:
            out[index] = _with_value(argv[index], inline, REF_PREFIX + reference_var(option))
            moved.append(option)
    return out, moved


def mask_argv(argv: Sequence[str], option_of: OptionOf = exact_secret_option) -> list[str]:
    """argv for screens, logs and records: literal secret flag values `***`, references kept."""
    out = list(argv)
    for index, _, inline in _secret_slots(argv, option_of):
        value = _value_of(argv[index], inline)
        if value and reference_name(value) is None:
            out[index] = _with_value(argv[index], inline, MASK)
    return out


def argv_references(argv: Sequence[str], option_of: OptionOf = exact_secret_option,
                    ) -> list[tuple[str, str]]:
    """(option, variable) of every secret flag whose value is a reference."""
    out = []
    for index, option, inline in _secret_slots(argv, option_of):
        ref = reference_name(_value_of(argv[index], inline))
        if ref is not None:
            out.append((option, ref))
    return out


def secret_argv_values(argv: Sequence[str], option_of: OptionOf = exact_secret_option,
                       ) -> dict[int, str]:
    """{index: value} of every secret flag value in argv (literal or reference text)."""
    return {i: _value_of(argv[i], inline) for i, _, inline in _secret_slots(argv, option_of)}


def secret_flag_slots(argv: Sequence[str], option_of: OptionOf = exact_secret_option,
                      ) -> list[tuple[int, str, str]]:
    """(index, option, value) of every secret flag value in argv; argv[index] holds the value
    (for `--api-key=X` the whole word)."""
    return [(i, option, _value_of(argv[i], inline))
            for i, option, inline in _secret_slots(argv, option_of)]


def resolve_argv(argv: Sequence[str], environ: Mapping[str, str] | None = None,
                 option_of: OptionOf = exact_secret_option) -> list[str]:
    """The argv to launch with: secret flag references read from `environ` (default: this
    process). An unset one is an `UnsetSecretError`: the server must not start without the key
    the profile asks for."""
    environ = os.environ if environ is None else environ
    out = list(argv)
    for index, option, inline in _secret_slots(argv, option_of):
        ref = reference_name(_value_of(argv[index], inline))
        if ref is None:
            continue
        if ref not in environ:
            raise UnsetSecretError(option, ref)
        out[index] = _with_value(argv[index], inline, environ[ref])
    return out


def mask_text(text: str, values: Sequence[str]) -> str:
    """`text` with every one of `values` replaced by `***` (longest first)."""
    for value in sorted(set(values), key=len, reverse=True):
        if value and value in text:
            text = text.replace(value, MASK)
    return text


def literal_secrets(env: Mapping[str, str], argv: Sequence[str],
                    option_of: OptionOf = exact_secret_option) -> list[str]:
    """The literal secret values (not references) in `env` and the secret flags of `argv`."""
    values = [v for k, v in env.items() if is_secret_name(k) and v and reference_name(v) is None]
    values += [v for _, _, v in secret_flag_slots(argv, option_of)
               if v and reference_name(v) is None]
    return values
