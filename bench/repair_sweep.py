#!/usr/bin/env python3
"""Repair sweep: real projects built from their sdist against this machine's (Debian) libraries, repaired by
`auditwheel repair` and `wheelcheck repair` (default and --hide-symbols), and each repaired wheel installed in a
fresh venv and smoke-tested with the system's libraries out of reach.

    python bench/repair_sweep.py build [NAME ...]     # pip wheel --no-deps --no-binary NAME NAME==VER
    python bench/repair_sweep.py repair [NAME ...]    # auditwheel / wheelcheck / wheelcheck --hide-symbols
    python bench/repair_sweep.py test [NAME ...]      # install each output in a fresh venv, smoke test
    python bench/repair_sweep.py report               # one table (markdown) from the results

"Out of reach": the smoke test runs in a private mount namespace (`unshare -m`) in which
/usr/lib/x86_64-linux-gnu (where /lib, /lib64's loader and every Debian library live) is replaced by a
directory holding only the loader, the libraries any manylinux policy whitelists and what those need
(the closure, read with ldd), and glibc's iconv modules (gconv/), i.e. what a minimal manylinux host
has. Nothing on the machine is removed.
After the smoke test the process's /proc/self/maps is read: every mapped library must come from the venv
(a vendored copy) or from that minimal set.

Work directory: $REPAIRSWEEP_WORK (default /tmp/repairsweep); wheels in ~/.cache/wheelcheck-repairsweep.
Needs the -dev packages named in PROJECTS (apt-get install), auditwheel and wheelcheck[hide] on PATH.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

WORK = Path(os.environ.get("REPAIRSWEEP_WORK", "/tmp/repairsweep"))
CACHE = Path.home() / ".cache" / "wheelcheck-repairsweep"
BUILT = CACHE / "built"
OUT = CACHE / "out"
RESULTS = CACHE / "results"
PY = os.environ.get("REPAIRSWEEP_PYTHON", "/root/.pyenv/versions/3.11.7/bin/python3.11")
BUILDENV = WORK / "buildenv"
MINLIB = WORK / "minlib"
SYSLIB = "/usr/lib/x86_64-linux-gnu"
INPUTS = Path(__file__).resolve().parent / "repair_sweep_inputs"  # build settings some projects need
TOOLS = {
    "aw": ["auditwheel", "repair"],
    "wc": ["wheelcheck", "repair", "-v"],
    "wch": ["wheelcheck", "repair", "-v", "--hide-symbols"],
}

# A 1x1 grey JPEG (331 bytes) for the image-metadata smoke tests.
TINY_JPEG = ("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAKBueIx4ZKCMgoy0qqC+8P//8Nzc8P//////////////////////////////////////"
             "////////////////////wAALCAABAAEBAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUF"
             "BAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVW"
             "V1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/ACv/2Q==")
# A one-page PDF with one line of Helvetica text, built with a correct xref table: pdf(b'text') -> bytes.
PDF_SRC = r"""
def pdf(text):
    s = b'BT /F1 12 Tf 10 50 Td (' + text + b') Tj ET'
    objs = [b'<</Type/Catalog/Pages 2 0 R>>', b'<</Type/Pages/Kids[3 0 R]/Count 1>>',
            b'<</Type/Page/Parent 2 0 R/MediaBox[0 0 300 100]/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>',
            b'<</Length %d>>stream\n' % len(s) + s + b'\nendstream', b'<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>']
    out, offs = b'%PDF-1.4\n', []
    for i, o in enumerate(objs):
        offs.append(len(out))
        out += b'%d 0 obj\n' % (i + 1) + o + b'\nendobj\n'
    x = len(out)
    out += b'xref\n0 %d\n0000000000 65535 f \n' % (len(objs) + 1) + b''.join(b'%010d 00000 n \n' % o for o in offs)
    return out + b'trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n' % (len(objs) + 1, x)
