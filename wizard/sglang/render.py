"""Write a `Profile` as an SGLang launch: argv, env, a copy-pasteable shell command, `--config` YAML.

Flags use the chosen version's spelling (`--mamba-scheduler-strategy`, or
`--mamba-radix-cache-strategy` where the release renamed it), only fields that differ from the profile defaults are
written, in the stable order of `wizard.sglang.fields.FIELDS`, followed by `extra_args` as typed.
The shell form quotes every piece with `shlex.quote`, so `parse_command(render_shell(p))` gives
back the same launch (paths with spaces, quotes, `$()`, newlines included).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from wizard.profile_schema import Profile, field_default
from wizard.secrets import (
    MASK,
    OptionOf,
    UnsetSecretError,
    display_env,
    display_value,
    exact_secret_option,
    mask_argv,
    reference_name,
    resolve_argv,
    resolve_env,
    secret_argv_values,
)
from wizard.sglang.errors import FlagDataError, RenderError
from wizard.sglang.fields import BY_DEST, FIELDS, FieldSpec, canonical_dest
from wizard.sglang.flags import (
    FlagAction,
    FlagTable,
    group_pieces,
    load_table,
    secret_option_of,
)
from wizard.sglang.releases import release_for
from wizard.sglang.versions import VersionError, resolve_version
from wizard.yaml_text import argv_value
from wizard.yaml_text import dump as dump_yaml

LAUNCH_MODULE = "sglang.launch_server"


def _table_for(profile: Profile, version: str | None) -> tuple[str, FlagTable]:
    wanted = version or profile.sglang_version
    try:
        supported, _ = resolve_version(wanted)
        return supported, load_table(supported)
    except VersionError as exc:
        raise RenderError(str(exc), version=wanted) from None
    except FlagDataError as exc:
        raise RenderError(str(exc), version=wanted) from None


@cache
def _default_of(spec: FieldSpec) -> Any:
    """The profile model's default for a field (what "not written" means)."""
    return field_default(spec.path)


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _flag_pieces(flag: FlagAction, value: Any, path: str, version: str) -> list[str]:
    option = flag.primary
    kind = flag.kind
    if isinstance(value, bool) and kind in {
        "store_true",
        "deprecated_store_true",
        "boolean_optional",
        "store_const",
    }:
        if value:
            return [option]
        if kind == "boolean_optional":
            return ["--no-" + option[2:]]
        raise RenderError(
            f"{path} = false cannot be written for SGLang {version}: {option} only switches on",
            field=path,
            version=version,
        )
    if isinstance(value, list):
        texts = [_scalar_text(v) for v in value]
        if not texts:
            raise RenderError(f"{path} is an empty list", field=path, version=version)
        if len(texts) == 1 and texts[0].startswith("-"):
            return [f"{option}={texts[0]}"]
        if any(t.startswith("-") for t in texts):
            raise RenderError(
                f"{path}: list items starting with '-' cannot be passed to {option}",
                field=path,
                version=version,
            )
        return [option, *texts]
    text = _scalar_text(value)
    if text.startswith("-") or text == "":
        return [f"{option}={text}"]
    return [option, text]


def _field_groups(profile: Profile, supported: str, table: FlagTable) -> list[list[str]]:
    groups: list[list[str]] = []
    for spec in FIELDS:
        value = profile.get(spec.path)
        if value is None or value == _default_of(spec):
            continue
        dest = spec.dest_for(supported)
        if dest is None:
            raise RenderError(
                f"{spec.path} has no flag in SGLang {supported} (its flag table has none of "
                f"{', '.join(spec.spellings())}); "
                "remove it from the profile or choose another version",
                field=spec.path,
                version=supported,
            )
        flag = table.by_dest.get(dest)
        if flag is None:
            raise RenderError(
                f"{spec.path}: SGLang {supported}'s flag table has no field {dest!r}",
                field=spec.path,
                version=supported,
            )
        groups.append(_flag_pieces(flag, value, spec.path, supported))
    return groups


def _extra_groups(profile: Profile, supported: str, table: FlagTable) -> list[list[str]]:
    """extra_args split into per-flag groups; a flag that a profile field holds is refused."""
    groups = group_pieces(table, profile.extra_args)
    for match, _ in groups:
        if match is None:
            continue
        spec = BY_DEST.get(canonical_dest(match.action.server_field))
        if spec is not None and spec.dest_for(supported) == match.action.server_field:
            raise RenderError(
                f"extra_args sets {match.option}, which is the profile field {spec.path}; "
                f"set {spec.path} instead",
                field="extra_args",
                version=supported,
            )
    return [pieces for _, pieces in groups]


def _launch_groups(profile: Profile, version: str | None) -> tuple[str, FlagTable, list[list[str]]]:
    """(supported version, its flag table, the argv as per-flag groups: fields, then extra_args)."""
    supported, table = _table_for(profile, version)
    groups = _field_groups(profile, supported, table) + _extra_groups(profile, supported, table)
    return supported, table, groups


