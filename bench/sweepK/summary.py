"""Summarise /tmp/sweepK-run/NAME/{conflicts,compat}.json: python summary.py [NAME...] [--table]"""
import json, sys, collections, pathlib
root = pathlib.Path("/tmp/sweepK-run")
names = [a for a in sys.argv[1:] if not a.startswith("--")] or sorted(p.name for p in root.iterdir() if (p / "conflicts.json").exists())
table = "--table" in sys.argv
for n in names:
    d = root / n
    try:
        c = json.loads((d / "conflicts.json").read_text()); k = json.loads((d / "compat.json").read_text())
    except Exception as exc:
        print(n, "no report", exc); continue
    ct = (d / "conflicts.time").read_text().split("\n")[-2].split(); kt = (d / "compat.time").read_text().split("\n")[-2].split()
    counts = c["counts"]; verdicts = collections.Counter(p["verdict"] for p in k["pairs"])
    dists = sum(len(p["distributions"]) for p in c["processes"])
    if table:
        print(f"| {n} | {dists} | {(d/'conflicts.rc').read_text().strip()} | {ct[0]} s / {int(ct[1])//1024} MB | {counts.get('error',0)}/{counts.get('warning',0)}/{counts.get('info',0)} | {(d/'compat.rc').read_text().strip()} | {kt[0]} s / {int(kt[1])//1024} MB | " + ", ".join(f"{v} {c}" for v, c in verdicts.items()) + " |")
        continue
    print(f"== {n}: conflicts rc={(d/'conflicts.rc').read_text().strip()} {ct} {counts}; compat rc={(d/'compat.rc').read_text().strip()} {kt} {dict(verdicts)}")
    for p in c["processes"]:
        for f in p["findings"]:
            if f["severity"] != "info":
                print(f"  C {f['severity']} {f['rule']} [{f['family']},{f['hazard']},{f['liveness']}] {f['message'][:230]}")
    for p in k["pairs"]:
        if p["verdict"] != "loads" or any(f["severity"] != "info" for f in p["findings"]):
            print(f"  K {p['subject']['name']} {p['verdict']}: {p['reason'][:200]}")
            for f in p["findings"]:
                if f["severity"] != "info":
                    print(f"     {f['severity']} {f['rule']} {f['message'][:220]}")