"""

# name, version, build environment, runtime requirements (binary wheels from the index), smoke test.
PROJECTS: list[tuple[str, str, dict, list[str], str]] = [
    ("psycopg2", "2.9.10", {}, [], "import psycopg2.extensions as e; print(e.libpq_version()); "
     "import psycopg2; print(psycopg2.__libpq_version__)"),
    ("lxml", "5.3.0", {}, [], "from lxml import etree; r=etree.fromstring('<a><b>x</b></a>'); "
     "x=etree.XSLT(etree.fromstring('<xsl:stylesheet version=\"1.0\" xmlns:xsl=\"http://www.w3.org/1999/XSL/Transform\">"
     "<xsl:template match=\"/\"><o><xsl:value-of select=\"//b\"/></o></xsl:template></xsl:stylesheet>'));"
     "print(str(x(r)).strip(), etree.LIBXML_VERSION, etree.LIBXSLT_VERSION)"),
    ("PyYAML", "6.0.2", {}, [], "import yaml; assert yaml.__with_libyaml__; "
     "print(yaml.load('a: [1, 2]', Loader=yaml.CLoader), yaml.CLoader)"),
    ("pillow", "11.0.0", {}, [], "import io; from PIL import Image, features; "
     "b=io.BytesIO(); Image.new('RGB',(8,8),'red').save(b,'JPEG'); b.seek(0); im=Image.open(b); im.load(); "
     "b2=io.BytesIO(); im.save(b2,'WEBP'); b3=io.BytesIO(); im.save(b3,'TIFF',compression='tiff_lzw'); "
     "b4=io.BytesIO(); im.save(b4,'JPEG2000'); from PIL import ImageCms, ImageFont; "
     "ImageCms.createProfile('sRGB'); print(features.pilinfo is not None, "
     "[f for f in ('jpg','webp','libtiff','freetype2','littlecms2','jpg_2000','zlib') if features.check(f)])"),
    ("pycurl", "7.45.3", {"PYCURL_SSL_LIBRARY": "openssl"}, [], "import pycurl; print(pycurl.version_info()[1:3]); "
     "c=pycurl.Curl(); c.setopt(pycurl.URL,'file:///etc/hostname'); import io; b=io.BytesIO(); "
     "c.setopt(pycurl.WRITEDATA,b); c.perform(); print(len(b.getvalue()))"),
    ("python-ldap", "3.4.4", {}, ["pyasn1", "pyasn1-modules"], "import ldap; print(ldap.get_option(ldap.OPT_API_INFO)); "
     "l=ldap.initialize('ldap://127.0.0.1:1'); l.set_option(ldap.OPT_NETWORK_TIMEOUT, 1)\ntry:\n l.simple_bind_s('', '')\n"
     "except ldap.SERVER_DOWN as e: print('server down as expected', e.args[0]['desc'])"),
    ("mysqlclient", "2.2.4", {}, [], "import MySQLdb; print(MySQLdb.version_info, MySQLdb._mysql.get_client_info())"),
    ("pyzmq", "27.0.0", {}, [], "import zmq; print(zmq.zmq_version(), zmq.pyzmq_version()); c=zmq.Context(); "
     "a=c.socket(zmq.PAIR); a.bind('inproc://x'); b=c.socket(zmq.PAIR); b.connect('inproc://x'); "
     "a.send(b'hi'); print(b.recv())"),
    ("gmpy2", "2.2.1", {}, [], "import gmpy2; print(gmpy2.mpz(3)**100 % 7, gmpy2.sqrt(gmpy2.mpfr(2)), "
     "gmpy2.mpc(1,1)**2, gmpy2.mp_version(), gmpy2.mpfr_version(), gmpy2.mpc_version())"),
    ("pyodbc", "5.2.0", {}, [], "import pyodbc; print(pyodbc.version, pyodbc.drivers()); "
     "print(pyodbc.dataSources())"),
    ("h5py", "3.14.0", {"HDF5_DIR": "/usr/lib/x86_64-linux-gnu/hdf5/serial"}, ["numpy<2.3"],
     "import h5py, numpy as np, tempfile, os; p=os.path.join(tempfile.mkdtemp(),'a.h5'); "
     "f=h5py.File(p,'w'); f['x']=np.arange(10); f.close(); print(h5py.File(p)['x'][3], h5py.version.hdf5_version)"),
    ("netCDF4", "1.6.5", {}, ["numpy==1.26.4", "cftime==1.6.4.post1", "certifi"],
     "import netCDF4, tempfile, os; p=os.path.join(tempfile.mkdtemp(),'a.nc'); d=netCDF4.Dataset(p,'w'); "
     "d.createDimension('x',3); v=d.createVariable('v','f8',('x',),zlib=True); v[:]=[1,2,3]; d.close(); "
     "print(netCDF4.Dataset(p)['v'][:], netCDF4.__netcdf4libversion__, netCDF4.__hdf5libversion__)"),
    ("shapely", "2.0.6", {}, ["numpy<2.3"], "import shapely; from shapely.geometry import Point; "
     "print(Point(0,0).buffer(1).area, shapely.geos_version_string)"),
    # in-process layout: the vendored libgvc loads the system's layout plugins, which need the system's libgvc
    ("pygraphviz", "1.11", {}, [], "import pygraphviz as pgv; from pygraphviz import graphviz as gv; g=pgv.AGraph(); "
     "g.add_edge('a','b'); c=gv.gvContext(); print('gvLayout', gv.gvLayout(c, g.handle, b'dot'))"),
    ("pyFFTW", "0.14.0", {}, ["numpy<2.3"], "import pyfftw, numpy as np; a=pyfftw.empty_aligned(16,dtype='complex128');"
     " a[:]=np.arange(16); print(abs(pyfftw.interfaces.numpy_fft.fft(a)[0]), pyfftw.FFTW(a, pyfftw.empty_aligned(16,"
     "dtype='complex128'), threads=2).N)"),
    ("xmlsec", "1.3.14", {}, ["lxml"], "import xmlsec; print(xmlsec.get_libxmlsec_version(), "
     "xmlsec.get_libxml_version()); m=xmlsec.KeysManager(); print(m)"),
    ("gssapi", "1.9.0", {}, ["decorator"], "import gssapi; n=gssapi.Name('host@example.com', "
     "gssapi.NameType.hostbased_service); print(n, gssapi.raw.indicate_mechs())"),
    ("pycairo", "1.27.0", {}, [], "import cairo, io; s=cairo.ImageSurface(cairo.FORMAT_ARGB32,8,8); c=cairo.Context(s);"
     " c.paint(); b=io.BytesIO(); s.write_to_png(b); print(cairo.cairo_version_string(), len(b.getvalue()))"),
    ("PyICU", "2.14", {}, [], "import icu; print(icu.ICU_VERSION, icu.UnicodeString('straße').toUpper(), "
     "icu.Collator.createInstance(icu.Locale('de')).compare('a','b'))"),
    ("confluent-kafka", "2.0.2", {}, [], "import confluent_kafka as k; print(k.version(), k.libversion()); "
     "p=k.Producer({'bootstrap.servers':'127.0.0.1:1'}); print(p)"),
    ("PyAudio", "0.2.14", {}, [], "import pyaudio; print(pyaudio.get_portaudio_version_text()); "
     "p=pyaudio.PyAudio(); print(p.get_device_count()>=0); p.terminate()"),
    ("dbus-python", "1.3.2", {}, [], "import dbus, _dbus_bindings; print(dbus.__version__, "
     "dbus.ObjectPath('/a'), dbus.lowlevel.MethodCallMessage('a.b','/c','d.e','f').get_member())"),
    ("python-snappy", "0.6.1", {}, [], "import snappy, snappy._snappy as s; "
     "print(snappy.decompress(snappy.compress(b'abc'*100))[:6], s)"),
    ("PyNaCl", "1.5.0", {"SODIUM_INSTALL": "system"}, ["cffi"], "import nacl.utils, nacl.secret, nacl.bindings; "
     "k=nacl.utils.random(32); b=nacl.secret.SecretBox(k); print(b.decrypt(b.encrypt(b'hi')), "
     "nacl.bindings.sodium_version_string() if hasattr(nacl.bindings,'sodium_version_string') else '')"),
    ("cffi", "1.17.1", {}, ["pycparser"], "import cffi; f=cffi.FFI(); f.cdef('int abs(int);'); "
     "C=f.dlopen(None); print(C.abs(-3), cffi.__version__); import _cffi_backend; cb=f.callback('int(int)', "
     "lambda x: x+1); print(cb(1))"),
    ("pykdtree", "1.3.13", {}, ["numpy<2.3"], "import numpy as np; from pykdtree.kdtree import KDTree; "
     "d=np.random.rand(1000,3); t=KDTree(d); print(t.query(d[:5], k=2)[1][:,0])"),
    ("lz4", "4.3.3", {"PYLZ4_USE_SYSTEM_LZ4": "True"}, [], "import lz4.frame as f, lz4; "
     "print(f.decompress(f.compress(b'x'*100))[:3], lz4.library_version_string())"),
    ("pysqlite3", "0.5.4", {}, [], "import pysqlite3.dbapi2 as s; c=s.connect(':memory:'); "
     "print(c.execute('select sqlite_version(), 1+1').fetchone(), s.sqlite_version)"),
    ("systemd-python", "235", {}, [], "from systemd import journal, id128; print(id128.get_boot() is not None or True); "
     "journal.send('repairsweep test'); r=journal.Reader(); print(r)"),
    ("pygit2", "1.11.1", {}, ["cffi"], "import pygit2, tempfile; r=pygit2.init_repository(tempfile.mkdtemp()); "
     "print(pygit2.LIBGIT2_VERSION, r.is_empty, pygit2.features)"),
    ("jq", "1.8.0", {"JQPY_USE_SYSTEM_LIBS": "1"}, [], "import jq; print(jq.compile('.a+1').input_value({'a':2}).first())"),
    ("python-lzo", "1.15", {}, [], "import lzo; print(lzo.decompress(lzo.compress(b'y'*100))[:3], lzo.LZO_VERSION_STRING)"),
    ("pyvips", "2.2.3", {}, ["cffi", "pkgconfig"], "import pyvips; print(pyvips.API_mode, pyvips.version(0), "
     "pyvips.version(1)); im=pyvips.Image.black(8,8)+10; print(im.avg(), len(im.write_to_buffer('.png')))"),
    ("Rtree", "1.3.0", {}, [], "from rtree import index; i=index.Index(); i.insert(1,(0,0,1,1)); "
     "print(list(i.intersection((0,0,2,2))))"),
    ("python-magic", "0.4.27", {}, [], "import magic; print(magic.from_buffer(b'%PDF-1.4'))"),
    # C++ libraries (libstdc++, symbol hiding) and libraries that load plugins or data at run time
    ("google-re2", "0.2.20220601", {}, [], "import re2; r=re2.compile(r'(\\w+)@(\\w+)\\.com'); "
     "m=r.search('mail x@y.com now'); print(m.groups(), re2.sub(r'a+', 'b', 'caaat'), "
     "[x.group(0) for x in re2.finditer(r'\\d+', 'a1b22c333')])"),
    ("plyvel", "1.5.1", {}, [], "import plyvel, tempfile; d=plyvel.DB(tempfile.mkdtemp(), create_if_missing=True, "
     "compression='snappy', bloom_filter_bits=10); [d.put(b'k%03d' % i, b'v' * i) for i in range(200)]; "
     "d.compact_range(); print(d.get(b'k007'), sum(1 for _ in d.iterator(prefix=b'k1')), plyvel.__leveldb_version__)"),
    ("pdftotext", "2.2.2", {}, [], "import pdftotext, io\n" + PDF_SRC +
     "p=pdftotext.PDF(io.BytesIO(pdf(b'Hello repair sweep'))); assert 'Hello repair sweep' in p[0], p[0]; "
     "print(len(p), repr(p[0].strip()))"),
    ("py3exiv2", "0.12.0", {}, [], "import pyexiv2, base64, tempfile, os; p=os.path.join(tempfile.mkdtemp(), 'a.jpg'); "
     f"open(p, 'wb').write(base64.b64decode('{TINY_JPEG}')); m=pyexiv2.ImageMetadata(p); m.read(); "
     "m['Exif.Image.Artist']='repair sweep'; m['Xmp.dc.subject']=['a','b']; m.write(); m2=pyexiv2.ImageMetadata(p); "
     "m2.read(); print(m2['Exif.Image.Artist'].value, m2['Xmp.dc.subject'].value, pyexiv2.exiv2_version_info)\n"
     # libexiv2 throws Exiv2::BasicError<char>, which the extension catches (and raises as OverflowError here):
     # typeinfo across the two files
     "q=p + '.bad'; open(q, 'wb').write(b'not an image')\ntry:\n pyexiv2.ImageMetadata(q).read()\n"
     "except OverflowError as e: print('Exiv2 error caught:', e)\nelse: raise AssertionError('no error')"),
    # PROJ's data (proj.db) is found through the `proj` executable (/usr/share/proj), which the namespace keeps
    ("pyproj", "3.6.1", {"PIP_CONSTRAINT": str(INPUTS / "build-constraints.txt")},
     ["certifi"], "import pyproj; t=pyproj.Transformer.from_crs(4326, 3857, always_xy=True); "
     "print(t.transform(2.35, 48.85), pyproj.proj_version_str, pyproj.datadir.get_data_dir()); "
     "print(pyproj.Geod(ellps='WGS84').inv(0, 0, 1, 1)[2], pyproj.CRS(32631).name)"),
    ("pylibmc", "1.6.3", {}, [], "import pylibmc; print(pylibmc.libmemcached_version, pylibmc.support_compression, "
     "pylibmc.hashers); "
     "c=pylibmc.Client(['127.0.0.1:1'], binary=True, behaviors={'hash':'md5','connect_timeout':100})\ntry:\n "
     "c.set('a', 'x'*1000)\nexcept pylibmc.Error as e: print('no server as expected', type(e).__name__)"),
    ("pikepdf", "7.2.0", {}, ["pillow", "lxml", "Deprecated", "packaging"], "import pikepdf, io; p=pikepdf.new(); "
     "p.add_blank_page(page_size=(100, 100)); b=io.BytesIO(); p.save(b, encryption=pikepdf.Encryption(owner='o', "
     "user='u', R=6)); b.seek(0); q=pikepdf.open(b, password='u'); print(len(q.pages), q.is_encrypted, "
     "q.encryption.bits, pikepdf.__libqpdf_version__)\n"
     # libqpdf throws QPDFExc, which the extension's pybind11 translator catches and turns into PdfError
     "try:\n pikepdf.open(io.BytesIO(b'%PDF-1.4 junk'))\nexcept pikepdf.PdfError as e: print('PdfError', e)\n"
     "else: raise AssertionError('no error')"),
    ("sentencepiece", "0.1.97", {}, [], "import sentencepiece as spm, tempfile, os; d=tempfile.mkdtemp(); "
     "f=os.path.join(d, 't.txt'); open(f, 'w').write('the quick brown fox jumps over the lazy dog\\n' * 50 + "
     "'a sentence piece model is trained here\\n' * 50); spm.SentencePieceTrainer.train(input=f, "
     "model_prefix=os.path.join(d, 'm'), vocab_size=40, hard_vocab_limit=False, minloglevel=2); "
     "s=spm.SentencePieceProcessor(model_file=os.path.join(d, 'm.model')); print(s.encode('the lazy fox', "
     "out_type=str), s.get_piece_size())"),
    ("ssdeep", "3.4", {"PIP_CONSTRAINT": str(INPUTS / "build-constraints.txt")},
     ["cffi", "six"], "import ssdeep, random; r=random.Random(1); a=bytes(r.randrange(256) for _ in "
     "range(20000)); b=a[:15000]+b'x'*5000; h1, h2 = ssdeep.hash(a), ssdeep.hash(b); print(h1, ssdeep.compare(h1, h2)); "
     "assert 0 < ssdeep.compare(h1, h2) < 100"),
    ("pylibacl", "0.7.0", {}, [], "import posix1e, tempfile; f=tempfile.mkstemp()[1]; "
     "a=posix1e.ACL(text='u::rw-,g::r--,o::---'); print(a.valid()); a.applyto(f); "
     "print(posix1e.ACL(file=f).to_any_text(options=posix1e.TEXT_ABBREVIATE), posix1e.HAS_ACL_ENTRY)"),
    ("yara-python", "4.2.3", {"DIST_EXTRA_CONFIG": str(INPUTS / "yara-dynamic.cfg")}, [],
     "import yara, hashlib; r=yara.compile(source='import \"hash\" rule a { strings: $a = \"hello\" "
     "condition: $a and hash.md5(0, filesize) == \"%s\" }' % hashlib.md5(b'xx hello').hexdigest()); "
     "m=r.match(data=b'xx hello'); assert m and not r.match(data=b'xx hellO'); print(m, yara.__version__, yara.YARA_VERSION)"),
    ("pytaglib", "2.0.0", {}, [], "import taglib, wave, tempfile, os; p=os.path.join(tempfile.mkdtemp(), 'a.wav'); "
     "w=wave.open(p, 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(8000); "
     "w.writeframes(b'\\0\\0'*800); w.close(); f=taglib.File(p); f.tags['TITLE']=['repair sweep']; "
     "print(f.save()); f.close(); g=taglib.File(p); print(g.tags, g.length, g.sampleRate, taglib.taglib_version())"),
    ("GDAL", "3.6.2", {}, [], "from osgeo import gdal, ogr, osr; gdal.UseExceptions(); "
     "d=gdal.GetDriverByName('GTiff').Create('/vsimem/a.tif', 4, 4, 1, gdal.GDT_Byte, ['COMPRESS=DEFLATE']); "
     "s=osr.SpatialReference(); s.ImportFromEPSG(4326); d.SetProjection(s.ExportToWkt()); d.FlushCache(); d=None; "
     "print(gdal.Info('/vsimem/a.tif', format='json')['coordinateSystem']['wkt'][:20], gdal.__version__); "
     "print(gdal.GetDriverCount(), ogr.CreateGeometryFromWkt('POINT (1 2)').Buffer(1).GetArea() > 3)"),
]


def run(cmd, log=None, env=None, cwd=None, timeout=3600):
    t = time.time()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    dt = time.time() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    if log:
        Path(log).write_text(f"$ {' '.join(map(str, cmd))}\nrc={p.returncode} {dt:.2f}s wall {cpu:.2f}s cpu\n"
                             f"--stdout--\n{p.stdout}\n--stderr--\n{p.stderr}")
    return p, dt


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def selected(names):
    want = {norm(n) for n in names}
    return [p for p in PROJECTS if not want or norm(p[0]) in want]


def built_wheel(name):
    for w in BUILT.glob("*.whl"):
        if norm(w.name.split("-")[0]) == norm(name):
            return w
    return None


def cmd_build(names):
    BUILT.mkdir(parents=True, exist_ok=True)
    if not BUILDENV.exists():
        subprocess.run([PY, "-m", "venv", BUILDENV], check=True)
    for name, ver, env, _, _ in selected(names):
        if built_wheel(name):
            continue
        e = dict(os.environ, **env)
        log = CACHE / "logs" / f"build-{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        p, dt = run(["nice", BUILDENV / "bin" / "pip", "wheel", "--no-cache-dir", "--no-deps", "--no-binary", name, "-w", BUILT,
                     f"{name}=={ver}"], log=log, env=e)
        w = built_wheel(name)
        print(f"{name} {ver}: rc={p.returncode} {dt:.0f}s {w.name if w else 'NO WHEEL'}", flush=True)


def members(whl):
    with zipfile.ZipFile(whl) as z:
        return [(i.filename, i.file_size) for i in z.infolist()]


def vendored(whl):
    return sorted(n.split("/", 1)[1] for n, _ in members(whl) if re.match(r"[^/]+\.libs/.", n))


def crcs(whl):
    with zipfile.ZipFile(whl) as z:
        return {i.filename: i.CRC for i in z.infolist() if not i.filename.endswith("/")}


def compare(a, b):
    """Members present in only one output, and members of both whose content differs (RECORD, WHEEL, SBOMs aside)."""
    ca, cb = crcs(a), crcs(b)
    skip = re.compile(r"\.dist-info/(RECORD|WHEEL|sboms/.*)$")
    return {"only_aw": sorted(n for n in ca.keys() - cb.keys() if not skip.search(n)),
            "only_wc": sorted(n for n in cb.keys() - ca.keys() if not skip.search(n)),
            "differ": sorted(n for n in ca.keys() & cb.keys() if ca[n] != cb[n] and not skip.search(n))}


def cmd_repair(names):
    RESULTS.mkdir(parents=True, exist_ok=True)
    for name, *_ in selected(names):
        w = built_wheel(name)
        if not w:
            continue
        res = {"input": w.name}
        for tool, cmd in TOOLS.items():
            out = OUT / tool / norm(name)
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            p, dt = run(["nice", *cmd, "-w", out, w], log=CACHE / "logs" / f"repair-{tool}-{name}.log")
            outs = sorted(out.glob("*.whl"))
            r = {"rc": p.returncode, "time": round(dt, 2), "tail": (p.stdout + p.stderr).strip().splitlines()[-6:]}
            if outs:
                o = outs[0]
                r["wheel"] = o.name
                r["vendored"] = vendored(o)
                a, _ = run(["wheelcheck", "audit", "-v", o], log=CACHE / "logs" / f"audit-{tool}-{name}.log")
                r["audit_rc"] = a.returncode
                r["audit_head"] = a.stdout.strip().splitlines()[:1]
                s, _ = run(["auditwheel", "show", o], log=CACHE / "logs" / f"show-{tool}-{name}.log")
                m = re.search(r'consistent with the following platform tag:\s*"([^"]+)"', " ".join(s.stdout.split()))
                r["aw_show"] = m.group(1) if m else (s.stdout + s.stderr).strip().splitlines()[-1:]
            res[tool] = r
            print(f"{name} {tool}: rc={p.returncode} {dt:.1f}s {r.get('wheel')} vendored={len(r.get('vendored', []))}",
                  flush=True)
        oa, ow = sorted((OUT / "aw" / norm(name)).glob("*.whl")), sorted((OUT / "wc" / norm(name)).glob("*.whl"))
        if oa and ow:
            res["aw_vs_wc"] = compare(oa[0], ow[0])
            print(f"{name} aw vs wc: {res['aw_vs_wc']}", flush=True)
        (RESULTS / f"{norm(name)}.repair.json").write_text(json.dumps(res, indent=1))


def closure(libs):
    seen, todo = {}, list(libs)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        path = Path(SYSLIB) / n
        if not path.exists():
            continue
        seen[n] = path
        out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (\S+)", line)
            if m and m.group(2).startswith(("/lib/x86_64-linux-gnu", SYSLIB)):
                todo.append(m.group(1))
    return seen


def make_minlib():
    if (MINLIB / ".done").exists():
        return
    shutil.rmtree(MINLIB, ignore_errors=True)
    MINLIB.mkdir(parents=True)
    wl = set()
    pol = Path(__file__).resolve().parent.parent / "policies"
    for f in pol.glob("manylinux*.json"):
        d = json.loads(f.read_text())
        lw = d["lib_whitelist"]
        wl |= set(lw if isinstance(lw, list) else [x for v in lw.values() for x in v])
    libs = closure(sorted(wl) + ["ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6"])
    for n, p in libs.items():
        shutil.copy2(os.path.realpath(p), MINLIB / n)
    # glibc's iconv modules come with glibc on every host (poppler-cpp converts to UTF-16 through them)
    shutil.copytree(Path(SYSLIB) / "gconv", MINLIB / "gconv", symlinks=True)
    (MINLIB / "MANIFEST").write_text("\n".join(sorted(libs)) + "\n")
    (MINLIB / ".done").write_text("")


SMOKE_WRAPPER = r"""
import sys, os
code = sys.argv[1]
exec(compile(code, "<smoke>", "exec"))
maps = set()
for line in open("/proc/self/maps"):
    p = line.split()[-1] if len(line.split()) >= 6 else ""
    if ".so" in p:
        maps.add(p)
