# The two commands a newcomer needs:
#   make book   build the site into _build/html (installs what it needs first)
#   make test   run every test: unit tests, notebooks (nbval), strict build, site in Chromium
# Others:
#   make notebooks   re-execute every notebook in a fresh kernel and store outputs + widget state
#   make bench       benchmarks (not tests): attnbook vs PyTorch, efficient attention sweeps
#   make lab         open the chapters in JupyterLab

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
JB     := $(BIN)/jupyter-book build . -W -n --keep-going
SITE   := _build/html

.PHONY: setup book test unit nbval site-test notebooks bench lab clean check-system

setup: $(VENV)/.installed node_modules/.installed _vendor/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; the book needs Python 3.11 (or run: make PYTHON=python3 ...)"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: npm not found; the site build needs Node.js (for MathJax and the widget manager)"; exit 1; }
	npm ci --no-audit --no-fund --ignore-scripts
	touch $@

_vendor/.installed: node_modules/.installed scripts/vendor_assets.py
	$(BIN)/python scripts/vendor_assets.py
	touch $@

book: setup
	$(JB)
	@echo
	@echo "The site is in $(SITE)/ — open $(SITE)/index.html in a browser (no server needed)."

check-system:
	@test -x /usr/bin/chromium || { echo "error: the site test needs Debian's chromium: sudo apt-get install chromium"; exit 1; }
	@fc-list | grep -qi -e "wenquanyi" -e "noto sans cjk" -e "source han sans" || { echo "error: no CJK font: sudo apt-get install fonts-wqy-microhei"; exit 1; }

unit: setup
	$(BIN)/pytest tests --ignore=tests/site -q -p no:cacheprovider

nbval: setup
	$(BIN)/pytest --nbval book --nbval-sanitize-with tests/nbval_sanitize.cfg -q -p no:cacheprovider

site-test: setup check-system
	$(JB)
	$(BIN)/pytest tests/site -q -p no:cacheprovider

test: check-system unit nbval site-test

notebooks: setup
	$(BIN)/python scripts/execute_notebooks.py

# bench_efficient takes ~20 min and briefly needs ~16.5 GiB (naive attention at n=16384).
bench: setup
	$(BIN)/python benchmarks/bench_mha.py
	$(BIN)/python benchmarks/bench_efficient.py

lab: setup
	$(BIN)/jupyter lab book/

clean:
	rm -rf _build _vendor
