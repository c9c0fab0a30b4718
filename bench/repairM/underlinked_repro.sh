#!/bin/sh
# Finding W1 of bench/repairM/REPORT.md, reduced: libunder.so.1 uses libbase's base_top without linking libbase
# (underlinked, like Debian's libmfhdfalt.so.0 with libdfalt.so.0); libtop.so.1 links both, so ld.so finds
# base_top in the extension's load scope. `wheelcheck repair --hide-symbols` hides base_top (nothing that NEEDs
# libbase imports it... except libunder, which does not NEED it) and the repaired wheel fails to import.
# Usage: sh underlinked_repro.sh WORKDIR   (needs gcc, python3.11 headers, auditwheel and wheelcheck[hide])
set -e
PY=${REPAIRSWEEP_PYTHON:-/root/.pyenv/versions/3.11.7/bin/python3.11}
INC=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
mkdir -p "$1" && cd "$1" && rm -rf lib w o-* v-* && mkdir -p lib w/under w/under-1.0.dist-info
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
touch w/under/__init__.py
printf 'Metadata-Version: 2.1\nName: under\nVersion: 1.0\n' > w/under-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n' \
  > w/under-1.0.dist-info/WHEEL
(cd w && $PY - <<'EOF'
import base64, hashlib, os, zipfile
rows = []
with zipfile.ZipFile("../under-1.0-cp311-cp311-linux_x86_64.whl", "w") as z:
    for root, _, files in os.walk("."):
        for f in files:
            p = os.path.join(root, f)[2:]
            data = open(p, "rb").read()
            z.writestr(p, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{p},sha256={digest},{len(data)}")
    z.writestr("under-1.0.dist-info/RECORD", "\n".join(rows + ["under-1.0.dist-info/RECORD,,"]) + "\n")
EOF
)
W=under-1.0-cp311-cp311-linux_x86_64.whl
LD_LIBRARY_PATH=$PWD/lib auditwheel repair -w o-aw $W >/dev/null 2>&1
wheelcheck repair --lib-path "$PWD/lib" -w o-wc $W >/dev/null
wheelcheck repair --hide-symbols --lib-path "$PWD/lib" -w o-wch $W >/dev/null
for t in aw wc wch; do
  $PY -m venv --without-pip v-$t
  pip --python v-$t/bin/python install -q --no-deps o-$t/*.whl
  (cd / && "$OLDPWD/v-$t/bin/python" -c "from under import _ext; print('$t', _ext.get())" 2>&1 | tail -1) || true
done
wheelcheck audit o-wch/*.whl | head -1