prefix = sys.prefix
print("MAPS-VENV", sorted(os.path.basename(p) for p in maps if p.startswith(prefix) and ".libs/" in p))
print("MAPS-SYS", sorted(p for p in maps if p.startswith(("/usr/lib/", "/lib/", "/lib64/", "/usr/lib64/"))
      and "/python3" not in p))
"""


def venv_for(tag, whl, deps):
    v = WORK / "venvs" / tag
    if v.exists():
        shutil.rmtree(v)
    subprocess.run([PY, "-m", "venv", "--without-pip", v], check=True)
    p, _ = run([BUILDENV / "bin" / "pip", "--python", v / "bin" / "python", "install", "-q", "--no-deps", whl],
               log=CACHE / "logs" / f"install-{tag}.log")
    if p.returncode == 0 and deps:
        p, _ = run([BUILDENV / "bin" / "pip", "--python", v / "bin" / "python", "install", "-q",
                    "--only-binary", ":all:", *deps], log=CACHE / "logs" / f"install-deps-{tag}.log")
    return v, p.returncode


def smoke(v, code, hidden: bool, tag: str):
    wrapper = WORK / "smoke_wrapper.py"
    wrapper.write_text(SMOKE_WRAPPER)
    py = v / "bin" / "python"
    if hidden:
        inner = f'mount --bind {MINLIB} {SYSLIB} && exec "$0" "$@"'
        cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", inner, py, wrapper, code]
    else:
        cmd = [py, wrapper, code]
    p, _ = run(cmd, log=CACHE / "logs" / f"smoke-{tag}-{'hidden' if hidden else 'host'}.log", cwd="/tmp",
               timeout=300)
    out = p.stdout + p.stderr
    venv = re.search(r"MAPS-VENV (.*)", out)
    sysm = re.search(r"MAPS-SYS (.*)", out)
    allowed = set((MINLIB / "MANIFEST").read_text().split())
    sys_libs = eval(sysm.group(1)) if sysm else []
    foreign = [s for s in sys_libs if os.path.basename(s) not in allowed and not s.startswith(f"{SYSLIB}/gconv/")]
    return {"rc": p.returncode, "ok": p.returncode == 0 and bool(venv),
            "vendored_loaded": eval(venv.group(1)) if venv else None, "non_policy_system_libs": foreign,
            "tail": [ln for ln in out.strip().splitlines() if not ln.startswith("MAPS-")][-4:]}


def cmd_test(names):
    make_minlib()
    for name, ver, _, deps, code in selected(names):
        rf = RESULTS / f"{norm(name)}.repair.json"
        if not rf.exists():
            continue
        res = json.loads(rf.read_text())
        tests = {}
        for tool in ([] if os.environ.get("REPAIRSWEEP_NO_CONTROL") or (WORK / "no_control").exists() else ["input"]) + [*TOOLS]:
            if tool == "input":
                whl = BUILT / res["input"]
            else:
                o = sorted((OUT / tool / norm(name)).glob("*.whl"))
                if not o:
                    continue
                whl = o[0]
            tag = f"{norm(name)}-{tool}"
            v, rc = venv_for(tag, whl, deps)
            if rc:
                tests[tool] = {"install_rc": rc}
                continue
            tests[tool] = {"host": smoke(v, code, False, tag), "hidden": smoke(v, code, True, tag)}
            h = tests[tool]["hidden"]
            print(f"{name} {tool}: host={'ok' if tests[tool]['host']['ok'] else 'FAIL'} "
                  f"hidden={'ok' if h['ok'] else 'FAIL'} foreign={h['non_policy_system_libs']} {h['tail'][-1:]}",
                  flush=True)
            shutil.rmtree(v)
        (RESULTS / f"{norm(name)}.test.json").write_text(json.dumps(tests, indent=1))


def exports(path):
    """Defined dynamic symbols another object can bind to: GLOBAL/WEAK/UNIQUE binding, DEFAULT/PROTECTED visibility."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and f[6] != "UND" and f[4] in ("GLOBAL", "WEAK", "UNIQUE") \
                and f[5] in ("DEFAULT", "PROTECTED"):
            names.add(f[7].split("@")[0])
    return names


