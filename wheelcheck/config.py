"""Project defaults from ``[tool.wheelcheck]`` in pyproject.toml; the command line overrides them.

For ``repair``, auditwheel's environment variables sit between the two, as auditwheel reads them:
``$AUDITWHEEL_PLAT`` (which the manylinux and musllinux images set) and ``$AUDITWHEEL_ZIP_COMPRESSION_LEVEL``.
``audit`` does not read them: a gate must not change with the image it runs in.

Each effective setting remembers where it came from (default, pyproject.toml, $VARIABLE, command line), so
``wheelcheck config`` can say so.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wheelcheck.audit.audit_options import PYPI_SIZE_LIMIT
from wheelcheck.audit.findings import Relaxation
from wheelcheck.audit.suppression import Suppressions, read_baseline
from wheelcheck.errors import UsageError

__all__ = ["ENVIRONMENT", "SETTINGS", "Setting", "Settings", "find_pyproject", "load_settings", "relaxations",
           "known_rules", "suppressions_of"]


@dataclass(frozen=True)
class Setting:
    key: str
    kind: type  # str, bool, int, list (of str) or dict (of str to list of str)
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    is_path: bool = False  # relative paths in pyproject.toml are relative to its folder, not the cwd
    env: str | None = None  # auditwheel's variable for it, read by repair between the table and the command line
    bounds: tuple[int, int] | None = None  # for kind int: the allowed range, inclusive


SETTINGS = {s.key: s for s in (
    Setting("policy-file", str, None, "judge against the policies in this JSON file", is_path=True),
    Setting("plat", str, None, "the tag or policy every wheel must meet (audit) or be repaired to (repair)",
            env="AUDITWHEEL_PLAT"),
    Setting("exclude", list, [], "sonames treated as provided by the system or another wheel"),
    Setting("lib-path", list, [], "directories to read external libraries from", is_path=True),
    Setting("hide-symbols", bool, False, "repair: hide and rename the symbols of vendored libraries"),
    Setting("fail-on", str, "error", "the lowest finding severity that fails a wheel",
            ("error", "warning", "info")),
    Setting("format", str, "text", "output format", ("text", "json", "sarif", "markdown")),
    Setting("zip-compression-level", int, 6, "repair: deflate level of changed and new members",
            env="AUDITWHEEL_ZIP_COMPRESSION_LEVEL", bounds=(0, 9)),
    Setting("any-platform-tag", bool, False,
            "audit: the target index takes platform tags the package index refuses (linux_*)"),
    Setting("max-wheel-size", int, PYPI_SIZE_LIMIT, "audit: the wheel size in MB above which a wheel-size warning is given",
            bounds=(1, 1_000_000)),
    Setting("isa-level", str, None, "audit: the x86-64 level the wheels claim: code that needs more, with no CPU check "
                                    "found, is an error (isa-instructions)", ("v1", "v2", "v3", "v4")),
    Setting("ignore", list, [], "audit: rule ids whose findings are suppressed (counted and named in the report)"),
    Setting("per-file-ignores", dict, {}, "audit: member globs to rule ids suppressed in those members"),
    Setting("baseline", str, None, "audit: a baseline file of known findings, which are suppressed", is_path=True),
    Setting("license-files", dict, {}, "repair: libraries (a soname or file name) to the license file their graft "
                                       "carries, a file of the project's own folder"),
)}

# Variables wheelcheck reads besides the settings' own: name -> what it does (shown by `wheelcheck config`)
ENVIRONMENT = {
    "AUDITWHEEL_PLAT": "repair: the target when --plat is not given; the manylinux/musllinux images set it",
    "AUDITWHEEL_ZIP_COMPRESSION_LEVEL": "repair: the deflate level when -z is not given",
    "AUDITWHEEL_LD_LIBRARY_PATH": "repair: searched for libraries before LD_LIBRARY_PATH, with --ldpaths too",
    "LD_LIBRARY_PATH": "repair: searched for libraries after the RPATHs, as the loader does; not with --ldpaths",
}


@dataclass(frozen=True)
class Settings:
    values: Mapping[str, Any]
    sources: Mapping[str, str]  # key -> "default" | "<path>" | "command line"

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def relaxations(settings: Settings, excluded: Iterable[str], policy_names: Iterable[str],
                suppressed: Iterable[Any] = ()) -> list[Relaxation]:
    """The settings of a run that a configuration file made more lenient than the defaults, each with its source
    and what it did there (``excluded``: the needed libraries ``exclude`` let through): a repository's
    pyproject.toml is its contributors' to change, so a gate says when it was relaxed. What the command line or
    the environment set is the job's own choice, and is not listed."""
    relaxing = _relaxing(settings, excluded, policy_names) + _suppressing(settings, list(suppressed))
    return [r for r in relaxing if _from_a_file(settings.sources[r.setting])]