def render_argv(profile: Profile, version: str | None = None) -> list[str]:
    """The flags after `python -m sglang.launch_server` for `version` (default: the profile's),
    secret flags as the profile holds them (a reference `env:NAME`; see `launch_argv`)."""
    _, _, groups = _launch_groups(profile, version)
    return [piece for group in groups for piece in group]


def profile_secret_option_of(profile: Profile) -> OptionOf:
    """`secret_option_of` for the profile's release (exact spellings when it has no table)."""
    try:
        return secret_option_of(_table_for(profile, None)[1])
    except RenderError:
        return exact_secret_option


def launch_argv(profile: Profile, version: str | None = None,
                environ: Mapping[str, str] | None = None) -> list[str]:
    """The argv the server process gets: `render_argv` with secret flag references read from
    `environ` (default: this process). A reference to an unset variable is a RenderError:
    the server must not start without the key the profile asks for."""
    supported, table, groups = _launch_groups(profile, version)
    argv = [piece for group in groups for piece in group]
    try:
        return resolve_argv(argv, environ, secret_option_of(table))
    except UnsetSecretError as exc:
        raise RenderError(str(exc), field="extra_args", version=supported) from None


def shell_words(argv: list[str], *, reveal: bool = False,
                option_of: OptionOf = exact_secret_option) -> list[str]:
    """argv as shell words for display: a secret flag's reference as `"$NAME"` (the shell
    reads the variable), a literal secret value `***` unless `reveal`, the rest quoted."""
    secret = secret_argv_values(argv, option_of)
    words = []
    for index, piece in enumerate(argv):
        if index not in secret:
            words.append(shlex.quote(piece))
            continue
        value = secret[index]
        head = piece[: len(piece) - len(value)]  # `--api-key=` of an inline value, else ""
        ref = reference_name(value)
        if ref is not None:
            shown = f'"${ref}"'
        else:
            shown = shlex.quote(value if reveal or not value else MASK)
        words.append(shlex.quote(head) + shown if head else shown)
    return words


def _group_lines(groups: list[list[str]], reveal: bool, option_of: OptionOf) -> list[str]:
    words = shell_words([p for g in groups for p in g], reveal=reveal, option_of=option_of)
    lines, at = [], 0
    for group in groups:
        lines.append(" ".join(words[at:at + len(group)]))
        at += len(group)
    return lines


def render_env(profile: Profile) -> dict[str, str]:
    """The environment variables to set for the launch: the profile's, with secret references
    (`env:HF_TOKEN`) read from this process's environment (`wizard.secrets.resolve_env`)."""
    return resolve_env(profile.env)


def shell_env(env: Mapping[str, str], reveal: bool = False) -> str:
    """`NAME=value` words for display: references as `"$NAME"` (the shell reads the variable),
    literal secrets masked unless `reveal` (`command --show-secrets`)."""
    words = []
    for name, value in env.items():
        ref = reference_name(value)
        literal = value if reveal else display_value(name, value)
        shown = f'"${ref}"' if ref is not None else shlex.quote(literal)
        words.append(f"{name}={shown}")
    return " ".join(words)


def quote_interpreter(python: str) -> str:
    if python.startswith("~/"):
        return "~/" + shlex.quote(python[2:])
    return shlex.quote(python)


def render_shell(profile: Profile, *, multiline: bool = True, version: str | None = None,
                 show_secrets: bool = False) -> str:
    """The exact shell command: env prefix + `python3 -m sglang.launch_server` + argv, quoted
    (literal secret values masked unless `show_secrets`)."""
    _, table, groups = _launch_groups(profile, version)
    env = shell_env(profile.env, reveal=show_secrets)
    head = f"{quote_interpreter(profile.ssh.python)} -m {LAUNCH_MODULE}"
    if env:
        head = f"{env} {head}"
    lines = [head, *_group_lines(groups, show_secrets, secret_option_of(table))]
    if multiline:
        return " \\\n  ".join(lines)
    return " ".join(lines)


def render_argv_json(profile: Profile, version: str | None = None) -> str:
    """`{"env": {...}, "argv": ["python3", "-m", "sglang.launch_server", ...]}` as JSON
    (secrets as the screens show them: `$NAME` for a reference, `***` for a literal)."""
    _, table, groups = _launch_groups(profile, version)
    option_of = secret_option_of(table)
    flat = [piece for group in groups for piece in group]
    shown = mask_argv(flat, option_of)
    for index, value in secret_argv_values(shown, option_of).items():
        ref = reference_name(value)
        if ref is not None:
            shown[index] = shown[index][: len(shown[index]) - len(value)] + f"${ref}"
    argv = [profile.ssh.python, "-m", LAUNCH_MODULE, *shown]
    return json.dumps(
        {"env": display_env(profile.env), "argv": argv}, ensure_ascii=False, indent=2
    )


