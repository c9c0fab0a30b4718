"""The long mutation campaign, run by hand; prints a table per input class.

    python -m tests.fuzz.campaign elf --inputs 20000 --corpus ~/.cache/wheelcheck-corpus
    python -m tests.fuzz.campaign zip --inputs 20000
    python -m tests.fuzz.campaign repair --inputs 5000

Classes: ``elf`` mutates ELF files (synthetic seeds built with zig for every wheel architecture and with
the host gcc/g++, plus the ELF members of the corpus wheels up to ``--max-member``) and audits or shows the
wheel holding each; ``zip`` mutates wheels around small seeds (named shapes and header fields); ``repair``
repairs a wheel whose extension needs a library from --lib-path, mutated either way, then audits the
output. Every input runs in its own process (tests.fuzz.bounded) under RLIMIT_AS (2 GiB) and RLIMIT_CPU
(5 s). Input i of a run is made from ``random.Random(seed * 1000003 + i)``, so ``--seed S --first i
--inputs 1`` replays it; every input that is not a verdict or a clean one-line error is saved under
``--out`` with its recipe and what happened.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import time
import zipfile
from collections import Counter
from pathlib import Path

from tests.fixtures.compile import FixtureBuilder
from tests.fuzz.bounded import DEFAULT_CPU_SECONDS, DEFAULT_MEMORY, BoundedRunner, Outcome
from tests.fuzz.elfcraft import CANVAS_SOURCE
from tests.fuzz.mutate import RandomChooser, mutate_elf, mutate_zip
from tests.fuzz.seeds import Seeds, build_seeds, seed_targets
from tests.fuzz.shapes import wheel_bytes, wheel_name

COMMANDS = (("audit", "-vv"), ("audit", "--format", "json"), ("audit", "--format", "sarif"), ("show",),
            ("show", "--json"), ("audit", "--format", "markdown"), ("abi",))
ALPHA_USES_BETA = "extern int beta_value(void);\nint alpha_value(void) { return beta_value() * 6; }\n"


def corpus_elves(corpus: Path, max_member: int) -> Seeds:
    """The ELF members (at most ``max_member`` bytes) of the corpus wheels, one copy of each."""
    found = Seeds()
    seen: set[str] = set()
    for wheel in sorted(corpus.glob("*.whl")):
        with zipfile.ZipFile(wheel) as zf:
            for info in zf.infolist():
                if not 64 <= info.file_size <= max_member:
                    continue
                with zf.open(info) as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                data = zf.read(info)
                digest = hashlib.sha256(data).hexdigest()
                if digest not in seen:
                    seen.add(digest)
                    found[f"{wheel.name.split('-')[0]}:{info.filename.rsplit('/', 1)[-1]}"] = data
    return found


def clean(outcome: Outcome) -> bool:
    if outcome.kind == "ok":
        return True
    lines = outcome.stderr_lines
    return (outcome.kind == "error" and len(lines) == 1 and lines[0].startswith("wheelcheck: error: ")
            and "internal error" not in lines[0] and wheel_name() in lines[0])


class Tally:
    """Counts and the worst of each measure, per class."""

    def __init__(self) -> None:
        self.kinds: Counter = Counter()
        self.inputs = 0
        self.max_rss = 0
        self.max_rss_over_input = 0.0
        self.max_cpu = 0.0
        self.largest_input = 0
        self.unclean = 0

    def add(self, outcome: Outcome, size: int, ok: bool) -> None:
        self.inputs += 1
        self.kinds[outcome.kind] += 1
        self.unclean += not ok
        self.max_rss = max(self.max_rss, outcome.max_rss)
        self.max_rss_over_input = max(self.max_rss_over_input, outcome.max_rss / max(size, 1))
        self.max_cpu = max(self.max_cpu, outcome.cpu)
        self.largest_input = max(self.largest_input, size)

    def row(self, name: str) -> str:
        k = self.kinds
        return (f"{name:<7} {self.inputs:>7} {k['ok']:>7} {k['error']:>7} {k['crash']:>6} {k['hang']:>5} "
                f"{k['memory']:>6} {k['signal']:>6} {self.unclean:>7} {self.max_rss / 2**20:>8.0f} "
                f"{self.max_cpu:>7.2f} {self.largest_input / 2**20:>7.1f}")


HEADER = (f"{'class':<7} {'inputs':>7} {'verdict':>7} {'error':>7} {'crash':>6} {'hang':>5} {'memory':>6} "
          f"{'signal':>6} {'unclean':>7} {'RSS MiB':>8} {'CPU s':>7} {'in MiB':>7}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=("elf", "zip", "repair"))
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--first", type=int, default=0, help="index of the first input (to replay one)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=None, help="directory of real wheels to take ELF seeds from")
    parser.add_argument("--max-member", type=int, default=4 << 20, help="largest corpus ELF member to mutate")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wheelcheck-fuzz-seeds")
    parser.add_argument("--nice", type=int, default=10)
    parser.add_argument("--cpu", type=int, default=DEFAULT_CPU_SECONDS)
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY)
    args = parser.parse_args()

    builder = FixtureBuilder(args.cache)
    seeds = build_seeds(builder, seed_targets(all_arches=True))
    corpus = corpus_elves(args.corpus, args.max_member) if args.corpus else Seeds()
    libs: dict[str, bytes] = {}
    if args.kind == "repair":
        _alpha, beta = builder.alpha_beta()
        alpha = builder.compile_c(CANVAS_SOURCE + ALPHA_USES_BETA, "libalpha.so.1", libs=("m", beta),
                                  flags=("-Wl,-soname,libalpha.so.1",))
        seeds, libs = Seeds(alpha=alpha.read_bytes()), {"libs/libbeta.so.1": beta.read_bytes()}
    print(f"{len(seeds)} synthetic seeds, {len(corpus)} corpus ELF files; {args.inputs} {args.kind} inputs from "
          f"seed {args.seed}, {args.cpu} s CPU and {args.memory >> 20} MiB of address space each", flush=True)
    elf_pool = Seeds({**seeds, **corpus})
    small = Seeds({k: v for k, v in seeds.items()})  # zip mutations around the synthetic seeds: fast to rewrite
    args.out.mkdir(parents=True, exist_ok=True)
    tally = Tally()
    started = time.monotonic()
    with BoundedRunner(args.cpu, args.memory, nice=args.nice) as runner:
        for i in range(args.first, args.first + args.inputs):
            choose = RandomChooser(args.seed * 1000003 + i)
            if args.kind == "elf":
                mutation = mutate_elf(choose, elf_pool)
                wheel = wheel_bytes(mutation, stored=True)
                command = choose.pick(COMMANDS)
                outcome = runner.run([*command, wheel_name()], {wheel_name(): wheel})
                ok = clean(outcome)
            elif args.kind == "zip":
                mutation = mutate_zip(choose, small)
                wheel, command = bytes(mutation), choose.pick(COMMANDS[:4])
                outcome = runner.run([*command, wheel_name()], {wheel_name(): wheel})
                ok = clean(outcome)
            else:
                mutation = mutate_elf(choose, seeds) if choose.integer(0, 1) else mutate_zip(choose, seeds)
                wheel = bytes(mutation) if mutation[:2] == b"PK" else wheel_bytes(mutation)
                command = ("repair", "-w", "out", "--lib-path", "libs", wheel_name())
                outcome, audit = runner.run_all([command, ("audit", "out")], {wheel_name(): wheel, **libs})
                ok = clean(outcome) and _repair_promises(outcome, audit, wheel)
            tally.add(outcome, len(wheel), ok)
            if not ok:
                _save(args.out / f"{args.kind}-{args.seed}-{i}", wheel, mutation.recipe, command, outcome)
            if (i - args.first + 1) % 500 == 0:
                rate = (i - args.first + 1) / (time.monotonic() - started)
                print(f"{i - args.first + 1} inputs, {rate:.1f}/s, {dict(tally.kinds)}, unclean {tally.unclean}",
                      flush=True)
    print(HEADER)
    print(tally.row(args.kind))
    print(f"largest RSS / input size: {tally.max_rss_over_input:.0f}; wall {time.monotonic() - started:.0f} s")


def _repair_promises(repair: Outcome, audit: Outcome, wheel: bytes) -> bool:
    after = repair.files_after
    written = [n for n in after if n.startswith("out/") and n.endswith(".whl")]
    return (after.get(wheel_name()) == hashlib.sha256(wheel).hexdigest()
            and not [n for n in after if n.endswith(".part")]
            and (repair.exit_code == 0 or not written)
            and (not written or audit.kind == "ok"))


def _save(stem: Path, wheel: bytes, recipe: str, command, outcome: Outcome) -> None:
    stem.with_suffix(".whl").write_bytes(wheel)
    stem.with_suffix(".json").write_text(json.dumps({
        "recipe": recipe, "command": list(command), "kind": outcome.kind, "exit": outcome.exit_code,
        "stderr": outcome.stderr, "traceback": outcome.traceback, "cpu": outcome.cpu, "rss": outcome.max_rss,
    }, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
