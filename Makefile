# The two commands a newcomer needs:
#   make book   build the site into _build/html, English at its root and Chinese in zh/
#               (installs what it needs first)
#   make test   run every test: unit tests, both editions' notebooks (nbval), strict builds,
#               the site in Chromium
# Others:
#   make notebooks   re-execute every notebook in a fresh kernel and store its outputs
#   make checkpoints retrain the committed models that chapters 7-8 study (rarely; see CONTRIBUTING.md)
#   make bench       benchmarks (not tests): attnbook vs PyTorch, efficient attention sweeps
#   make lab         open JupyterLab: the chapters in book/ (English) and zh/book/ (Chinese)
#   make i18n        extract the library's strings into the translation template and merge them
#                    into the Chinese catalogue (see CONTRIBUTING.md)
#   make serve       build the site, then serve it on http://127.0.0.1:8000/ (PORT=... for another)
#   make test-torch-latest   unit tests and notebooks under the newest PyTorch (a second venv)

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
JB     := $(BIN)/jupyter-book build . -W -n --keep-going
SITE   := _build/html
# The Chinese edition (zh/) is a second book with the same page names, built on its own and
# copied into the English site's zh/ folder; every page links to its counterpart.
ZH_OUT := _build/zh
JB_ZH  := $(BIN)/jupyter-book build zh -W -n --keep-going --path-output $(ZH_OUT)
# Notebooks run on NBVAL_WORKERS processes at once (a notebook's cells stay on one worker and one
# kernel), and so do the site's browser tests. NBVAL_WORKERS=0 runs them one after another.
# Each kernel computes on one thread (ONE_THREAD): most chapters call torch.set_num_threads(1)
# themselves; for the others, two workers each running two threads on two cores made chapter 1
# ten times slower (157 s against 15 s).
NBVAL_WORKERS ?= 2
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
NBVAL_FLAGS := --nbval-sanitize-with tests/nbval_sanitize.cfg -q -p no:cacheprovider \
	-n $(NBVAL_WORKERS) --dist loadscope
NBVAL    := pytest --nbval book $(NBVAL_FLAGS)
NBVAL_ZH := pytest --nbval zh/book $(NBVAL_FLAGS)
# Each notebook's kernel is a fork of one process that has already imported torch, matplotlib,
# attnbook and torch._dynamo (scripts/warm_kernels.py): about 3 s less CPU per notebook, 23 per
# edition (the English pass's first cells: 50.6 s in all, against under 0.5 s). The outputs are
# the same; NBVAL_WARM=0 starts every kernel cold.
NBVAL_WARM ?= 1
WARM = $(if $(filter 1,$(NBVAL_WARM)),$(BIN)/python scripts/warm_kernels.py run -- ,)
WARM_KERNEL = $(if $(filter 1,$(NBVAL_WARM)),--nbval-kernel-name attnbook-warm,)
# Another processor's arithmetic for the second pass: kernels other than those that computed the
# stored outputs (each notebook records them; scripts/other_cpu.py reads the records). A machine
# whose own kernels wrote none of them is another processor already and runs at full speed (an
# AVX2 laptop checking outputs computed with AVX-512); otherwise PyTorch's AVX2 kernels on an
# AVX-512 machine, its generic kernels anywhere else; oneDNN and MKL held to AVX2. Trained weights
# and last bits then differ from the stored ones, as on another CPU. AVX2 rather than generic
# where it differs: the same check, and a third faster (598 s against 792 s of nbval).
# Force one with `make nbval-other-cpu OTHER_CAPABILITY=default`.
OTHER_CAPABILITY ?= $(shell $(BIN)/python scripts/other_cpu.py 2>/dev/null || echo default)
OTHER_CPU = ATEN_CPU_CAPABILITY=$(OTHER_CAPABILITY) ONEDNN_MAX_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
CPU_KERNELS = $(BIN)/python -c "import torch; print('PyTorch', torch.__version__, 'with CPU kernels', torch.backends.cpu.get_cpu_capability())"
# The newest PyTorch release, tested in a venv of its own (make test-torch-latest).
TORCH_LATEST ?= 2.15.0
VENV_LATEST  := .venv-torch-latest

.PHONY: setup book site serve test lint unit unit-and-site nbval nbval-other-cpu nbval-zh site-test notebooks checkpoints \
	bench lab clean check-system test-torch-latest i18n

setup: $(VENV)/.installed node_modules/.installed _vendor/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; the book needs Python 3.11 (or run: make PYTHON=python3 ...)"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	scripts/install_requirements.sh $(BIN)
	touch $@

