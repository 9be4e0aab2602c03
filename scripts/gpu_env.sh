# Sourced on the GPU machine (bash): points ksmith at the binaries and libraries in .gpu/ and at
# this checkout's tasks and test kernels.
root=$(pwd)
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="$root/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}"
export KSMITH_TASKS_DIR="$root/tasks"
export KSMITH_KNOWLEDGE_DIR="$root/knowledge"
export KSMITH_CACHE_DIR="${KSMITH_CACHE_DIR:-/tmp/ksmith-cache}"
export KSMITH_TEST_SOURCE_DIR="$root"
export KSMITH_TEST_CLI="$root/.gpu/bin/ksmith"
K="$root/.gpu/bin/ksmith"
