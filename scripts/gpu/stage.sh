#!/usr/bin/env bash
# The serving peers' wheels (scripts/peers: QuACK, FlashInfer, SGLang, FlashMLA) to the GPU
# machine, which reaches no registry and takes at most 64 MiB a call, the working tree included:
# nvidia-cutlass-dsl-libs-cu13 alone is 92 MB. The wheels are cut into call sets here; the calls
# carry one set each, back to back (a warm machine keeps ignored files between calls, about 30 s
# idle at most), and the last call puts the chunks together, checks each wheel's sha256 and
# installs them into /tmp/site.
#
# Here (registry reachable), from the repo root:
#   bash scripts/gpu/stage.sh fetch [PEER ...]  the wheels of PEERS (default: quack flashinfer
#                                               sglang flashmla) into .peers/wheels, with sizes
#   bash scripts/gpu/stage.sh split [ROOM]      cut them into .peers/call-1, call-2, ...: each
#                                               within ROOM bytes (default: 64 MiB less the tree
#                                               that travels, .whl on the first call, 2 MiB
#                                               spare), a MANIFEST.tsv in each; prints the calls
# There (the GPU machine), from the repo root:
#   bash scripts/gpu/stage.sh check             which chunks are there (sha256 each), which are
#                                               still missing and which call carries them
#   bash scripts/gpu/stage.sh install           all there: each wheel put together and checked
#                                               against its sha256, then one pip install of all
#                                               into /tmp/site (SITE=...); else names the missing
#                                               chunks and exits 1
#
# The calls (what `split` prints, with its numbers): call k names `.peers/call-k` in carry (the
# first also `.whl`, from ../shared/gpu/wheels.sh) and runs `bash scripts/gpu/stage.sh check`;
# the last runs
#   bash scripts/gpu/stage.sh install && STEPS=bench BENCH_ARGS="--ops ..." bash scripts/gpu/library.sh
# A call that finds the machine cold (the reply's `warm: false`) lost the earlier sets: `check`
# then names them, and the sequence starts again from call 1.
#
# Left out: flashinfer-cubin (458 MB, 0.6.13, matching no flashinfer-python; FlashInfer's Hopper
# decode builds its kernels with nvcc and reads no cubin) and vllm (peers.NOT_CARRIED says why).
set -euo pipefail
DIR=.peers
SITE=${SITE:-/tmp/site}
LIMIT=$((64 * 1024 * 1024))
SPARE=$((2 * 1024 * 1024))

# Pinned: the releases the bench's notes name (scripts/peers/*.py); one tvm-ffi for all.
declare -A WHEELS=(
  [quack]="quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
    nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1
    apache-tvm-ffi==0.1.15.post2"
  [flashinfer]="flashinfer-python==0.6.15.post1 apache-tvm-ffi==0.1.15.post2"
  [sglang]="sglang==0.5.17"
  [flashmla]="sgl-flash-mla==1.0.0"
)

