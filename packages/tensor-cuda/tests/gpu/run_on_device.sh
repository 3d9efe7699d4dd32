#!/usr/bin/env bash
# Installs flambeau-tensor-cuda (and NVIDIA's CUDA 13 wheels) into the current Python
# environment and runs the GPU tests, in one command, on a machine with a GPU:
#
#   packages/tensor-cuda/tests/gpu/run_on_device.sh [PYTHON]
#
# PYTHON (default: python3) must already import flambeau (flambeau-tensor-core built
# from this tree) and have pytest, numpy, scikit-build-core, pybind11 and cmake; nvcc 13
# must be on PATH, in $CUDACXX or under /usr/local/cuda*. Wheels are taken from
# $NVIDIA_WHEELS (a directory of .whl files) when set, else from the package index.
# Ends with the pytest summary and a JSON line of the shared operator table on cuda.
set -euo pipefail
PY=${1:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
PKG=$(cd "$HERE/../.." && pwd)
REPO=$(cd "$PKG/../.." && pwd)
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-8}
if [ -z "${CUDACXX:-}" ]; then
  CUDACXX=$(command -v nvcc || ls -d /usr/local/cuda*/bin/nvcc 2>/dev/null | sort -r | head -1)
  export CUDACXX
fi
echo "== nvcc: $CUDACXX; driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo none)"
if [ -n "${NVIDIA_WHEELS:-}" ]; then
  "$PY" -m pip install --quiet --no-deps "$NVIDIA_WHEELS"/nvidia_*.whl
else
  "$PY" -m pip install --quiet "nvidia-cuda-runtime>=13,<14" "nvidia-cublas>=13,<14" \
    "nvidia-cuda-nvrtc>=13,<14" "nvidia-cusolver>=12,<13" "nvidia-cufft>=12,<13"
fi
start=$(date +%s)
"$PY" -m pip install --quiet --no-build-isolation --no-deps "$PKG"
echo "== built and installed flambeau-tensor-cuda in $(( $(date +%s) - start )) s"
cd /tmp
"$PY" -c "import flambeau; print('== cuda available:', flambeau.cuda.is_available(), flambeau.cuda.device_count(), flambeau.cuda.get_device_name(0) if flambeau.cuda.is_available() else '')"
PYTHONPATH="$REPO/shared${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m pytest -q -p no:cacheprovider -rs "$PKG/tests/gpu" "$PKG/tests/test_plugin.py" "$PKG/tests/test_kernel_indexing.py" \
  "$PKG/tests/test_kernel_plans.py" "$PKG/tests/test_random_streams.py" \
  "$PKG/tests/test_index_math.py" "$PKG/tests/test_pool_select_math.py"
PYTHONPATH="$REPO/shared${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m flambeau_testing.run_on_device cuda \
  --rows '(?!.*complex)(add|sub|mul|div|pow|neg|abs|relu|sign|floor|ceil|trunc|round|exp|exp2|expm1|log|log1p|log2|log10|sqrt|rsqrt|sin|cos|tan|asin|acos|atan|sinh|cosh|tanh|sigmoid|erf|erfc|reciprocal|eq|ne|lt|le|gt|ge|logical_.*|is(nan|inf|finite|posinf|neginf|close)|where|maximum|minimum|max|min|clamp|sum|mean|prod|amax|amin|argmax|argmin|bmm|mm|matmul|addmm|softmax|log_softmax|uniform_|normal_|bernoulli_?|fill_|copy_|gather|index(_select|_put|_add|_copy|_fill)?|take(_along_dim)?|scatter(_add|_reduce)?|masked_fill|cum(sum|prod|max|min)|logcumsumexp|sort|argsort|msort|topk|kthvalue|(nan)?median|mode|searchsorted|masked_scatter|embedding_dense_backward|(native_)?layer_norm|group_norm|(adaptive_)?(max|avg)_pool[123]d|max_unpool[123]d|mse_loss|smooth_l1_loss|huber_loss|binary_cross_entropy(_with_logits)?|kl_div|nll_loss|lerp|addcmul|addcdiv)(_.*)?' \
  | tail -1 || true