def cmd_hidecheck(names):
    """Per vendored library: exports in auditwheel's output vs in wheelcheck --hide-symbols' output."""
    tmp = WORK / "hidecheck"
    for name, *_ in selected(names):
        oa = sorted((OUT / "aw" / norm(name)).glob("*.whl"))
        oh = sorted((OUT / "wch" / norm(name)).glob("*.whl"))
        if not (oa and oh):
            continue
        rows = {}
        for tool, whl in (("aw", oa[0]), ("wch", oh[0])):
            d = tmp / tool / norm(name)
            shutil.rmtree(d, ignore_errors=True)
            with zipfile.ZipFile(whl) as z:
                z.extractall(d)
            for lib in d.glob("*.libs/*"):  # a copy hiding edited has a second hash in its name (hide-symbols.md)
                rows.setdefault(re.sub(r"-([0-9a-f]{8})-[0-9a-f]{8}(\.so)", r"-\1\2", lib.name), {})[tool] = exports(lib)
        summary = {}
        for lib, r in sorted(rows.items()):
            a, h = r.get("aw", set()), r.get("wch", set())
            renamed = {n for n in h if n.startswith("wc") and "_" in n and n.split("_", 1)[1] in a}
            summary[lib] = {"aw_exports": len(a), "wch_exports": len(h), "wch_renamed": len(renamed),
                            "wch_kept_plain": len(h - renamed)}
            print(f"{name} {lib}: aw={len(a)} wch={len(h)} (renamed {len(renamed)}, plain {len(h - renamed)})")
        (RESULTS / f"{norm(name)}.hide.json").write_text(json.dumps(summary, indent=1))


