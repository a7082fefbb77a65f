#!/usr/bin/env bash
# Fetch, here, the wheels that bench/gpu_check.sh needs on a GPU machine that has torch with CUDA
# but no network: detachlint's dependencies (libcst is compiled: one wheel per CPython version,
# 3.9 to 3.13; its bound as in pyproject.toml) and the build backend (detachlint itself is
# installed from the checkout there).
#
#     bench/gpu_wheels.sh [OUT]        # default OUT: bench/gpu-wheels (ignored by git)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bench/gpu-wheels}
py=${PYTHON:-python3}
mkdir -p "$out"
# The build backend, so that gpu_check.sh installs detachlint from the checkout as it is then.
"$py" -m pip download -q --only-binary=:all: -d "$out" hatchling
for version in 3.9 3.10 3.11 3.12 3.13; do
    "$py" -m pip download -q --only-binary=:all: --python-version "$version" --platform manylinux2014_x86_64 \
        --platform manylinux_2_28_x86_64 -d "$out" "libcst>=1.1,<1.10" "pathspec>=0.12" pyyaml "tomli>=1.1" typing_extensions
done
ls "$out"
