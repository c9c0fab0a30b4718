#!/bin/bash
# The checks behind each verdict of /work/sweepK-report.md (envs from build_envs.sh under /tmp/sweepK-envs).
# Each prints who binds what, from LD_DEBUG=bindings, and what is in the global scope.
V=/tmp/sweepK-envs; S=lib/python3.11/site-packages
strip() { sed 's/^ *[0-9]*: *//; s#/tmp/sweepK-envs/[a-z]*/lib/python3.11/site-packages/##g' | sort | uniq -c; }
case "$1" in
torch)  # F1: is libtorch_cpu.so (cgemm_batch_ ...) in the global scope after import torch? Expect: no
  $V/torch/bin/python -c "
import ctypes, torch, numpy
g = ctypes.CDLL(None)
for n in ['dgemm_batch_', 'cgemm_batch_', 'GOMP_parallel', 'dgemm_']:
    print(n, 'global' if hasattr(g, n) else 'NOT global')"
  LD_DEBUG=bindings $V/torch/bin/python -c "import torch, numpy as np; a=np.ones((3,3)); a@a; torch.ones(3,3)@torch.ones(3,3)" 2>&1 | grep -E "symbol \`[cdsz]gemm_batch_'" | strip ;;
faiss)  # F1/F2: who serves faiss' BLAS, gfortran, quadmath, OpenMP when torch is imported first
  LD_DEBUG=bindings $V/faisstorch/bin/python -c "
import torch, faiss, numpy as np
x=np.random.rand(1000,16).astype('float32'); i=faiss.IndexFlatL2(16); i.add(x); print(i.search(x[:5],2)[1][:,0])" 2>&1 |
    grep -E "symbol \`(GOMP_parallel|GOMP_barrier|omp_get_max_threads|sgemm_|ddot_|cosq|xerbla_|ilaenv_)'" | strip ;;
tf)     # F3: typeinfo of function types and PROTECTED __start_/__stop_ across tensorflow, optree, protobuf, jaxlib
  LD_DEBUG=bindings $V/tfnumba/bin/python -c "import tensorflow, optree, google._upb._message" 2>&1 |
    grep -E "symbol \`(_ZTIFbvE|_ZTIFvvE|_ZTSFvvE|_ZTIPFvvE|__start_linkarr_upb_AllExts|__stop_linkarr_upb_AllExts)'" | strip
  for f in google/_upb/_message.abi3.so tensorflow/libtensorflow_cc.so.2 optree/_C.cpython-311-x86_64-linux-gnu.so; do
    readelf -W --dyn-syms $V/tfnumba/$S/$f | grep -E ' (_ZTIFbvE|_ZTSFvvE|__start_linkarr_upb_AllExts)$'; done
  $V/jaxtf/bin/python -c "
import tensorflow as tf, jax.numpy as jnp, google._upb._message
print('tf-first', float(jnp.ones(3).sum()), float(tf.reduce_sum(tf.ones(3))))" 2>&1 | tail -1 ;;
arrowtf)  # R1: pyarrow's OpenSSL and re2 calls land in tensorflow's global copies
  LD_DEBUG=bindings $V/arrowtf/bin/python -c "
import tensorflow, pyarrow as pa, pyarrow.compute as pc, pyarrow.parquet
print(pc.match_substring_regex(pa.array(['x','yy']), 'y+'))" 2>&1 | grep "binding file [^ ]*pyarrow[^ ]* \[0\] to [^ ]*tensorflow" |
    grep -oE "symbol \`(BN_|EVP_|SHA1|_ZN3re2)" | sort | uniq -c ;;
blas)   # R2: scipy_openblas32/64 load their OpenBLAS with RTLD_GLOBAL; numpy's and scipy's copies bind into them
  LD_DEBUG=bindings $V/blas/bin/python -c "
import scipy_openblas32, scipy_openblas64, numpy as np, scipy.linalg as sl
a=np.random.rand(200,200); print(abs(np.linalg.inv(a)@a-np.eye(200)).max()<1e-8)" 2>&1 |
    grep -E "binding file [^ ]*(numpy|scipy).libs[^ ]* \[0\] to [^ ]*scipy_openblas(32|64)/" | sed -E 's/.*binding file ([^ ]*) .* to ([^ ]*) .*/\1 -> \2/; s#[^ ]*site-packages/##g' | sort | uniq -c ;;
pyside) # C1: compat says PySide6/QtGui.abi3.so and QtCanvasPainter.abi3.so will fail on libxkbcommon.so.0
  $V/mplpyside/bin/python -c "
import PySide6.QtGui, PySide6.QtCanvasPainter, matplotlib; matplotlib.use('QtAgg'); import matplotlib.pyplot
print('imports fine;', [l.split()[-1] for l in open('/proc/self/maps') if 'xkbcommon' in l][:1])" ;;
hdf)    # C3: h5py's libhdf5 binds zlib from the system libz.so.1, never from tables' static copy
  LD_DEBUG=bindings $V/hdf/bin/python -c "
import tables, h5py, netCDF4
f=h5py.File('/tmp/sweepK-run/x.h5','w'); f.create_dataset('a', data=list(range(100)), compression='gzip'); f.close()" 2>&1 |
    grep -E "binding file [^ ]*(h5py|netcdf4).libs[^ ]* .*symbol \`(inflate|compress2|zlibVersion)'" | strip ;;
tfzlib) # C4: h5py/llvmlite bind zlib from libtensorflow_framework.so.2 (global), not from _xla_ops.so
  LD_DEBUG=bindings $V/tfnumba/bin/python -c "import tensorflow, h5py, llvmlite.binding" 2>&1 |
    grep -E "binding file [^ ]*(h5py|llvmlite)[^ ]* .*symbol \`(inflate|compress2|crc32)'" | strip ;;
*) echo "usage: $0 torch|faiss|tf|arrowtf|blas|pyside|hdf|tfzlib" ;;
esac
