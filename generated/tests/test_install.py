"""`pip install ./generated` in a fresh venv that sees torch and triton (and what they need),
nothing else: the library installs, imports, runs, and pulls in no pipeline module."""

import importlib.metadata as md
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.requirements import Requirement

GENERATED = Path(__file__).resolve().parents[1]
PIPELINE = ("kernelgen", "openai", "pydantic", "typer", "rich")


def _closure(names: list[str]) -> list[md.Distribution]:
    """The distributions `names` need at run time (their requirements, without extras)."""
    seen: dict[str, md.Distribution] = {}
    todo = list(names)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue  # an optional dependency this environment does not have
        seen[name] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen.values())


def _link(dists: list[md.Distribution], folder: Path) -> None:
    """Symlink each distribution's top-level files and folders into `folder`."""
    folder.mkdir()
    for dist in dists:
        for entry in {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            target = Path(dist.locate_file(entry))
            if target.exists() and not (folder / entry).exists():
                (folder / entry).symlink_to(target)


def _run(cmd: list[str], cwd: Path, **env: str) -> str:
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "TRITON_INTERPRET")
    clean = {k: v for k, v in os.environ.items() if k not in drop}
    done = subprocess.run(
        cmd, cwd=cwd, env={**clean, **env}, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stdout}\n{done.stderr}"
    return done.stdout


CHECK = """
import json, sys
import kernelgen_ops
leaked = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
try:
    import pydantic  # noqa: F401
    isolated = False
except ImportError:
    isolated = True
print(json.dumps({"file": kernelgen_ops.__file__, "leaked": leaked, "isolated": isolated,
                  "ops": sorted(kernelgen_ops.available()), "all": kernelgen_ops.__all__}))
"""

RUN = """
import torch, kernelgen_ops
x = torch.randn(3, 40)
assert torch.allclose(kernelgen_ops.softmax(x), torch.softmax(x, -1), atol=1e-6)
with kernelgen_ops.use():
    assert torch.allclose(torch.softmax(x, -1), kernelgen_ops.softmax(x))
print("ok")
"""


def test_fresh_venv_installs_and_imports_the_library(tmp_path: Path) -> None:
    shim = tmp_path / "torch-and-triton"
    _link(_closure(["torch", "triton"]), shim)
    # numpy is the interpreter's dependency, on the path for the kernel run only; setuptools
    # builds the library (torch needs it on Python >= 3.12 only), on the path for pip only.
    _link(_closure(["numpy"]), tmp_path / "numpy-only")
    _link([md.distribution("setuptools")], tmp_path / "build-only")
    venv = tmp_path / "venv"
    # No pip inside: Python 3.11's ensurepip would also bring an old setuptools of its own.
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path)
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_path('purelib'))"
    purelib = Path(_run([str(python), "-c", where], tmp_path).strip())
    (purelib / "torch-and-triton.pth").write_text(f"{shim}\n")

    source = tmp_path / "generated"  # a copy: pip builds in the source tree
    shutil.copytree(
        GENERATED, source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    )
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            "-q",
            str(source),
        ],
        tmp_path,
        PYTHONPATH=str(tmp_path / "build-only"),
    )
    out = json.loads(_run([str(python), "-c", CHECK, *PIPELINE], tmp_path).splitlines()[-1])
    assert out["isolated"], "the fresh venv can import pydantic: the test is not isolated"
    assert out["leaked"] == []
    assert Path(out["file"]).is_relative_to(purelib)
    # Every operator the manifest promoted, and nothing else.
    promoted = sorted(
        json.loads((GENERATED / "kernelgen_ops" / "MANIFEST.json").read_text())["ops"]
    )
    assert out["ops"] == sorted(out["all"]) == promoted
    installed = Path(out["file"]).parent
    for op in out["ops"]:
        assert (installed / "configs" / f"{op}.json").is_file()
    assert (installed / "MANIFEST.json").is_file()

    ran = _run(
        [str(python), "-c", RUN],
        tmp_path,
        TRITON_INTERPRET="1",
        PYTHONPATH=str(tmp_path / "numpy-only"),
    )
    assert ran.strip().endswith("ok")