def _tag(wheel):
    m = re.match(r".*?-cp\d+-[^-]+-(.+)\.whl$", wheel or "")
    return m.group(1).replace("_x86_64", "").replace("manylinux", "ml") if m else "-"


def _smoke(t):
    if not t:
        return "-"
    if "install_rc" in t:
        return "install failed"
    h, o = t["hidden"], t["host"]
    return ("ok" if h["ok"] else "FAIL") + ("" if o["ok"] == h["ok"] else f" (host {'ok' if o['ok'] else 'FAIL'})")


_HID = re.compile(r"symbols of \S+: (\d+) of (\d+) exports hidden, (\d+) renamed, (\d+) kept visible")


def _hidden(name):
    """'hidden/exports, renamed, kept' summed over the vendored libraries, from wheelcheck --hide-symbols' log."""
    log = CACHE / "logs" / f"repair-wch-{name}.log"
    if not log.exists():
        return "-"
    rows = [tuple(map(int, m.groups())) for m in _HID.finditer(log.read_text())]
    if not rows:
        return "none"
    h, e, r, k = (sum(x[i] for x in rows) for i in range(4))
    return f"{h}/{e} hidden, {r} renamed, {k} kept"


def cmd_report(names=()):
    """Markdown table: tags, vendored libraries, whether both tools' outputs are the same, smoke tests, and what
    --hide-symbols hid (NAME ...: only those projects)."""
    want = {norm(p[0]) for p in selected(names)} if names else None
    print("| wheel | vendored (wheelcheck) | auditwheel | wheelcheck | --hide-symbols | same files | smoke aw / wc / wch "
          "| hidden (wch) |")
    print("|---|---|---|---|---|---|---|---|")
    for rf in sorted(RESULTS.glob("*.repair.json")):
        if want is not None and rf.name.split(".")[0] not in want:
            continue
        r = json.loads(rf.read_text())
        tf = rf.with_name(rf.name.replace(".repair.", ".test."))
        t = json.loads(tf.read_text()) if tf.exists() else {}
        libs = ", ".join(re.sub(r"-[0-9a-f]{8}\.so.*", "", v) for v in r.get("wc", {}).get("vendored", []))
        cells = [r["input"].split("-cp")[0], libs or "-"]
        for tool in TOOLS:
            x = r.get(tool, {})
            cells.append(f"{_tag(x.get('wheel'))} (rc {x.get('rc')}, {len(x.get('vendored', []))} libs)")
        d = r.get("aw_vs_wc")
        cells.append("-" if d is None else ("yes" if not any(d.values()) else json.dumps(d)))
        cells.append(" / ".join(_smoke(t.get(tool)) for tool in TOOLS))
        project = next((p[0] for p in PROJECTS if norm(p[0]) == rf.name.split(".")[0]), rf.name.split(".")[0])
        cells.append(_hidden(project))
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:] or ["report"]
    commands = {"build": cmd_build, "repair": cmd_repair, "test": cmd_test, "hidecheck": cmd_hidecheck,
                "report": cmd_report}
    commands[cmd](args)