# ---------------------------------------------------------------------------------------------
# SGLang's own --config YAML


@dataclass
class YamlForm:
    """A `--config` YAML file and what must stay on the command line."""

    text: str
    command_line_only: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


def _yaml_key_ok(flag: FlagAction, supported: str) -> str | None:
    """The YAML key SGLang's config reader turns back into this flag, or None if it cannot."""
    kind = flag.kind
    key = flag.primary[2:]
    if release_for(supported).behaviour.config_reader != "option_keys":
        if kind == "store_true":
            names = [o[2:] for o in flag.long_options if o[2:].replace("-", "_") == flag.dest]
            return names[0] if names else None
        return key if kind == "store" else None
    if kind in {"store_true", "store"}:
        return key
    if flag.nargs is None and kind not in {"boolean_optional", "help", "version"}:
        return key
    return None


def render_yaml_form(profile: Profile, version: str | None = None) -> YamlForm:
    """The `--config` YAML (keys = flag names without `--`) plus the pieces YAML cannot carry.

    Secret flags (`--api-key`) stay on the command line, as `"$NAME"` (a reference) or `***`:
    a YAML file cannot read a variable, and the value is never written."""
    supported, table, groups = _launch_groups(profile, version)
    option_of = secret_option_of(table)
    data: dict[str, Any] = {}
    cli_only: list[str] = []
    for group in groups:
        match = table.match_safe(group[0])
        if match is None or option_of(group[0]) is not None:
            cli_only.extend(group)
            continue
        flag = match.action
        key = _yaml_key_ok(flag, supported)
        values = list(group[1:])
        if match.explicit_value is not None:
            values.insert(0, match.explicit_value)
        if key is None or key in data or any(_read_as_option(v) for v in values):
            # SGLang splices `--key value` into argv: a value argparse would read as an
            # option ("expected one argument") must stay on the command line as --flag=value
            cli_only.extend(group)
            continue
        if flag.kind == "store_true":
            data[key] = True
        elif flag.nargs in ("+", "*") or (isinstance(flag.nargs, int) and flag.nargs > 1):
            if not values:
                cli_only.extend(group)
                continue
            data[key] = [argv_value(v) for v in values]
        elif len(values) == 1:
            data[key] = argv_value(values[0])
        else:
            cli_only.extend(group)
    start = f"# start: {quote_interpreter(profile.ssh.python)} -m {LAUNCH_MODULE} --config THIS_FILE.yaml"
    if cli_only:
        start += " " + " ".join(shell_words(cli_only, option_of=option_of))
    header = [
        f"# SGLang {supported} --config file"
        + (f" for: {_short(profile.description)}" if profile.description.strip() else ""),
        start,
    ]
    if profile.env:
        env = shell_env(profile.env)
        header.append(f"# environment (not part of --config, set it in the shell): {env}")
    header = [_comment_safe(h) for h in header]
    text = "\n".join(header) + "\n" + (dump_yaml(data) if data else "")
    return YamlForm(text, mask_argv(cli_only, option_of), display_env(profile.env))


def _short(text: str, limit: int = 90) -> str:
    first = text.strip().splitlines()[0]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."


def _comment_safe(text: str) -> str:
    """One comment line: control and line-break characters shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")  # argparse's _negative_number_matcher


def _read_as_option(value: str) -> bool:
    return value.startswith("-") and not _NEGATIVE_NUMBER.match(value)


def render_yaml(profile: Profile, version: str | None = None) -> str:
    """SGLang's own `--config` YAML form of the profile (see `render_yaml_form`)."""
    return render_yaml_form(profile, version).text


def config_args_like_sglang(data: dict[str, Any], table: FlagTable) -> list[str]:
    """What SGLang's `ConfigArgumentMerger` turns parsed YAML data into (for tests and preview).

    Mirrors the release's `server_args_config_parser.py` (its `config_reader` trait: `dest_keys`
    readers know store_true flags by their dest, `option_keys` ones by every option spelling):
    booleans of store_true flags add the flag, other booleans become `--key true/false`, lists
    become `--key a b c`, everything else `--key str(value)`.
    """
    store_true = {a.dest for a in table.actions if a.kind == "store_true"}
    if release_for(table.version).behaviour.config_reader == "option_keys":
        store_true |= {
            o[2:].replace("-", "_")
            for a in table.actions
            if a.kind == "store_true"
            for o in a.long_options
        }
    args: list[str] = []
    for key, value in data.items():
        if isinstance(value, bool):
            if key.replace("-", "_") in store_true:
                if value:
                    args.append(f"--{key}")
            else:
                args.extend([f"--{key}", str(value).lower()])
        elif isinstance(value, list):
            if value:
                args.append(f"--{key}")
                args.extend(str(v) for v in value)
        else:
            args.extend([f"--{key}", str(value)])
    return args
