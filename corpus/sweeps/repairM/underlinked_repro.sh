#!/bin/sh
# Finding W1 of bench/repairM/REPORT.md, reduced: libunder.so.1 uses libbase's base_top without linking libbase
# (underlinked, like Debian's libmfhdfalt.so.0 with libdfalt.so.0); libtop.so.1 links both, so ld.so finds
# base_top in the extension's load scope. `wheelcheck repair --hide-symbols` hides base_top (nothing that NEEDs
# libbase imports it... except libunder, which does not NEED it) and the repaired wheel fails to import.
# Fixed in 24916b4 (such names stay visible): prints 714 for all three repairs.
# Usage: sh underlinked_repro.sh WORKDIR   (needs gcc, python3.11 headers, auditwheel and wheelcheck[hide])
set -e
. "$(cd "$(dirname "$0")" && pwd)/repro_common.sh"
fresh_workdir "$1" under
echo 'int base_top = 7; int base_get(void) { return base_top; }' > base.c
echo 'extern int base_top; int base_get(void); int under_get(void) { return base_top + base_get(); }' > under.c
echo 'int base_get(void); int under_get(void); int top_get(void) { return base_get() * 100 + under_get(); }' > top.c
cat > ext.c <<'EOF'
#include <Python.h>
int top_get(void);
static PyObject *get(PyObject *s, PyObject *a) { return PyLong_FromLong(top_get()); }
static PyMethodDef m[] = {{"get", get, METH_NOARGS, 0}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_ext", 0, -1, m};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&d); }
EOF
gcc -shared -fPIC -o lib/libbase.so.1 -Wl,-soname,libbase.so.1 base.c
gcc -shared -fPIC -o lib/libunder.so.1 -Wl,-soname,libunder.so.1 under.c          # no -lbase
gcc -shared -fPIC -o lib/libtop.so.1 -Wl,-soname,libtop.so.1 top.c lib/libbase.so.1 lib/libunder.so.1
gcc -shared -fPIC -I"$INC" -o w/under/_ext.cpython-311-x86_64-linux-gnu.so ext.c lib/libtop.so.1
pack_repair_run under "get()"
wheelcheck audit o-wch/*.whl | head -1
