#!/bin/sh
# Finding W2 of bench/repairM/REPORT.md: a header-only singleton (function-local static of an inline function,
# STB_GNU_UNIQUE) defined both by the extension and by the vendored library is one object after auditwheel or
# wheelcheck repair, and two after wheelcheck repair --hide-symbols (hidden in the library only): printed 2 2 0.
# Fixed in 241b68c (a name another file of the wheel defines too stays visible): prints 2 2 2.
# Usage: sh vague_linkage_repro.sh WORKDIR   (needs g++, python3.11 headers, auditwheel and wheelcheck[hide])
set -e
. "$(cd "$(dirname "$0")" && pwd)/repro_common.sh"
fresh_workdir "$1" single
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
pack_repair_run single "run()"
