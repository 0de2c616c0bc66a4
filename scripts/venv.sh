# Sourced by test.sh, .ci/run and the scripts that need Python: creates (once) and activates
# pagelab's own virtual environment in .venv/ inside the checkout, with the pinned test and
# benchmark dependencies of pyproject.toml's `test` extra. Nothing is installed into the
# system's or the user's site-packages, so Debian's own python3 (PEP 668, "externally
# managed") works as it is.
#
#   . scripts/venv.sh        # then python3, pip, maturin and pytest are the venv's
#
# PAGELAB_PYTHON picks the interpreter that creates the environment (default: python3).
pagelab_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pagelab_venv="$pagelab_root/.venv"
if [ ! -x "$pagelab_venv/bin/python3" ]; then
  py=${PAGELAB_PYTHON:-python3}
  if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "[venv] installing Debian's python3-venv (the venv module with ensurepip)" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
    else
      echo "[venv] $py has no working venv module: install Debian's python3-venv package (apt-get install python3-venv)" >&2
      return 1 2>/dev/null || exit 1
    fi
  fi
  echo "[venv] creating $pagelab_venv with $("$py" --version 2>&1)" >&2
  rm -rf "$pagelab_venv"
  "$py" -m venv "$pagelab_venv"
fi
# The `test` extra, read from pyproject.toml and installed when it changed (a stamp holds
# the list last installed), so a rerun costs nothing.
pagelab_reqs=$("$pagelab_venv/bin/python3" - "$pagelab_root/pyproject.toml" <<'PY'
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11: parse the one list by hand
    tomllib = None
text = open(sys.argv[1], encoding="utf-8").read()
if tomllib:
    reqs = tomllib.loads(text)["project"]["optional-dependencies"]["test"]
else:
    import ast, re
    reqs = ast.literal_eval(re.search(r"(?ms)^test\s*=\s*(\[.*?\])", text).group(1))
print("\n".join(reqs))
PY
)
export PIP_CACHE_DIR="$pagelab_venv/cache/pip"
if [ "$(cat "$pagelab_venv/.pagelab-test-reqs" 2>/dev/null)" != "$pagelab_reqs" ]; then
  echo "[venv] installing the test dependencies into .venv" >&2
  # shellcheck disable=SC2086
  printf '%s\n' "$pagelab_reqs" > "$pagelab_venv/requirements.txt"
  "$pagelab_venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$pagelab_venv/requirements.txt" >&2
  printf '%s\n' "$pagelab_reqs" > "$pagelab_venv/.pagelab-test-reqs"
fi
export VIRTUAL_ENV="$pagelab_venv"
# Caches that would otherwise land in the home directory stay in the checkout too.
export PIP_CACHE_DIR="$pagelab_venv/cache/pip"
export MPLCONFIGDIR="$pagelab_venv/cache/matplotlib"
export PATH="$pagelab_venv/bin:$PATH"
unset PYTHONHOME
