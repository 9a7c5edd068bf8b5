"""scripts/gpu/stage.sh without a GPU machine: wheels cut into call sets that each fit the room a
call leaves, put together again only when every chunk is there and matches its sha256, naming
the chunk (and the call that carries it) that is missing or corrupt, and installed into SITE."""

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STAGE = ROOT / "scripts" / "gpu" / "stage.sh"


def _stage(cwd: Path, *args: str, site: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # stage.sh's python3 is the one whose pip installs: this checkout's venv.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    if site is not None:
        env["SITE"] = str(site)
    return subprocess.run(
        ["bash", str(STAGE), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _wheel(folder: Path, name: str, payload: bytes) -> Path:
    """A real wheel of one module `name` whose file holds `payload` (incompressible, so the
    wheel is about as large as it)."""
    files = {
        f"{name}/__init__.py": b"DATA = " + repr(payload).encode() + b"\n",
        f"{name}-1.0.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode()
        ),
        f"{name}-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\n"
        b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{name}-1.0.dist-info/RECORD,,")
    files[f"{name}-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as z:
        for path, data in files.items():
            z.writestr(path, data)
    return wheel


@pytest.fixture
def staged(tmp_path: Path) -> Path:
    wheels = tmp_path / ".peers" / "wheels"
    wheels.mkdir(parents=True)
    _wheel(wheels, "bigpeer", os.urandom(150_000))
    _wheel(wheels, "smallpeer", os.urandom(2_000))
    return tmp_path


def _chunks(root: Path) -> dict[str, list[Path]]:
    return {d.name: sorted(d.glob("*.part-*")) for d in sorted(root.glob(".peers/call-*"))}


def test_split_fills_each_call_to_its_room_and_no_further(staged: Path) -> None:
    done = _stage(staged, "split", "60000")
    assert done.returncode == 0, done.stderr
    calls = _chunks(staged)
    sizes = {call: sum(p.stat().st_size for p in parts) for call, parts in calls.items()}
    total = sum(w.stat().st_size for w in (staged / ".peers" / "wheels").glob("*.whl"))
    assert sum(sizes.values()) == total
    assert all(size <= 60000 for size in sizes.values())
    # As few calls as the bytes need: every call but the last is full.
    assert len(calls) == -(-total // 60000)
    assert all(sizes[c] == 60000 for c in list(sizes)[:-1])
    assert f"in {len(calls)} calls" in done.stdout
    # Each set brings the manifest, so whichever arrives last can put the wheels together.
    manifests = {(staged / ".peers" / c / "MANIFEST.tsv").read_text() for c in calls}
    assert len(manifests) == 1


def test_install_puts_the_wheels_together_and_installs_them(staged: Path, tmp_path: Path) -> None:
    assert _stage(staged, "split", "60000").returncode == 0
    site = tmp_path / "site"
    done = _stage(staged, "install", site=site)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("sha256 ok") == 2
    assembled = staged / ".peers" / "assembled" / "bigpeer-1.0-py3-none-any.whl"
    assert assembled.read_bytes() == (staged / ".peers/wheels" / assembled.name).read_bytes()
    assert (site / "bigpeer" / "__init__.py").is_file()
    assert (site / "smallpeer" / "__init__.py").is_file()


def test_a_missing_chunk_is_named_with_its_call_and_nothing_is_installed(
    staged: Path, tmp_path: Path
) -> None:
    assert _stage(staged, "split", "60000").returncode == 0
    gone = _chunks(staged)["call-2"][0]
    gone.unlink()
    site = tmp_path / "site"
    check = _stage(staged, "check")
    assert check.returncode == 0 and f"missing: {gone.name} (call 2)" in check.stdout
    done = _stage(staged, "install", site=site)
    assert done.returncode == 1
    assert f"missing: {gone.name} (call 2)" in done.stdout
    assert not site.exists()


def test_a_corrupt_chunk_is_named(staged: Path, tmp_path: Path) -> None:
    assert _stage(staged, "split", "60000").returncode == 0
    chunk = _chunks(staged)["call-1"][0]
    data = bytearray(chunk.read_bytes())
    data[100] ^= 0xFF
    chunk.write_bytes(bytes(data))
    done = _stage(staged, "install", site=tmp_path / "site")
    assert done.returncode == 1
    assert f"corrupt: {chunk.relative_to(staged)}" in done.stdout


def test_no_call_set_here_says_so(tmp_path: Path) -> None:
    done = _stage(tmp_path, "install")
    assert done.returncode == 1 and "no call set has arrived" in done.stderr
