"""The fake CUDA libraries (tests/fakes) export what the real ones do, for every name libprofwrap.so wraps: the
fake of the name's library defines it exactly when the real library does, with the same symbol version
(cudaMalloc@@libcudart.so.13). The real export lists are the installed toolkit's libraries (CUDA_HOME: those
present; the driver as lib64/stubs/libcuda.so declares it) and the PyTorch wheel's, as the snapshot
tests/contract/cuda-imports.txt records them; a name only one of them exports is real (the wheel is newer).

Also the nvcc contract: every libcudart function a program built with nvcc -cudart shared imports (the
snapshot's nvcc:* importers: the <<<>>> host stubs' __cudaPushCallConfiguration, __cudaLaunchKernel, the fat
binary registration, ...) is in the fake libcudart with libcudart's version, so such programs run against it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403
from cuda_contract import (LIBRARIES, exported_functions, library_of, load_snapshot, need_nm,  # noqa: E402
                           wrapped_functions)

TOOLKIT_DIRS = ["lib64", "lib", "targets/x86_64-linux/lib"]
SYSTEM_DIR = "/usr/lib/x86_64-linux-gnu"


def toolkit_library(soname):
    """The installed toolkit's copy of soname (the driver: its link stub), or None."""
    if soname == "libcuda.so.1":
        candidates = [os.path.join(CUDA_HOME, d, "stubs", "libcuda.so") for d in TOOLKIT_DIRS]
    else:
        candidates = [os.path.join(CUDA_HOME, d, soname) for d in TOOLKIT_DIRS] + [os.path.join(SYSTEM_DIR, soname)]
    return next((p for p in candidates if os.path.exists(p)), None)


def test():
    if not os.environ.get("PROFWRAP_FAKES"):
        skip("PROFWRAP_FAKES is not set (make integration sets it when the fakes are built)")
    fakes = fakes_dir()
    need_nm()
    snap = load_snapshot()
    wrapped = wrapped_functions(LIB)
    check(wrapped, "libprofwrap.so (%s) defines no CUDA library function", LIB)

    fake, toolkit, wheel = {}, {}, {}
    for soname in LIBRARIES:
        path = os.path.join(fakes, soname)
        check(os.path.exists(path), "no fake %s in %s", soname, fakes)
        fake[soname] = exported_functions(path)
        real = toolkit_library(soname)
        if real:
            toolkit[soname] = exported_functions(real)
        else:
            note("no toolkit %s under %s or in %s: checked against the wheel's exports only" % (
                soname, CUDA_HOME, SYSTEM_DIR))
        wheel[soname] = snap.exports.get(soname, {})
        check(toolkit.get(soname) or wheel[soname], "no real export list of %s (toolkit or snapshot)", soname)

    differences, notes = [], []
    for name in sorted(wrapped):
        lib = library_of(name)
        real_versions = {}
        for source, exports in (("toolkit", toolkit), ("wheel", wheel)):
            if name in exports.get(lib, {}):
                real_versions[source] = exports[lib][name]
        if len(real_versions) == 1 and lib in toolkit:
            notes.append("only the %s's %s exports %s" % (next(iter(real_versions)), lib, name))
        in_fake = name in fake[lib]
        if real_versions and not in_fake:
            differences.append("%s %s: the real library exports it, the fake does not" % (lib, name))
        elif in_fake and not real_versions:
            differences.append("%s %s: the fake exports it, the real library does not" % (lib, name))
        elif not in_fake:
            differences.append("%s %s: libprofwrap.so wraps it, but neither the real library nor the fake exports "
                               "it" % (lib, name))
        else:
            for source, version in sorted(real_versions.items()):
                if fake[lib][name] != version:
                    differences.append("%s %s: the fake's version is %s, the %s's %s" % (
                        lib, name, fake[lib][name], source, version))

    cudart = "libcudart.so.13"
    nvcc_imports = sorted(name for name, bound in snap.imports.items()
                          if any(i.startswith("nvcc:") for i in bound.get(cudart, ())))
    check(nvcc_imports, "the snapshot has no libcudart import of an nvcc-built program (nvcc:*)")
    for name in nvcc_imports:
        importers = ",".join(i for i in snap.imports[name][cudart] if i.startswith("nvcc:"))
        version = fake[cudart].get(name)
        real_version = toolkit.get(cudart, {}).get(name) or wheel[cudart].get(name)
        if version is None:
            differences.append("%s %s: imported by %s, the fake does not export it" % (cudart, name, importers))
        elif version != real_version:
            differences.append("%s %s: imported by %s, the fake exports it as version %s, the real library as %s" % (
                cudart, name, importers, version, real_version))

    for line in notes:
        note("note: " + line)
    for line in differences:
        note(line)
    note("%d wrapped names and %d libcudart imports of nvcc programs checked against the fakes: %d differences" % (
        len(wrapped), len(nvcc_imports), len(differences)))
    check(not differences, "the fakes differ from the real libraries (listed above)")


main(test)
