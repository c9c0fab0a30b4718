"""The built wheel of wheelcheck carries its policies: install it into a fresh venv and audit elsewhere. The base
install (no extras) does everything but hide symbols (the hide extra, LIEF) and validate policies (the validate
extra, jsonschema), and says so in one line naming the extra. The wheel and the sdist carry the license
(LICENSE) and the third-party notices (NOTICE) with PEP 639 metadata naming them."""

from __future__ import annotations

import email.parser
import fnmatch
import json
import re
import subprocess
import sys
import tarfile
import zipfile

from tests.helpers import ROOT, source_copy


LICENSE_FILES = ("LICENSE", "NOTICE")


def assert_license_metadata(text: str) -> None:
    """Core metadata 2.4 (PEP 639): the license as an SPDX expression, each license file named."""
    metadata = email.parser.Parser().parsestr(text)
    assert metadata["Metadata-Version"] in ("2.4", "2.5"), metadata["Metadata-Version"]
    assert metadata["License-Expression"] == "MIT" and metadata["License"] is None
    assert metadata.get_all("License-File") == list(LICENSE_FILES)


def test_license_and_notices_name_their_holders():
    assert "Copyright (c) 2026 The wheelcheck authors" in (ROOT / "LICENSE").read_text(encoding="utf-8")
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    # auditwheel's MIT notice, as its LICENSE file gives it, for the policy data in policies/
    assert "Copyright (c) 2016 Robert T. McGibbon <rmcgibbo@gmail.com>" in notice
    # every shipped data file made from another project's data (its "source" says from what) is listed
    listed = [pattern.strip(" .") for line in re.findall(r"^Files: (.+?)(?: \(|$)", notice, re.MULTILINE)
              for pattern in re.split(r",| and ", line)]
    made_from = [p for p in sorted((ROOT / "policies").glob("*.json")) + sorted((ROOT / "wheelcheck" / "data").glob("*.json"))
                 if isinstance(doc := json.loads(p.read_text(encoding="utf-8")), dict) and doc.get("source")]
    assert len(made_from) > 15
    for path in made_from:
        relative = path.relative_to(ROOT).as_posix()
        assert any(fnmatch.fnmatch(relative, pattern) for pattern in listed), f"NOTICE does not list {relative}"


def test_metadata_names_the_project_pages():
    """PyPI's sidebar and `pip show` point to the source, the docs, the changelog and the tracker that an
    internal error's one line names (wheelcheck/cli/entry.py)."""
    import tomllib

    from wheelcheck.cli.entry import ISSUES_URL

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    urls = project["urls"]
    assert set(urls) == {"Homepage", "Documentation", "Issues", "Changelog", "Source"}
    assert urls["Issues"] == ISSUES_URL
    assert all(url.startswith(ISSUES_URL.removesuffix("/issues")) for url in urls.values()), urls
    assert project["authors"] and project["maintainers"]


def test_sdist_carries_license_files(tmp_path):
    subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path), str(source_copy(tmp_path / "src"))],
                   check=True, capture_output=True, text=True, timeout=600)
    (sdist,) = tmp_path.glob("wheelcheck-*.tar.gz")
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/", 1)[0]
        for name in LICENSE_FILES:
            member = tar.extractfile(f"{top}/{name}")
            assert member is not None and member.read() == (ROOT / name).read_bytes(), name
        pkg_info = tar.extractfile(f"{top}/PKG-INFO")
        assert pkg_info is not None
        assert_license_metadata(pkg_info.read().decode())


def test_installed_wheel_ships_policies_and_audits(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(ROOT)],
                   check=True, capture_output=True, text=True)
    (wheel,) = dist.glob("wheelcheck-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    policies = sorted(n for n in names if n.startswith("wheelcheck/policies/") and n.endswith(".json"))
    shipped = sorted(p.name for p in (ROOT / "policies").glob("*.json"))
    assert [n.rsplit("/", 1)[1] for n in policies] == shipped
    assert "wheelcheck/report/audit-schema.json" in names
    (dist_info,) = {n.split("/", 1)[0] for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    for name in LICENSE_FILES:
        assert zipfile.ZipFile(wheel).read(f"{dist_info}/licenses/{name}") == (ROOT / name).read_bytes(), name
    assert_license_metadata(zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode())

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, text=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sample = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-linux_x86_64.whl"
    tagged = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"
    proc = subprocess.run([venv / "bin" / "wheelcheck", "audit", "--format", "json", str(tagged)],
                          cwd=elsewhere, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["wheels"][0]["deserved_tag"] == "manylinux_2_31_x86_64"
    listed = subprocess.run([venv / "bin" / "wheelcheck", "policy", "list", "--format", "json"], cwd=elsewhere,
                            capture_output=True, text=True, check=True)
    assert len(json.loads(listed.stdout)) == len(shipped) - 1  # schema.json is not a policy

    # the base install: no LIEF, no jsonschema; every other command works
    python = venv / "bin" / "python"
    for module in ("lief", "jsonschema"):
        assert subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode != 0, module
    out = tmp_path / "wheelhouse"
    proc = subprocess.run([venv / "bin" / "wheelcheck", "repair", "-w", str(out), str(sample)], cwd=elsewhere,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p.name for p in out.glob("*.whl")] == ["demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"]
    for command in (["show", str(sample)], ["config"], ["rules"], ["policy", "show", "manylinux2014"]):
        proc = subprocess.run([venv / "bin" / "wheelcheck", *command], cwd=elsewhere, capture_output=True, text=True)
        assert proc.returncode == 0, (command, proc.stderr)
    proc = subprocess.run([venv / "bin" / "wheelcheck", "repair", "--hide-symbols", "-w", str(tmp_path / "h"),
                           str(sample)], cwd=elsewhere, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == "" and not (tmp_path / "h").exists()
    assert proc.stderr == ("wheelcheck: error: --hide-symbols: needs LIEF, which is not installed: "
                           "pip install 'wheelcheck[hide]'\n")
    proc = subprocess.run([venv / "bin" / "wheelcheck", "policy", "validate"], cwd=elsewhere, capture_output=True,
                          text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "pip install 'wheelcheck[validate]'" in proc.stderr