fetch() {
  local peers=("$@") specs=() p s
  [ ${#peers[@]} -gt 0 ] || peers=(quack flashinfer sglang flashmla)
  for p in "${peers[@]}"; do
    [ -n "${WHEELS[$p]:-}" ] || { echo "stage.sh: no wheels for peer '$p' (${!WHEELS[*]})" >&2; exit 2; }
    for s in ${WHEELS[$p]}; do specs+=("$s"); done
  done
  grep -qx '/.peers/' .git/info/exclude 2>/dev/null || echo '/.peers/' >> .git/info/exclude
  rm -rf "$DIR/wheels" && mkdir -p "$DIR/wheels"
  # The image's platform: CPython 3.12 on x86-64 (manylinux tags as its pip accepts them).
  mapfile -t specs < <(printf '%s\n' "${specs[@]}" | sort -u)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
    -d "$DIR/wheels" "${specs[@]}"
  find "$DIR/wheels" -name '*.whl' -printf '%s %f\n' | sort -rn \
    | awk '{printf "%12d  %s\n", $1, $2; total += $1} END {printf "%12d  in all\n", total}'
}

# The bytes that travel with every call: tracked files and untracked ones git does not ignore,
# weighed as the disk holds them (whole blocks), to be safe: the device tool refused a call as
# over 64 MiB whose files came to 62 MiB by their sizes and 66.8 MiB by their blocks (2271 small
# files, 4 MiB of it in partly filled blocks), and took one of 55.8 MiB and 61 MiB.
tree_bytes() {
  git ls-files -z -co --exclude-standard | du -c -B1 --files0-from=- 2>/dev/null | tail -n 1 | cut -f1
}

split() {
  local room=${1:-}
  [ -d "$DIR/wheels" ] || { echo "stage.sh: no $DIR/wheels: run 'stage.sh fetch' first" >&2; exit 2; }
  local first=$room rest=$room whl=0
  if [ -z "$room" ]; then
    [ -d .whl ] && whl=$(du -s -B1 .whl | cut -f1)
    rest=$((LIMIT - $(tree_bytes) - SPARE))
    first=$((rest - whl))
  fi
  python3 - "$DIR" "$first" "$rest" <<'PY'
import hashlib, shutil, sys
from pathlib import Path

folder, first, rest = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
if min(first, rest) <= 0:
    sys.exit(f"stage.sh: no room left in a call (first {first}, later {rest} bytes)")
for old in folder.glob("call-*"):
    shutil.rmtree(old)
wheels = sorted((folder / "wheels").glob("*.whl"), key=lambda p: p.stat().st_size, reverse=True)
rows, call, free = [], 1, first
for wheel in wheels:
    data, digest, part = wheel.read_bytes(), hashlib.sha256(wheel.read_bytes()).hexdigest(), 0
    while data:
        if free == 0:
            call, free = call + 1, rest
        piece, data = data[:free], data[free:]
        name = f"{wheel.name}.part-{part:02d}"
        out = folder / f"call-{call}"
        out.mkdir(exist_ok=True)
        (out / name).write_bytes(piece)
        rows.append((wheel.name, digest, str(wheel.stat().st_size), name,
                     hashlib.sha256(piece).hexdigest(), str(len(piece)), str(call)))
        free -= len(piece)
        part += 1
table = "".join("\t".join(r) + "\n" for r in rows)
for n in range(1, call + 1):
    (folder / f"call-{n}" / "MANIFEST.tsv").write_text(table)
for n in range(1, call + 1):
    size = sum(int(r[5]) for r in rows if r[6] == str(n))
    carry = ('".whl", ' if n == 1 and Path(".whl").is_dir() else "") + f'".peers/call-{n}"'
    last = "bash scripts/gpu/stage.sh install && ..." if n == call else "bash scripts/gpu/stage.sh check"
    print(f"call {n}: {size} bytes of chunks; carry [{carry}]; run: {last}")
print(f"{len(wheels)} wheels, {sum(w.stat().st_size for w in wheels)} bytes, in {call} calls "
      f"(room {first} bytes on the first, {rest} on the others)")
PY
}

# check/install: the manifest of any call set there, every chunk looked for in every set.
assemble() {
  local mode=$1
  local manifest
  # The newest, should sets of an earlier split be left on the machine.
  manifest=$(find "$DIR" -path "$DIR/call-*/MANIFEST.tsv" -printf '%T@ %p\n' 2>/dev/null \
    | sort -rn | head -n 1 | cut -d' ' -f2- || true)
  [ -n "$manifest" ] || { echo "stage.sh: no $DIR/call-*/MANIFEST.tsv here: no call set has arrived" >&2; exit 1; }
  python3 - "$DIR" "$manifest" "$mode" "$SITE" <<'PY'
import hashlib, subprocess, sys
from pathlib import Path

folder, manifest, mode, site = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
rows = [line.split("\t") for line in manifest.read_text().splitlines() if line]
missing, bad, wheels = [], [], {}
for wheel, digest, size, chunk, chunk_digest, chunk_size, call in rows:
    found = next(iter(sorted(folder.glob(f"call-*/{chunk}"))), None)
    wheels.setdefault(wheel, (digest, []))[1].append(found)
    if found is None:
        missing.append(f"{chunk} (call {call})")
    elif hashlib.sha256(found.read_bytes()).hexdigest() != chunk_digest:
        bad.append(f"{found} (sha256 differs from the manifest's; carry call {call} again)")
have = len(rows) - len(missing)
print(f"stage.sh: {have} of {len(rows)} chunks here, {len(wheels)} wheels")
for line in missing:
    print(f"  missing: {line}")
for line in bad:
    print(f"  corrupt: {line}")
if mode == "check":
    sys.exit(0)
if missing or bad:
    sys.exit("stage.sh: not installed: chunks missing or corrupt (above)")
out = folder / "assembled"
out.mkdir(exist_ok=True)
paths = []
for wheel, (digest, parts) in wheels.items():
    data = b"".join(p.read_bytes() for p in parts)
    if hashlib.sha256(data).hexdigest() != digest:
        sys.exit(f"stage.sh: {wheel} put together does not match its sha256 {digest}")
    (out / wheel).write_bytes(data)
    paths.append(str(out / wheel))
    print(f"  {wheel}: sha256 ok ({len(data)} bytes)")
if mode == "assemble":
    sys.exit(0)
# One pip call for all: nvidia-cutlass-dsl and its libs share one folder, which a second
# `pip install --target --upgrade` would replace whole.
subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                "--no-compile", "--no-cache-dir", "--upgrade", "--target", site, *paths], check=True)
print(f"stage.sh: installed into {site}; put it on PYTHONPATH (scripts/gpu/env.sh does)")
PY
}

case "${1:-}" in
  fetch) shift; fetch "$@" ;;
  split) shift; split "$@" ;;
  check) assemble check ;;
  assemble) assemble assemble ;;
  install) assemble install ;;
  *) echo "usage: stage.sh fetch [PEER ...] | split [ROOM] | check | assemble | install" >&2; exit 2 ;;
esac
