"""Summarise /tmp/sweepK-run/NAME/{conflicts,compat}.json: python summary.py [NAME...] [--table]"""
import collections
import json
import pathlib
import sys

ROOT = pathlib.Path("/tmp/sweepK-run")


def main() -> None:
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or \
        sorted(p.name for p in ROOT.iterdir() if (p / "conflicts.json").exists())
    for name in names:
        summarise(ROOT / name, name, "--table" in sys.argv)


def summarise(d: pathlib.Path, name: str, table: bool) -> None:
    try:
        conflicts = json.loads((d / "conflicts.json").read_text())
        compat = json.loads((d / "compat.json").read_text())
    except (OSError, ValueError) as exc:
        print(name, "no report", exc)
        return
    c_time = (d / "conflicts.time").read_text().split("\n")[-2].split()
    k_time = (d / "compat.time").read_text().split("\n")[-2].split()
    counts = conflicts["counts"]
    verdicts = collections.Counter(p["verdict"] for p in compat["pairs"])
    dists = sum(len(p["distributions"]) for p in conflicts["processes"])
    c_rc, k_rc = (d / "conflicts.rc").read_text().strip(), (d / "compat.rc").read_text().strip()
    if table:
        found = f"{counts.get('error', 0)}/{counts.get('warning', 0)}/{counts.get('info', 0)}"
        answers = ", ".join(f"{v} {n}" for v, n in verdicts.items())
        print(f"| {name} | {dists} | {c_rc} | {c_time[0]} s / {int(c_time[1]) // 1024} MB | {found} | {k_rc} | "
              f"{k_time[0]} s / {int(k_time[1]) // 1024} MB | {answers} |")
        return
    print(f"== {name}: conflicts rc={c_rc} {c_time} {counts}; compat rc={k_rc} {k_time} {dict(verdicts)}")
    for process in conflicts["processes"]:
        for f in process["findings"]:
            if f["severity"] != "info":
                print(f"  C {f['severity']} {f['rule']} [{f['family']},{f['hazard']},{f['liveness']}] {f['message'][:230]}")
    for pair in compat["pairs"]:
        if pair["verdict"] != "loads" or any(f["severity"] != "info" for f in pair["findings"]):
            print(f"  K {pair['subject']['name']} {pair['verdict']}: {pair['reason'][:200]}")
            for f in pair["findings"]:
                if f["severity"] != "info":
                    print(f"     {f['severity']} {f['rule']} {f['message'][:220]}")


if __name__ == "__main__":
    main()
