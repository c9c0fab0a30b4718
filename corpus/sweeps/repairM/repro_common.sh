# Sourced by the repro scripts here: $PY (the Python the wheels are for) and $INC (its headers), and two steps.
PY=${REPAIRSWEEP_PYTHON:-/root/.pyenv/versions/3.11.7/bin/python3.11}
INC=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["include"])')

# fresh_workdir DIR NAME: cd into DIR, emptied of an earlier run, with lib/ and w/ holding package NAME's tree
fresh_workdir() {
  mkdir -p "$1" && cd "$1" && rm -rf lib w o-* v-* && mkdir -p lib "w/$2" "w/$2-1.0.dist-info"
}

# pack_repair_run NAME CALL: pack w/ into NAME-1.0-cp311-cp311-linux_x86_64.whl, repair it with auditwheel,
# wheelcheck and wheelcheck --hide-symbols (the libraries from ./lib), install each output in a venv of its own
# and print what `from NAME import _ext; _ext.CALL` gives (or the last line of its error).
pack_repair_run() {
  name=$1
  call=$2
  touch "w/$name/__init__.py"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n' "$name" > "w/$name-1.0.dist-info/METADATA"
  printf 'Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n' \
    > "w/$name-1.0.dist-info/WHEEL"
  (cd w && NAME=$name $PY - <<'EOF'
import base64, hashlib, os, zipfile
name = os.environ["NAME"]
rows = []
with zipfile.ZipFile(f"../{name}-1.0-cp311-cp311-linux_x86_64.whl", "w") as z:
    for root, _, files in os.walk("."):
        for f in files:
            p = os.path.join(root, f)[2:]
            data = open(p, "rb").read()
            z.writestr(p, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append(f"{p},sha256={digest},{len(data)}")
    z.writestr(f"{name}-1.0.dist-info/RECORD", "\n".join(rows + [f"{name}-1.0.dist-info/RECORD,,"]) + "\n")
EOF
  )
  W=$name-1.0-cp311-cp311-linux_x86_64.whl
  LD_LIBRARY_PATH=$PWD/lib auditwheel repair -w o-aw "$W" >/dev/null 2>&1
  wheelcheck repair --lib-path "$PWD/lib" -w o-wc "$W" >/dev/null
  wheelcheck repair --hide-symbols --lib-path "$PWD/lib" -w o-wch "$W" >/dev/null
  for t in aw wc wch; do
    $PY -m venv --without-pip "v-$t"
    pip --python "v-$t/bin/python" install -q --no-deps o-$t/*.whl
    (cd / && "$OLDPWD/v-$t/bin/python" -c "from $name import _ext; print('$t', _ext.$call)" 2>&1 | tail -1) || true
  done
}
