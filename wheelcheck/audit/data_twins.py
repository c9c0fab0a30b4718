"""Copies of a site-packages library that a wheel also installs as data, where their RPATH no longer reaches.

pydevd 3.4.1 ships ``pydevd_attach_to_process/attach_linux_x86.so`` in site-packages and the same library again as
``pydevd-3.4.1.data/data/pydevd_attach_to_process/attach_linux_x86.so``. auditwheel gave the data copy the RPATH
``$ORIGIN/../../../pydevd.libs``, right inside the unpacked wheel, but pip installs it to
``<prefix>/pydevd_attach_to_process/``, from where that entry leads above the prefix. The package loads its
site-packages copy, whose RPATH does reach ``pydevd.libs``: the wheel works, and the data copy would fail only if
something loaded it. So when the same library (file name, SONAME and needs) in site-packages finds what the data
copy cannot, the need is a warning that names the twin, not an external library that lowers the tag. A data
library without such a twin (tcmlib's libtcm.so in <prefix>/lib, which other distributions load) stays external.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from wheelcheck.audit.check_context import CheckContext
from wheelcheck.audit.findings import Finding
from wheelcheck.elf.elf_info import ElfInfo
from wheelcheck.wheel.library_resolution import Resolution
from wheelcheck.wheel.wheel_model import WheelModel

__all__ = ["site_packages_twin", "check_data_twins"]


def site_packages_twin(model: WheelModel, needer: ElfInfo | None, soname: str, elves: list[ElfInfo],
                       resolution: Resolution) -> ElfInfo | None:
    """The site-packages copy of ``needer`` (installed as data) that finds ``soname``; None when there is none."""
    if needer is None or not model.install_path(needer.path).startswith("/data/"):
        return None
    name = posixpath.basename(needer.path)
    for twin in elves:
        if posixpath.basename(twin.path) != name or not model.install_path(twin.path).startswith("/sp/"):
            continue
        if (twin.soname, twin.needed) != (needer.soname, needer.needed):
            continue
        judged = twin.path in resolution.roots or twin.path in resolution.loaded_from
        if judged and (twin.path, soname) in resolution.provided:
            return twin
    return None


def check_data_twins(context: CheckContext) -> Iterator[Finding]:
    by_path = {elf.path: elf for elf in context.elves}
    for path, soname in sorted(context.resolution.unresolved):
        twin = site_packages_twin(context.model, by_path.get(path), soname, context.elves, context.resolution)
        if twin is None:
            continue
        yield Finding(
            "data-copy-unreached", "warning", path,
            f"needs {soname}, which its {by_path[path].search_path_tag} does not reach where pip installs it "
            f"({context.model.install_path(path).replace('/data/', '<prefix>/', 1)}); the same library in "
            f"site-packages, {twin.path}, finds it, so the package's own copy loads, and this one fails only if "
            "something loads it", "drop the copy installed as data, or give it an RPATH that reaches the library "
            "from where the data lands", subject=soname,
            cause=f"is a data copy of {twin.path} that does not reach {soname}")
