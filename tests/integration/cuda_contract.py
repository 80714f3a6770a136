"""The CUDA contract taken from real binaries, for test_cuda_symbol_contract and test_fake_exports (stdlib only).

tests/contract/cuda-imports.txt (written by scripts/cuda-contract.py) holds the CUDA runtime, driver, cuBLAS,
cuBLASLt, cuDNN and NCCL functions that nvcc-built programs and the PyTorch wheel's libraries import, and what
the libraries they bind to export; tests/contract/passthrough.txt the imported functions profwrap leaves alone
on purpose, each with its reason.
"""
import os
import re
import shutil
import subprocess

from pwtest import REPO, Fail, Skip

CONTRACT_DIR = os.path.join(REPO, "tests", "contract")
SNAPSHOT = os.path.join(CONTRACT_DIR, "cuda-imports.txt")
PASSTHROUGH = os.path.join(CONTRACT_DIR, "passthrough.txt")

# The library a function belongs to, by its name; cublasLt before cublas. cuFile* is libcufile's, not the
# driver's.
LIBRARY_BY_PREFIX = [
    (re.compile(r"^cublasLt"), "libcublasLt.so.13"),
    (re.compile(r"^cublas"), "libcublas.so.13"),
    (re.compile(r"^cudnn"), "libcudnn.so.9"),
    (re.compile(r"^(__cuda|cuda)"), "libcudart.so.13"),
    (re.compile(r"^p?nccl"), "libnccl.so.2"),
    (re.compile(r"^cu(?!File)[A-Z]"), "libcuda.so.1"),
]
LIBRARIES = sorted(set(lib for _, lib in LIBRARY_BY_PREFIX))


def library_of(name):
    """The soname of the CUDA library name belongs to, or None when it is no CUDA library's."""
    for prefix, lib in LIBRARY_BY_PREFIX:
        if prefix.match(name):
            return lib
    return None


def bound_library(name, soname):
    """The library an import of name bound to soname ('-': unversioned) resolves to: an unversioned one is the
    library of the name's prefix."""
    return soname if soname != "-" else library_of(name)


class Snapshot:
    """imports: {name: {soname bound to ('-': unversioned): [importers]}}; exports: {soname: {name: version}},
    version as nm -D writes it after the name ('@@libcudart.so.13') or '-'."""

    def __init__(self, imports, exports):
        self.imports = imports
        self.exports = exports

    def importers(self, name):
        return sorted(set(i for labels in self.imports[name].values() for i in labels))


def load_snapshot():
    """Parses SNAPSHOT; fails when it is missing, empty or malformed."""
    try:
        with open(SNAPSHOT) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Fail("no CUDA contract snapshot: %s (scripts/cuda-contract.py writes it)" % e)
    imports, exports = {}, {}
    for number, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) == 4 and fields[0] == "import":
            imports.setdefault(fields[2], {})[fields[1]] = fields[3].split(",")
        elif len(fields) == 4 and fields[0] == "export":
            exports.setdefault(fields[1], {})[fields[2]] = fields[3]
        elif fields:
            raise Fail("%s:%d: not an import or export line: %r" % (SNAPSHOT, number, line))
    if not imports or not exports:
        raise Fail("%s holds %d imports and %d exporting libraries: regenerate it with scripts/cuda-contract.py"
                   % (SNAPSHOT, len(imports), len(exports)))
    return Snapshot(imports, exports)


def load_passthrough():
    """{name: reason} of PASSTHROUGH; fails on a line without a reason or a name listed twice."""
    try:
        with open(PASSTHROUGH) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise Fail("cannot read the pass-through list: %s" % e)
    reasons = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(None, 1)
        if len(fields) < 2:
            raise Fail("%s:%d: %r has no reason" % (PASSTHROUGH, number, line))
        if fields[0] in reasons:
            raise Fail("%s:%d: %s is listed twice" % (PASSTHROUGH, number, fields[0]))
        reasons[fields[0]] = fields[1].strip()
    return reasons


def need_nm():
    if not shutil.which("nm"):
        raise Skip("no nm (binutils)")


def exported_functions(path):
    """{name: version} of the functions path's dynamic symbol table defines (nm -D types T, W, i), version as
    nm writes it after the name ('@@libcudart.so.13'), '-' when unversioned."""
    r = subprocess.run(["nm", "-D", "--defined-only", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        raise Fail("nm -D %s exited %d: %s" % (path, r.returncode, r.stderr.strip()))
    functions = {}
    for line in r.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in ("T", "W", "i"):
            at = fields[2].find("@")
            if at < 0:
                functions[fields[2]] = "-"
            else:
                functions[fields[2][:at]] = fields[2][at:]
    return functions


def wrapped_functions(lib):
    """{name: version} of the CUDA library functions libprofwrap.so (lib) defines."""
    return {name: v for name, v in exported_functions(lib).items() if library_of(name)}