node_modules/.installed: package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: npm not found; the site build needs Node.js (for MathJax, Font Awesome and axe-core)"; exit 1; }
	npm ci --no-audit --no-fund --ignore-scripts
	touch $@

_vendor/.installed: node_modules/.installed scripts/vendor_assets.py
	$(BIN)/python scripts/vendor_assets.py
	touch $@

COPY_ZH_SITE = rm -rf $(SITE)/zh && cp -r $(ZH_OUT)/_build/html $(SITE)/zh
# The two editions build at the same time, one per core; the Chinese build's log is shown after
# the English one's (and the target fails if either build does).
site: setup
	@mkdir -p $(ZH_OUT)
	$(JB_ZH) > $(ZH_OUT)/build.log 2>&1 & zh=$$!; \
	$(JB); en=$$?; \
	wait $$zh; zhs=$$?; cat $(ZH_OUT)/build.log; \
	test $$en = 0 -a $$zhs = 0
	$(COPY_ZH_SITE)

book: site
	@echo
	@echo "The site is in $(SITE)/ — open $(SITE)/index.html in a browser (no server needed);"
	@echo "the Chinese edition is in $(SITE)/zh/ (中文版：$(SITE)/zh/index.html)."

# The built site on this machine only (127.0.0.1), for readers who prefer a server to opening the
# files; Ctrl-C stops it. `make serve PORT=8080` picks another port.
PORT ?= 8000
serve: site
	@echo
	@echo "Serving $(SITE)/ at http://127.0.0.1:$(PORT)/ (中文版：http://127.0.0.1:$(PORT)/zh/); Ctrl-C stops it."
	$(BIN)/python -m http.server $(PORT) --bind 127.0.0.1 --directory $(SITE)

check-system:
	@test -x /usr/bin/chromium || { echo "error: the site test needs Debian's chromium: sudo apt-get install chromium"; exit 1; }
	@fc-list | grep -qi -e "wenquanyi" -e "noto sans cjk" -e "source han sans" || { echo "error: no CJK font: sudo apt-get install fonts-wqy-microhei"; exit 1; }

