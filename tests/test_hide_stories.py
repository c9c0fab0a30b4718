"""The two stories of repair --hide-symbols, for real: pip-installed wheels imported in fresh processes.

Each story's wheels A and B vendor libraries that export the same names with different behaviour. First
the collision is shown to happen (repaired without --hide-symbols, under RTLD_GLOBAL), then shown gone
(repaired with it) in every import order, under RTLD_LAZY and RTLD_NOW, with and without RTLD_GLOBAL,
and with a third, unrepaired copy of the library loaded globally first.
"""

from __future__ import annotations

import itertools
import json
import subprocess

import pytest

from tests.fixtures.stories import STORIES, build_story
from tests.helpers import make_venv, pip_install, repair_json

PROBE = r"""
import ctypes, importlib, json, os, sys
order, lazy, glob, third = sys.argv[1].split(","), sys.argv[2] == "lazy", sys.argv[3] == "global", sys.argv[4]
flags = (os.RTLD_LAZY if lazy else os.RTLD_NOW) | (os.RTLD_GLOBAL if glob else os.RTLD_LOCAL)
if third != "-":
    ctypes.CDLL(third, mode=os.RTLD_GLOBAL | (os.RTLD_LAZY if lazy else os.RTLD_NOW))
sys.setdlopenflags(flags)
mods = [importlib.import_module(name) for name in order]
print(json.dumps({name: mod.call() for name, mod in zip(order, mods)}))
"""


@pytest.fixture(scope="module", params=STORIES)
def story(request, build, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"story-{request.param}")
    story = build_story(build, out, request.param)
    envs = {}
    for hide in (False, True):
        wheelhouse = out / ("hidden" if hide else "plain")
        for side, wheel in story.wheels.items():
            args = ["--lib-path", story.lib_dirs[side], "-w", wheelhouse, wheel] + (["--hide-symbols"] if hide else [])
            proc, report = repair_json(*args)
            assert proc.returncode == 0, proc.stderr + proc.stdout
            if hide:
                (hidden,) = report["wheels"][0]["hidden"]
                assert hidden["renamed"] and hidden["hidden"] >= 1 and not hidden["kept"], hidden
        python = make_venv(out / f"venv-{'hidden' if hide else 'plain'}")
        for wheel in sorted(wheelhouse.glob("*.whl")):
            installed = pip_install(python, wheel)
            assert installed.returncode == 0, installed.stderr
        envs[hide] = python
    for lib_dir in story.lib_dirs.values():  # nothing may still come from the build directories
        for lib in lib_dir.iterdir():
            lib.rename(lib.with_suffix(lib.suffix + ".moved"))
    third = next(story.lib_dirs["b"].iterdir())  # B's library as built (renamed aside): an unrepaired third copy
    return story, envs, third


def probe(python, order, mode, scope, third="-") -> dict:
    proc = subprocess.run([str(python), "-c", PROBE, ",".join(order), mode, scope, str(third)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_collision_happens_without_hiding(story):
    story, envs, _ = story
    a, b = story.modules["a"], story.modules["b"]
    got = probe(envs[False], [a, b], "lazy", "global")
    assert got[a] == story.expect["a"]
    assert got[b] == story.expect["a"], "B's calls land in A's library when A was loaded globally first"


@pytest.mark.parametrize("mode,scope,order,with_third", list(itertools.product(
    ("lazy", "now"), ("global", "local"), ("ab", "ba"), (False, True))))
def test_each_gets_its_own_after_hiding(story, mode, scope, order, with_third):
    story, envs, third = story
    names = [story.modules[side] for side in order]
    got = probe(envs[True], names, mode, scope, third if with_third else "-")
    assert got == {story.modules[side]: story.expect[side] for side in order}
