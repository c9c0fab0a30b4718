"""Run inside an env: python maps.py mod1 mod2 ... (each may be 'mod:expr', evaluated after the import).

Imports the modules in order, then prints the shared objects mapped from site-packages (and selected system
libraries), one per line: which copies a process really loaded."""
import importlib
import re
import sys

_SHOWN = re.compile(r"(site-packages|libgomp|libomp|libiomp|libstdc|libssl|libcrypto|libz\.|libprotobuf|libQt|libLLVM"
                    r"|libhdf5|libgfortran|openblas)")

for arg in sys.argv[1:]:
    mod, _, expr = arg.partition(":")
    try:
        module = importlib.import_module(mod)
        if expr:
            top = mod.split(".")[0]
            value = eval(expr, {"m": module, top: importlib.import_module(top)})  # noqa: S307 - the sweep's own input
            print(f"[{mod}] {expr} ->", repr(value)[:200])
        print(f"imported {mod}")
    except Exception as exc:  # noqa: BLE001 - reported, the next module still imported
        print(f"FAILED {mod}: {type(exc).__name__}: {exc}")
seen: list[str] = []
with open("/proc/self/maps") as maps:
    for line in maps:
        parts = line.split()
        if len(parts) >= 6 and ".so" in parts[5] and parts[5] not in seen:
            seen.append(parts[5])
for path in seen:
    if _SHOWN.search(path) and "cpython-311" not in path:
        print("  maps:", path.split("site-packages/")[-1])