# Ruff (pinned in requirements.txt, configured in pyproject.toml): lint everything, notebooks
# included; the Python files must also be formatted as `ruff format` leaves them. actionlint
# (pinned too) checks the GitHub Actions workflow: syntax, expressions, job graph, action versions.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check src tests scripts benchmarks book/_ext
	$(BIN)/actionlint .github/workflows/*.yml

# The unit tests share the two cores with the site's builds (unit-and-site): 4,700 tests took
# 98 s on two workers against about 170 s of CPU on one.
UNIT = $(ONE_THREAD) $(BIN)/pytest tests --ignore=tests/site -q -p no:cacheprovider -n $(NBVAL_WORKERS)
unit: setup
	$(UNIT)

# What `make test` does first: the unit tests on one core (ONE_THREAD: as fast as on two) and the
# site on the other, one edition after the other; the build's log is shown after the tests'.
# 62 s, against 47 s of unit tests and then 33 s of `make site`. With PyTorch's two threads the
# unit tests took 88 s beside the build.
unit-and-site: setup
	@mkdir -p $(ZH_OUT)
	{ $(JB); en=$$?; $(JB_ZH) && test $$en = 0; } > _build/build.log 2>&1 & site=$$!; \
	$(UNIT); unit=$$?; \
	wait $$site; built=$$?; cat _build/build.log; \
	test $$unit = 0 -a $$built = 0
	$(COPY_ZH_SITE)

nbval: setup
	@$(CPU_KERNELS)
	$(ONE_THREAD) $(WARM)$(BIN)/$(NBVAL) $(WARM_KERNEL)

# The same notebooks again, computed with other CPU kernels: a stored output that depends on
# the kernels (anything trained, summation order) fails here even if it passes above.
nbval-other-cpu: setup
	@$(OTHER_CPU) $(CPU_KERNELS)
	$(OTHER_CPU) $(ONE_THREAD) $(WARM)$(BIN)/$(NBVAL) $(WARM_KERNEL)

# The Chinese notebooks run the English ones' code (tests/test_editions.py), so checking them on
# the other CPU's kernels checks, in one pass, both that the Chinese edition's stored outputs are
# right and that every stored number of the book holds on another processor.
nbval-zh: setup
	@$(OTHER_CPU) $(CPU_KERNELS)
	$(OTHER_CPU) $(ONE_THREAD) $(WARM)$(BIN)/$(NBVAL_ZH) $(WARM_KERNEL)

SITE_TEST = ATTNBOOK_REQUIRE_SITE=1 $(BIN)/pytest tests/site -q -p no:cacheprovider -n $(NBVAL_WORKERS)
site-test: check-system site
	$(SITE_TEST)

# The site is built by unit-and-site; the notebooks' runs change no file it is built from. The
# browser tests mostly wait on pages (326 tests, about 7 minutes, little CPU), so they run beside
# the notebooks instead of after them; their log follows the notebooks'.
# Both editions' notebooks run on the other processor's kernels, so that every stored number is
# checked against arithmetic other than the one that computed it. The English pass stores each
# finished training run in RUN_CACHE (attnbook.run_cache); the Chinese notebooks run the same
# code, and take those runs instead of training them again (the Chinese pass took 895 s, and
# most of it trained models the English pass had just trained, bit for bit the same).
RUN_CACHE := $(abspath _build/run-cache)
test: check-system lint unit-and-site
	rm -rf $(RUN_CACHE)
	@mkdir -p _build
	$(SITE_TEST) > _build/site-test.log 2>&1 & site=$$!; \
	ATTNBOOK_RUN_CACHE=$(RUN_CACHE) $(MAKE) --no-print-directory nbval-other-cpu; en=$$?; \
	echo "training runs stored by the English pass: $$(ls $(RUN_CACHE) 2>/dev/null | grep -c '\.pt$$')"; \
	ATTNBOOK_RUN_CACHE=$(RUN_CACHE) $(MAKE) --no-print-directory nbval-zh; zh=$$?; \
	echo "training runs after the Chinese pass (more: runs it trained itself): $$(ls $(RUN_CACHE) 2>/dev/null | grep -c '\.pt$$')"; \
	echo "runs that could not be stored: $$(cat $(RUN_CACHE)/not-stored.log 2>/dev/null | wc -l) (_build/run-cache/not-stored.log)"; \
	wait $$site; browser=$$?; echo "site test:"; cat _build/site-test.log; \
	test $$en = 0 -a $$zh = 0 -a $$browser = 0

# Then the syllabus takes the run times just measured (book/run_seconds.json) and restates each
# chapter's time (scripts/syllabus.py).
notebooks: setup
	@mkdir -p _build
	$(BIN)/python scripts/execute_notebooks.py --timings _build/timings.json
	$(BIN)/python scripts/syllabus.py --run-times _build/timings.json

checkpoints: setup
	$(BIN)/python scripts/make_checkpoints.py

$(VENV_LATEST)/.installed: requirements.txt pyproject.toml
	test -d $(VENV_LATEST) || $(PYTHON) -m venv $(VENV_LATEST)
	$(VENV_LATEST)/bin/python -m pip install --quiet --upgrade pip
	sed '/^torch==/d' requirements.txt > $(VENV_LATEST)/requirements.txt
	PIP_CONSTRAINT=/dev/null $(VENV_LATEST)/bin/python -m pip install --quiet \
		-r $(VENV_LATEST)/requirements.txt torch==$(TORCH_LATEST)
	touch $@

test-torch-latest: $(VENV_LATEST)/.installed
	@$(VENV_LATEST)/bin/python -c "import torch; print('PyTorch', torch.__version__)"
	$(VENV_LATEST)/bin/pytest tests --ignore=tests/site -q -p no:cacheprovider
	$(ONE_THREAD) $(VENV_LATEST)/bin/$(NBVAL)

# bench_efficient takes ~20 min and briefly needs ~16.5 GiB (naive attention at n=16384);
# bench_backward ~5 min and ~6.5 GiB (naive attention's training step at n=8192).
bench: setup
	$(BIN)/python benchmarks/bench_mha.py
	$(BIN)/python benchmarks/bench_efficient.py
	$(BIN)/python benchmarks/bench_backward.py

lab: setup
	$(BIN)/jupyter lab .

# The strings that figures, views and checkers show: pybabel extracts every tr(...), N_(...) and
# report.run(...) of src/attnbook into src/attnbook/i18n/locale/attnbook.pot, then updates the
# Chinese catalogue, locale/zh/LC_MESSAGES/attnbook.po (new strings empty, changed ones fuzzy).
# Translate those there; tests/test_i18n_catalogue.py fails until every one is translated.
i18n: $(VENV)/.installed
	$(BIN)/python scripts/i18n.py

clean:
	rm -rf _build _vendor
