"""Run inside an env: python maps.py mod1 mod2 ... [-- code]
Imports the modules in order (each may be 'mod:expr' to evaluate expr after import), then prints the
shared objects mapped from site-packages (and selected system libraries), one per line."""
import importlib, re, sys
args = sys.argv[1:]
for a in args:
    mod, _, expr = a.partition(":")
    try:
        m = importlib.import_module(mod)
        if expr:
            print(f"[{mod}] {expr} ->", repr(eval(expr, {"m": m, mod.split('.')[0]: importlib.import_module(mod.split('.')[0])}))[:200])
        print(f"imported {mod}")
    except Exception as exc:
        print(f"FAILED {mod}: {type(exc).__name__}: {exc}")
seen = []
for line in open("/proc/self/maps"):
    parts = line.split()
    if len(parts) >= 6 and ".so" in parts[5]:
        p = parts[5]
        if p not in seen:
            seen.append(p)
pat = re.compile(sys.argv[0] and r"(site-packages|libgomp|libomp|libiomp|libstdc|libssl|libcrypto|libz\.|libprotobuf|libQt|libLLVM|libhdf5|libgfortran|openblas)")
for p in seen:
    if pat.search(p) and "cpython-311" not in p:
        print("  maps:", p.split("site-packages/")[-1])
