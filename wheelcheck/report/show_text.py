"""``wheelcheck show``: auditwheel show's text and JSON, for people who type it from habit.

The text follows auditwheel 6.8.2's sentences and wrapping, so a reader (or a script grepping for
'is consistent with the following platform tag') sees what they expect; the JSON is auditwheel's
document, key for key.
"""

from __future__ import annotations

import json
from textwrap import wrap

from wheelcheck.audit.show_view import ShowView
from wheelcheck.errors import one_line
from wheelcheck.report.escaping import json_text, text_line

__all__ = ["render_show_text", "render_show_json"]


def render_show_json(view: ShowView) -> str:
    return json_text(view.as_auditwheel_json(), indent=4)  # auditwheel indents by 4


def render_show_text(view: ShowView, *, verbose: int = 0) -> str:
    out: list[str] = []

    def para(text: str) -> None:  # one_line first: a name's line break is shown, not wrapped on
        out.append("")
        out.append("\n".join(wrap(one_line(text), break_long_words=False, break_on_hyphens=False)))

    if view.pure:
        para(f"{view.wheel} is a pure wheel: it holds no ELF file, so any platform tag is consistent with it.")
        _variant(view, para)
        return _end(out)
    para(f'{view.wheel} is consistent with the following platform tag: "{view.overall_tag}".')
    _variant(view, para)
    linux_only = [
        (view.pyfpe, "This wheel uses the PyFPE_jbuf function, which is not compatible with the manylinux/musllinux "
                     "tags. (see https://www.python.org/dev/peps/pep-0513/#fpectl-builds-vs-no-fpectl-builds)"),
        (view.ucs2, "This wheel is compiled against a narrow unicode (UCS2) version of Python, which is not "
                    "compatible with the manylinux/musllinux tags."),
        (view.unsupported_isa, "This wheel depends on unsupported ISA extensions."),
    ]
    for applies, sentence in linux_only:
        if applies:
            para(sentence)
            if verbose < 1:
                return _end(out)
    if not view.versioned_symbols:
        para("The wheel references no external versioned symbols from system-provided shared libraries.")
    else:
        listed = ", ".join(f"{lib} with versions {_set(versions)}" for lib, versions in view.versioned_symbols.items())
        para(f"The wheel references external versioned symbols in these system-provided shared libraries: {listed}")
    if view.symbols_limit:
        para(f'This constrains the platform tag to "{view.sym_tag}". In order to achieve a more compatible tag, '
             "you would need to recompile a new wheel from source on a system with earlier versions of these "
             "libraries, such as a recent manylinux image.")
        if verbose < 1:
            return _end(out)
    if not view.external_libs_newest:
        para("The wheel requires no external shared libraries! :)")
    else:
        para("The following external shared libraries are required by the wheel:")
        out.append(json.dumps(view.external_libs_newest, indent=4))
    for tag, upgrade in view.policy_upgrades.items():
        name = tag
        if upgrade.get("libs_to_eliminate"):
            para(f"In order to achieve the tag platform tag {name!r} the following shared library dependencies "
                 "will need to be eliminated:")
            para(", ".join(upgrade["libs_to_eliminate"]))
        if upgrade.get("blacklisted_symbols"):
            para(f"In order to achieve the tag platform tag {name!r} the following black-listed symbol "
                 "dependencies will need to be eliminated:")
            for lib, symbols in upgrade["blacklisted_symbols"].items():
                para(f"From {lib}: " + ", ".join(symbols))
    return _end(out)


def _variant(view: ShowView, para) -> None:
    """A variant wheel's label and what its binaries say of each property (auditwheel reads no such wheel)."""
    if view.variant is None:
        return
    props = view.variant["properties"]
    if props is None:
        para(f"It is the variant {view.variant['label']!r} (PEP 825); its variant metadata does not say what the "
             "label means.")
        return
    said = "; ".join(f"{p['property']}: {p['status']}" for p in props) or "no property (the null variant)"
    para(f"It is the variant {view.variant['label']!r} (PEP 825). Its properties, judged against its binaries: "
         f"{said}.")


def _set(versions: list[str]) -> str:
    """A Python set's repr, as auditwheel prints it, but sorted (a set's own order varies by run)."""
    return "{" + ", ".join(repr(v) for v in sorted(versions)) + "}"


def _end(out: list[str]) -> str:
    """The report, each line through text_line: wrapping may start a line with a name."""
    return "".join(text_line(line) + "\n" for line in "\n".join(out).split("\n"))