def _suppressing(settings: Settings, suppressed: list[Any]) -> list[Relaxation]:
    out = []
    for key, shown in (("ignore", json.dumps(settings["ignore"])),
                       ("per-file-ignores", json.dumps(settings["per-file-ignores"])),
                       ("baseline", json.dumps(settings["baseline"]))):
        if settings[key]:
            count = sum(1 for s in suppressed if s.by.split()[0] == key)
            out.append(Relaxation(key, shown, settings.sources[key],
                                  f"{count} finding{'s' * (count != 1)} suppressed"))
    return out


def _from_a_file(source: str) -> bool:
    return source not in ("default", "command line") and not source.startswith("$")


def _relaxing(settings: Settings, excluded: Iterable[str], policy_names: Iterable[str]) -> list[Relaxation]:
    out = []
    if settings["exclude"]:
        names = sorted(set(excluded))
        effect = (f"{len(names)} needed librar{'y' if len(names) == 1 else 'ies'} taken as provided, not judged "
                  f"({_listed(names)})" if names else "no needed library matched")
        out.append(Relaxation("exclude", json.dumps(settings["exclude"]), settings.sources["exclude"], effect))
    if settings["any-platform-tag"]:
        out.append(Relaxation("any-platform-tag", "true", settings.sources["any-platform-tag"],
                              "platform tags the package index refuses (linux_*) pass"))
    if settings["max-wheel-size"] > SETTINGS["max-wheel-size"].default:
        out.append(Relaxation("max-wheel-size", str(settings["max-wheel-size"]), settings.sources["max-wheel-size"],
                              f"wheels up to {settings['max-wheel-size']} MB pass without a wheel-size warning"))
    if settings["policy-file"]:
        out.append(Relaxation("policy-file", json.dumps(settings["policy-file"]), settings.sources["policy-file"],
                              f"wheels judged against its policies ({_listed(sorted(policy_names))}) instead of "
                              "the bundled ones"))
    return out


def known_rules(rules: Iterable[str], where: str) -> list[str]:
    """``rules`` if each is a rule id of the rules reference; a UsageError naming the first that is not, so a typo
    never silently suppresses nothing."""
    from wheelcheck.data import load_table

    ids = {rule["id"] for rule in load_table("rules.json")["rules"]}
    rules = list(rules)
    for rule in rules:
        if rule not in ids:
            raise UsageError(where, f"{rule!r} is no rule id (`wheelcheck rules` lists them)")
    return rules


def suppressions_of(settings: Settings) -> Suppressions:
    """The suppressions ``settings`` ask for, the baseline file read."""
    baseline = settings["baseline"]
    return Suppressions(ignore=tuple(settings["ignore"]),
                        per_file=tuple((glob, tuple(rules)) for glob, rules in settings["per-file-ignores"].items()),
                        baseline=read_baseline(baseline) if baseline else frozenset(),
                        sources={"ignore": settings.sources["ignore"],
                                 "per-file-ignores": settings.sources["per-file-ignores"],
                                 "baseline": str(baseline or "")})


