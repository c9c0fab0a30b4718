#!/bin/bash
# Two tiny wheels that vendor the same libfoo.so.1 (pkga imports foo_a, pkgb foo_b), and one (pkgc) whose
# library builds the name it looks up with dlsym at run time, as alsa-lib does. Each is repaired with and
# without --hide-symbols, installed with pip --target, and imported.
#   bash bench/repair_sweep_repro.sh [WORKDIR]     (needs gcc, a CPython 3.11 as $PY, wheelcheck[hide] on PATH)
# Expected (wheelcheck 1387224): without --hide-symbols "1 2", "2 1", "42"; with it an ImportError
# "undefined symbol: wc<hash>_foo_b" (a then b), "..._foo_a" (b then a), and -1 (the marker was hidden).
set -e
PY=${PY:-python3.11}
mkdir -p "${1:-/tmp/repair_sweep_repro}" && cd "${1:-/tmp/repair_sweep_repro}" && rm -rf lib src out* site* ./*.whl
PYINC=$($PY -c 'import sysconfig;print(sysconfig.get_paths()["include"])')
mkdir -p lib
cat > lib/foo.c <<'C'
int foo_a(void) { return 1; }
int foo_b(void) { return 2; }
C
gcc -shared -fPIC -o lib/libfoo.so.1 -Wl,-soname,libfoo.so.1 lib/foo.c
cat > lib/bar.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int bar_hook(void) { return 42; }
const char bar_hook_check_v1 = 1;           /* version marker, looked up as <name>_check_v1, like alsa-lib */
int bar_call(const char *name) {           /* alsa-lib's snd_dlsym: builds the marker's name at run time */
    char buf[128]; Dl_info info; dladdr((void *)bar_call, &info);
    void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    snprintf(buf, sizeof buf, "%s_check_v1", name);
    if (!dlsym(h, buf)) return -1;
    int (*f)(void) = (int (*)(void))dlsym(h, name);
    return f ? f() : -2;
}
C
gcc -shared -fPIC -o lib/libbar.so.1 -Wl,-soname,libbar.so.1 lib/bar.c -ldl
mkext() {  # name, C body, libs
  local d=src/$1; mkdir -p $d/$1 $d/$1-1.0.dist-info
  cat > $d/ext.c <<C
#include <Python.h>
$2
static PyMethodDef m[] = {{"call", call, METH_NOARGS, NULL}, {NULL}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_ext", NULL, -1, m};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&d); }
C
  gcc -shared -fPIC -I$PYINC -o $d/$1/_ext.cpython-311-x86_64-linux-gnu.so $d/ext.c -Llib $3
  echo "from ._ext import call" > $d/$1/__init__.py
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' $1 > $d/$1-1.0.dist-info/METADATA
  printf 'Wheel-Version: 1.0\nGenerator: repro\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n' > $d/$1-1.0.dist-info/WHEEL
  (cd $d && rm -f ext.c && $PY - $1 <<'PY'
import sys, os, hashlib, base64, zipfile
n = sys.argv[1]; rows = []
with zipfile.ZipFile(f"../../{n}-1.0-cp311-cp311-linux_x86_64.whl", "w", zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk("."):
        for f in sorted(files):
            p = os.path.join(root, f)[2:]; data = open(p, "rb").read(); z.writestr(p, data)
            rows.append(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}")
    rows.append(f"{n}-1.0.dist-info/RECORD,,"); z.writestr(f"{n}-1.0.dist-info/RECORD", "\n".join(rows) + "\n")
PY
  )
}
mkext pkga 'extern int foo_a(void); static PyObject *call(PyObject *s, PyObject *u) { return PyLong_FromLong(foo_a()); }' -l:libfoo.so.1
mkext pkgb 'extern int foo_b(void); static PyObject *call(PyObject *s, PyObject *u) { return PyLong_FromLong(foo_b()); }' -l:libfoo.so.1
mkext pkgc 'extern int bar_call(const char *); static PyObject *call(PyObject *s, PyObject *u) { return PyLong_FromLong(bar_call("bar_hook")); }' -l:libbar.so.1
for h in "" "--hide-symbols"; do
  out=out${h:+-hide}; site=site${h:+-hide}
  for w in pkga pkgb pkgc; do wheelcheck repair -q $h --lib-path lib -w $out $w-1.0-*.whl; done
  $PY -m pip install -q --no-deps --target $site $out/*.whl
  echo "[$h] a then b: $(PYTHONPATH=$site $PY -c 'import pkga, pkgb; print(pkga.call(), pkgb.call())' 2>&1 | tail -1)"
  echo "[$h] b then a: $(PYTHONPATH=$site $PY -c 'import pkgb, pkga; print(pkgb.call(), pkga.call())' 2>&1 | tail -1)"
  echo "[$h] c: $(PYTHONPATH=$site $PY -c 'import pkgc; print(pkgc.call())' 2>&1 | tail -1)"
done
wheelcheck conflicts out-hide/pkga-*.whl out-hide/pkgb-*.whl
