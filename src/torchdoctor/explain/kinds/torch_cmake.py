"""What torch's own CMake files say when a build from source, or an extension built against torch, finds no CUDA.

`kinds/build.py` (``cuda_build``) reads these beside the build tools' messages (`kinds/build_tools.py`). The
messages are catalogued in ``catalog/build_tools.tsv``, each row naming its file of pytorch/pytorch and the torch
releases that print it:

- ``cmake/public/cuda.cmake`` (installed with every CUDA torch as ``share/cmake/Caffe2/public/cuda.cmake``, read
  by ``find_package(Torch)``): torch 2.0 to 2.4 stop at ``Failed to find nvToolsExt`` where the toolkit has no
  NVTX 2 library (CUDA 12 on Windows installs none, CUDA 12.9 removed it everywhere); torch 2.5 went to the
  header-only nvtx3 (pytorch#109843; pytorch#133293's answer: "replaced by nvtx3") but 2.5 to 2.7 still fall back
  to NVTX 2's ``CUDA::nvToolsExt`` where they find no nvtx3, which CMake then refuses: ``The link interface of
  target "torch::nvtoolsext" contains: CUDA::nvToolsExt but the target was not found`` (pytorch#152756, CUDA 12.9
  with torch 2.7); 2.8 moved the lookup into its own build and ships the nvtx3 headers (pytorch#151583, #150591).
  Its ``Found two conflicting CUDA versions`` (2.1: ``installs``) is nvcc of one toolkit beside the headers of
  another, and its
  ``Caffe2: CUDA cannot be found`` the warning before Caffe2Config's error.
- ``cmake/Caffe2Config.cmake.in`` (installed as ``share/cmake/Caffe2/Caffe2Config.cmake``): ``Your installed Caffe2
  version uses CUDA but I cannot find the CUDA libraries`` (and the same of cuDNN): a CUDA torch's CMake
  package needs a CUDA toolkit to configure against, though its wheel carries the runtime it runs with.
- FindCUDA (CMake's, and torch's copy in ``cmake/Modules_CUDA_fix``): ``Specify CUDA_TOOLKIT_ROOT_DIR``.

CMake wraps a message at about 70 characters, so each anchor is the start of the message's first line.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "builds and installs"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

TEMPLATES = (
    "build_tools:torch-cmake-failed-to-find-nvtoolsext",
    "build_tools:torch-cmake-nvtoolsext-link-interface",
    "build_tools:torch-cmake-two-conflicting-cuda-versions",
    "build_tools:torch-cmake-two-conflicting-cuda-installs",
    "build_tools:torch-cmake-cuda-cannot-be-found",
    "build_tools:caffe2config-cuda-libraries-not-found",
    "build_tools:caffe2config-cudnn-libraries-not-found",
    "build_tools:findcuda-specify-cuda-toolkit-root-dir",
)

ANCHORS = (
    "Failed to find nvToolsExt",
    'The link interface of target "torch::nvtoolsext" contains:',
    "Found two conflicting CUDA versions:",
    "Found two conflicting CUDA installs:",  # torch 2.1's wording
    "Caffe2: CUDA cannot be found.",
    "Your installed Caffe2 version uses CUDA but I cannot find the CUDA",
    "Your installed Caffe2 version uses cuDNN but I cannot find the cuDNN",
    "Specify CUDA_TOOLKIT_ROOT_DIR",
)

# a warning the configure goes on after (a CPU build of an extension may not need CUDA): likely alone
GENERIC = ("Caffe2: CUDA cannot be found.",)

FACTS = (
    R(r"(?P<nvtx2_missing>Failed to find nvToolsExt)"),
    R(r'(?P<nvtx2_target_missing>The link interface of target "torch::nvtoolsext" contains:)'),
    # the versions follow on lines of their own, blank lines between: not read (a symlinked toolkit prints one
    # version twice)
    R(r"(?P<cuda_conflict>Found two conflicting CUDA (?:versions|installs):)"),
    R(
        r"(?P<cmake_no_cuda>Caffe2: CUDA cannot be found|uses CUDA but I cannot find the CUDA|Specify CUDA_TOOLKIT_ROOT_DIR)"
    ),
    R(r"(?P<cmake_no_cudnn>uses cuDNN but I cannot find the cuDNN)"),
)


def explain(facts: dict) -> tuple[str, str] | None:
    """The summary and fix for what torch's CMake said (the facts `FACTS` read), or None when it said none of it."""
    if facts.get("nvtx2_missing"):
        return (
            "torch's CMake (cmake/public/cuda.cmake of torch 2.0 to 2.4) requires NVTX 2's nvToolsExt library, "
            "which this CUDA toolkit does not have (CUDA 12 installs none on Windows; CUDA 12.9 removed it)",
            "torch 2.5 and later use the header-only nvtx3 (in every toolkit since CUDA 10) instead of nvToolsExt. "
            "Building PyTorch from source: build 2.5 or newer (git checkout v2.5.0 or a later tag, then "
            "git submodule update --init --recursive). Building an extension against torch 2.0-2.4: upgrade torch "
            "(pip install -U torch), or give the build an NVTX 2 (on Windows the Nsight NVTX component of the "
            "CUDA 11.8 installer, with NVTOOLSEXT_PATH pointing at it; on Linux a toolkit of CUDA 12.8 or older).",
        )
    if facts.get("nvtx2_target_missing"):
        return (
            "torch's CMake fell back to NVTX 2 (the CUDA::nvToolsExt target), which this CUDA toolkit does not have: "
            "torch 2.5 to 2.7 do so where they find no nvtx3 headers, and CUDA 12.9 and later ship no nvToolsExt",
            "Build against torch 2.8 or later, whose CMake looks up the header-only nvtx3 itself and whose wheel "
            "ships its headers (pytorch#151583), or build with a CUDA toolkit of 12.8 or older. Keeping this torch "
            "and toolkit: define the target before find_package(Torch), as an INTERFACE IMPORTED library named "
            "CUDA::nvToolsExt that links CUDA::nvtx3 (find_package(CUDAToolkit) first; CMake 3.25+ defines it).",
        )
    if facts.get("cuda_conflict"):
        return (
            "torch's CMake found the CUDA compiler of one toolkit and the headers of another (or one toolkit "
            "through two paths, a symlink such as /usr/local/cuda, which torch 2.1's check took for two: "
            "pytorch#106971, #108931)",
            "Point the build at one toolkit, the one matching torch.version.cuda: export "
            "CUDA_HOME=/usr/local/cuda-<version> CUDA_PATH=$CUDA_HOME PATH=$CUDA_HOME/bin:$PATH (or "
            "-DCMAKE_CUDA_COMPILER=$CUDA_HOME/bin/nvcc -DCUDAToolkit_ROOT=$CUDA_HOME), delete the build folder's "
            "CMakeCache.txt, and configure again.",
        )
    if facts.get("cmake_no_cudnn"):
        return (
            "CMake found no cuDNN while configuring against a CUDA build of torch (its Caffe2Config.cmake needs "
            "cuDNN's headers and library)",
            "Install cuDNN for torch's CUDA major (NVIDIA's cudnn package, or pip install nvidia-cudnn-cu12) and "
            "point CMake at it: export CUDNN_ROOT=/path/to/cudnn (or CUDNN_INCLUDE_DIR and CUDNN_LIBRARY), then "
            "configure again in a clean build folder.",
        )
    if facts.get("cmake_no_cuda"):
        return (
            "CMake found no CUDA toolkit while configuring against a CUDA build of torch (torch's "
            "Caffe2Config.cmake needs the toolkit to build against, though the wheel brings the CUDA runtime it "
            "runs with)",
            "Install the CUDA toolkit matching torch.version.cuda (a -devel container image, or NVIDIA's toolkit) "
            "and point CMake at it: export CUDA_HOME=/usr/local/cuda-<version> PATH=$CUDA_HOME/bin:$PATH, or pass "
            "-DCUDAToolkit_ROOT=$CUDA_HOME (-DCUDA_TOOLKIT_ROOT_DIR=$CUDA_HOME for FindCUDA) to cmake. For a build "
            "that needs no CUDA, install the CPU build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/cpu.",
        )
    return None
