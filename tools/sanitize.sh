#!/usr/bin/env bash
# Build model/_jsfast.c with AddressSanitizer + UndefinedBehaviorSanitizer and run the tests
# that drive it: the accelerator's differential and hostile-argument tests, both ends of the
# protocol (accelerated vs pure) and jsstr.  Any memory error or undefined behaviour aborts
# the run with a report; exit 0 means clean.
#
#   tools/sanitize.sh [PYTHON] [-- PYTEST-ARGS...]
#
# PYTEST-ARGS replace the default test files (e.g. `-- tests/test_accelerator.py` for the
# quick form CI runs).  PYTHON defaults to `python` (the project's venv).  The sanitized build goes to a temporary
# directory that is put first on dsh_conformance.model's __path__ (a sitecustomize), so the
# normal in-place build is left alone.  CPython is not itself built with ASan, so libasan is
# preloaded and PYTHONMALLOC=malloc routes every Python allocation through it (each object
# gets redzones).  Leak checking is off: the interpreter keeps its own objects alive at exit.
# Exit 77 (skipped) when gcc or libasan is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${1:-python}"
[[ $# -gt 0 ]] && shift
[[ "${1:-}" == "--" ]] && shift

if ! command -v gcc >/dev/null; then
    echo "sanitize: gcc not found; skipped" >&2
    exit 77
fi
LIBASAN="$(gcc -print-file-name=libasan.so)"
if [[ ! -e "$LIBASAN" ]]; then
    echo "sanitize: libasan not found (gcc -print-file-name=libasan.so); skipped" >&2
    exit 77
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
read -r INCLUDE SUFFIX < <("$PYTHON" -c \
    "import sysconfig; print(sysconfig.get_paths()['include'], sysconfig.get_config_var('EXT_SUFFIX'))")
mkdir -p "$WORK/ext" "$WORK/site"
gcc -shared -fPIC -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=all \
    -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
    -I"$INCLUDE" model/_jsfast.c -o "$WORK/ext/_jsfast$SUFFIX"
cat > "$WORK/site/sitecustomize.py" <<PY
import dsh_conformance.model as model
model.__path__.insert(0, "$WORK/ext")
PY

export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
export LD_PRELOAD="$LIBASAN"
export PYTHONMALLOC=malloc
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export CI=true  # the accelerator tests must run, not skip
unset DSH_CONFORMANCE_PURE

loaded="$("$PYTHON" -c 'from dsh_conformance.model import _jsfast; print(_jsfast.__file__)')"
if [[ "$loaded" != "$WORK/ext/"* ]]; then
    echo "sanitize: the sanitized build was not the one imported ($loaded)" >&2
    exit 1
fi
# keep_heap's mallopt is ASan's own stub under LD_PRELOAD: not the C under test.
if [[ $# -eq 0 ]]; then
    set -- tests/test_accelerator.py tests/test_serve_fast_path.py tests/test_jsstr.py \
        tests/test_fast_paths.py
fi
"$PYTHON" -m pytest -q -p no:randomly -p no:cacheprovider -k "not keep_heap" "$@"
echo "sanitize: clean (ASan + UBSan, $loaded)"
