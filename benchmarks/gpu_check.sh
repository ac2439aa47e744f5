#!/usr/bin/env bash
# The GPU checks in one command, for a machine with a CUDA GPU, PyTorch, CuPy and
# torchmetrics (run from the repository root):
#
#   bash benchmarks/gpu_check.sh
#
# 1. the environment (nvidia-smi, versions);
# 2. benchmarks/gpu.py --profile (skrank against torchmetrics and a torch.topk lower
#    bound, 1M and 10M rows, with profiler tables at 10M);
# 3. benchmarks/gpu_namespaces.py (CuPy and CUDA tensors against NumPy's values, 1M rows);
# 4. tests/test_array_api.py on the GPU namespaces (CUDA tensors, CuPy).
#
# Logs go to $OUT (default /tmp/skrank-gpu), one file a step.  Wheels found in .whl/
# (array-api-compat, array-api-strict: pure Python) are installed into /tmp/site first,
# for machines that cannot reach a package index.  Each step has its own time limit, so
# that one slow step leaves the others their time.
OUT=${OUT:-/tmp/skrank-gpu}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
else
    export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
set -o pipefail
status=0

{
    nvidia-smi
    python3 - <<'EOF'
import importlib, sys
print("Python", sys.version.split()[0])
for name in ("torch", "cupy", "numpy", "scipy", "sklearn", "torchmetrics", "array_api_compat",
             "array_api_strict"):
    try:
        module = importlib.import_module(name)
        print(f"{name} {module.__version__} ({module.__file__})")
    except Exception as exc:
        print(f"{name}: {type(exc).__name__}: {exc}")
import torch
if torch.cuda.is_available():
    print("torch sees", torch.cuda.get_device_name(), "CUDA", torch.version.cuda)
try:
    import cupy
    print("cupy sees", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
          "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())
except Exception as exc:
    print("cupy:", type(exc).__name__, exc)
EOF
} 2>&1 | tee "$OUT/env.log"

step() {  # step NAME SECONDS COMMAND...
    local name=$1 seconds=$2
    shift 2
    echo "== $name: $* (at most ${seconds}s)"
    local start=$SECONDS
    timeout "$seconds" "$@" 2>&1 | tee "$OUT/$name.log"
    local rc=$?
    echo "== $name: exit $rc after $((SECONDS - start))s" | tee -a "$OUT/$name.log"
    [ "$rc" -eq 0 ] || status=1
}

step gpu "${GPU_SECONDS:-170}" python3 benchmarks/gpu.py --profile
step namespaces "${NAMESPACES_SECONDS:-100}" python3 benchmarks/gpu_namespaces.py
step pytest "${PYTEST_SECONDS:-130}" python3 -m pytest tests/test_array_api.py -q \
    -p no:cacheprovider -k "torch_cuda or cupy" --maxfail=25 --tb=short --durations=5
exit $status
