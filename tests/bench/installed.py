"""ctxkit installed the way a user installs it, for the start-up benchmarks.

A venv under tests/bench/.work/venv gets ``pip install`` of this worktree
(re-installed on every run, so it holds the current ctxkit.py), and the
benchmarks start its ``ctxkit`` console script: the module is imported from
the .pyc pip compiled, and the baseline ``python -c "import sqlite3"`` runs
on the same venv's interpreter. A venv also keeps out any ``.pth`` file the
base interpreter's site-packages may run at start-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
VENV = HERE / ".work" / "venv"
UV_VENV = HERE / ".work" / "uv-venv"


def install() -> tuple[Path, Path]:
    """(python, ctxkit console script) of the venv, with this worktree installed."""
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    # setuptools builds in the worktree; a build/ left from an earlier install
    # can be packed instead of the current ctxkit.py, so start clean.
    for leftover in ("build", "ctxkit.egg-info"):
        shutil.rmtree(ROOT / leftover, ignore_errors=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall",
                    "--no-deps", str(ROOT)], check=True, stdout=subprocess.DEVNULL)
    # The dependencies (tree-sitter, tiktoken) only when missing: reinstalling
    # them every run would be slow, and the start-up paths must not import them.
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(ROOT)], check=True,
                   stdout=subprocess.DEVNULL)
    return python, VENV / "bin" / "ctxkit"


def uv_command() -> str | None:
    """The ``uv`` executable: on PATH, or beside this interpreter (a venv's bin/)."""
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.exists() else None)


def install_uv(python: Path) -> tuple[Path, Path] | None:
    """(python, ctxkit console script) of a second venv where uv installed this
    worktree as ``uv tool install --compile-bytecode`` does (uv's own script
    template, bytecode compiled at install), on ``python``'s interpreter; None
    without uv. The wheel is built by pip, which knows the package index here."""
    uv = uv_command()
    if uv is None:
        return None
    wheels = HERE / ".work" / "uv-wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    for leftover in ("build", "ctxkit.egg-info"):
        shutil.rmtree(ROOT / leftover, ignore_errors=True)
    subprocess.run([str(python), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels),
                    str(ROOT)], check=True, stdout=subprocess.DEVNULL)
    for leftover in ("build", "ctxkit.egg-info"):
        shutil.rmtree(ROOT / leftover, ignore_errors=True)
    if not (UV_VENV / "bin" / "python").exists():
        subprocess.run([uv, "venv", "-q", "--python", str(python), str(UV_VENV)], check=True)
    env = {**os.environ, "VIRTUAL_ENV": str(UV_VENV)}
    subprocess.run([uv, "pip", "install", "-q", "--reinstall", "--no-deps",
                    "--compile-bytecode", *map(str, wheels.glob("*.whl"))], check=True, env=env)
    return UV_VENV / "bin" / "python", UV_VENV / "bin" / "ctxkit"


def clean_env() -> dict[str, str]:
    """The caller's environment without CTXKIT_* and PYTHONDONTWRITEBYTECODE."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CTXKIT_") and k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return env