def _listed(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_settings(pyproject: Path | None, overrides: Mapping[str, Any], *, command: str = "audit",
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Defaults, then ``[tool.wheelcheck]`` of ``pyproject``, then (for ``command`` "repair") auditwheel's
    environment variables, then ``overrides`` (values not None)."""
    values = {key: s.default for key, s in SETTINGS.items()}
    sources = {key: "default" for key in SETTINGS}
    if pyproject is not None:
        for key, value in _read_table(pyproject).items():
            values[key] = value
            sources[key] = str(pyproject)
    if command == "repair":
        environ = os.environ if environ is None else environ
        for key, setting in SETTINGS.items():
            raw = environ.get(setting.env or "", "").strip()
            if raw:
                values[key] = _from_environment(setting, raw)
                sources[key] = f"${setting.env}"
    for key, value in overrides.items():
        if value is not None and value != [] and key in SETTINGS:
            values[key] = value
            sources[key] = "command line"
    return Settings(values, sources)


def _read_table(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs have no configuration file to read
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(str(path), f"cannot read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(str(path), f"not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays and tables
        raise UsageError(str(path), "not valid TOML (nested too deep)") from None
    table = doc.get("tool", {}).get("wheelcheck", {})
    if not isinstance(table, dict):
        raise UsageError(str(path), "[tool.wheelcheck] must be a table")
    out = {}
    for key, value in table.items():
        setting = SETTINGS.get(key)
        if setting is None:
            known = ", ".join(SETTINGS)
            raise UsageError(str(path), f"[tool.wheelcheck] has an unknown key '{key}' (known: {known})")
        value = _checked(path, setting, value)
        if setting.is_path:
            value = _relative_to(path.parent, value)
        out[key] = value
    return out


def _from_environment(setting: Setting, raw: str) -> Any:
    if setting.kind is not int:
        return raw
    try:
        value = int(raw)
    except ValueError:
        value = None
    low, high = setting.bounds or (value, value)
    if value is None or low is None or high is None or not low <= value <= high:
        raise UsageError(f"${setting.env}", f"{raw!r} is not a whole number from {low} to {high}")
    return value


def _relative_to(folder: Path, value: Any) -> Any:
    if isinstance(value, list):
        return [_relative_to(folder, v) for v in value]
    return str(folder / Path(value).expanduser())


def _checked(path: Path, setting: Setting, value: Any) -> Any:
    where = f"[tool.wheelcheck] {setting.key}"
    if setting.key == "license-files":
        return _license_files(path, where, value)
    if setting.kind is dict:
        if not isinstance(value, dict):
            raise UsageError(str(path), f"{where} must be a table of member globs to rule ids")
        table = {}
        for glob, rules in value.items():
            rules = [rules] if isinstance(rules, str) else rules
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                raise UsageError(str(path), f"{where} {glob!r} must be a rule id or a list of rule ids")
            table[glob] = known_rules(rules, f"{path}: {where}")
        return table
    if setting.kind is list:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(str(path), f"{where} must be a string or a list of strings")
        return known_rules(value, f"{path}: {where}") if setting.key == "ignore" else value
    if setting.kind is bool and not isinstance(value, bool):
        raise UsageError(str(path), f"{where} must be true or false")
    if setting.kind is int:
        low, high = setting.bounds or (value, value)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise UsageError(str(path), f"{where} must be a whole number from {low} to {high}, not {value!r}")
    if setting.kind is str and not isinstance(value, str):
        raise UsageError(str(path), f"{where} must be a string")
    if setting.choices and value not in setting.choices:
        raise UsageError(str(path), f"{where} must be one of {', '.join(setting.choices)}, not {value!r}")
    return value


def _license_files(path: Path, where: str, value: Any) -> dict[str, str]:
    """The table of library -> license file, each file inside the folder of ``path``: the repository's settings
    choose which of its own files a published wheel carries, never a file elsewhere on the machine (the command
    line's --license-file may name any)."""
    if not isinstance(value, dict):
        raise UsageError(str(path), f"{where} must be a table of library names to license files")
    folder = path.parent.resolve()
    out = {}
    for lib, file in value.items():
        if not isinstance(file, str):
            raise UsageError(str(path), f"{where} {lib!r} must be a path to a license file")
        given = path.parent / Path(file)
        if not given.resolve().is_relative_to(folder):
            raise UsageError(str(path), f"{where} {lib!r}: {file!r} is outside the project's folder {folder} "
                                        "(give such a file with --license-file)")
        out[lib] = str(given)
    return out
