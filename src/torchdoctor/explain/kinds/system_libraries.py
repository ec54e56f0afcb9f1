"""A package's build that needs a system library pkg-config cannot find.

pkg-config (``pkg.c``; pkgconf prints the same words) looks for ``<name>.pc`` in ``PKG_CONFIG_PATH`` and its
default folders and, when there is none, says "Package <name> was not found in the pkg-config search path." then
"Perhaps you should add the directory containing `<name>.pc'" and "to the PKG_CONFIG_PATH environment variable".
A setup.py that compiles against a C/C++ library (ffcv against OpenCV and libjpeg-turbo, GDAL's Python bindings,
PyAV against FFmpeg) asks pkg-config for its flags and stops there. The .pc file comes with the library's
development package: either that package is not installed (a pip wheel of the library, such as opencv-python, has
neither headers nor a .pc file), or it is installed under a prefix pkg-config does not search (a conda
environment's lib/pkgconfig, /usr/local). The message names the library; the reading is certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

# Debian/Ubuntu's development packages for the names training stacks' builds ask pkg-config for
_DEV_PACKAGES = {
    "opencv4": "libopencv-dev",
    "opencv": "libopencv-dev",
    "libturbojpeg": "libturbojpeg0-dev",
    "gdal": "libgdal-dev",
    "openssl": "libssl-dev",
}


def _not_found(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    name = first(hits, "pc_name", "<name>")
    apt = _DEV_PACKAGES.get(name, f"the -dev package that ships {name}.pc")
    return (
        f"pkg-config found no {name}.pc: the system library {name} that the package being built compiles against "
        "is not installed as a development package, or not where pkg-config looks" + on_ranks(hits),
        f"Install {name}'s development files with the system's package manager (apt install {apt}; the -devel "
        f"package on Fedora/RHEL, its Homebrew formula on macOS), or in a conda environment conda install -c conda-forge "
        f"{name.removesuffix('4')} pkg-config, then build again. A pip wheel of the library (opencv-python) does not "
        f"count: it has no headers or .pc file. If {name} is installed under another prefix, point pkg-config at "
        f"it: export PKG_CONFIG_PATH=<prefix>/lib/pkgconfig:$PKG_CONFIG_PATH (the folder holding {name}.pc; "
        "$CONDA_PREFIX/lib/pkgconfig in a conda environment) and check with pkg-config --cflags --libs "
        f"{name}.",
    )


SYSTEM_LIBRARY_MISSING = Recogniser(
    kind="system_library_missing",
    templates=("build_tools:pkg-config-package-not-found",),
    title="a system library the build needs that is not installed",
    anchors=("was not found in the pkg-config search path",),
    match=R(r"Package (?P<pc_name>[\w.+-]{1,80}) was not found in the pkg-config search path"),
    describe=_not_found,
)

RECOGNISERS = (SYSTEM_LIBRARY_MISSING,)
