#!/bin/sh
# Finding W2 of bench/repairM/REPORT.md: a header-only singleton (function-local static of an inline function,
# STB_GNU_UNIQUE) defined both by the extension and by the vendored library is one object after auditwheel or
# wheelcheck repair, and two after wheelcheck repair --hide-symbols (hidden in the library only). Prints 2 2 0.
# Usage: sh vague_linkage_repro.sh WORKDIR   (needs g++, python3.11 headers, auditwheel and wheelcheck[hide])
set -e
PY=${REPAIRSWEEP_PYTHON:-/root/.pyenv/versions/3.11.7/bin/python3.11}
INC=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
mkdir -p "$1" && cd "$1" && rm -rf lib w o-* v-* && mkdir -p lib w/single w/single-1.0.dist-info
echo 'inline int &counter() { static int c = 0; return c; }' > counter.h
printf '#include "counter.h"\nvoid foo_inc() { counter()++; }\n' > foo.cc
cat > ext.cc <<'EOF'
#include <Python.h>
#include "counter.h"
void foo_inc();
static PyObject *run(PyObject *, PyObject *) { foo_inc(); foo_inc(); return PyLong_FromLong(counter()); }
static PyMethodDef m[] = {{"run", run, METH_NOARGS, 0}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_ext", 0, -1, m};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&d); }
EOF
g++ -O1 -shared -fPIC -o lib/libfoo.so.1 -Wl,-soname,libfoo.so.1 foo.cc
g++ -O1 -shared -fPIC -I"$INC" -o w/single/_ext.cpython-311-x86_64-linux-gnu.so ext.cc lib/libfoo.so.1
touch w/single/__init__.py
printf 'Metadata-Version: 2.1\nName: single\nVersion: 1.0\n' > w/single-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n' \
  > w/single-1.0.dist-info/WHEEL
(cd w && $PY - <<'EOF'
import base64, hashlib, os, zipfile
rows = []
with zipfile.ZipFile("../single-1.0-cp311-cp311-linux_x86_64.whl", "w") as z:
    for root, _, files in os.walk("."):
        for f in files:
            p = os.path.join(root, f)[2:]
            data = open(p, "rb").read()
            z.writestr(p, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{p},sha256={digest},{len(data)}")
    z.writestr("single-1.0.dist-info/RECORD", "\n".join(rows + ["single-1.0.dist-info/RECORD,,"]) + "\n")
EOF
)
W=single-1.0-cp311-cp311-linux_x86_64.whl
LD_LIBRARY_PATH=$PWD/lib auditwheel repair -w o-aw $W >/dev/null 2>&1
wheelcheck repair --lib-path "$PWD/lib" -w o-wc $W >/dev/null
wheelcheck repair --hide-symbols --lib-path "$PWD/lib" -w o-wch $W >/dev/null
for t in aw wc wch; do
  $PY -m venv --without-pip v-$t
  pip --python v-$t/bin/python install -q --no-deps o-$t/*.whl
  (cd / && "$OLDPWD/v-$t/bin/python" -c "from single import _ext; print('$t', _ext.run())")
done
