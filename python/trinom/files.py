"""Output files: checked before any work, written whole or not at all, never over an input.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "prices.out"
>>> with replacing([out]) as (temporary,):
...     _ = temporary.write_text("[1.0]\\n")
>>> out.read_text()
'[1.0]\\n'
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError

_UMASK = os.umask(0)
os.umask(_UMASK)


def check_output(path: str | Path, inputs: Sequence[str | Path | None] = (), what: str = "--out") -> Path:
    """``path`` if it can be written: not one of ``inputs``, its folder existing and writable."""
    path = Path(path)
    for given in inputs:
        if given is not None and path.resolve() == Path(given).resolve():
            raise InputError([(None, what, f"{what} {path} is an input of this command: refusing to overwrite it")])
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError([(None, what, f"{what} {path}: the folder {folder} does not exist")])
    if not os.access(folder, os.W_OK):
        raise InputError([(None, what, f"{what} {path}: the folder {folder} is not writable")])
    if path.is_dir():
        raise InputError([(None, what, f"{what} {path} is a folder, not a file")])
    return path


@contextmanager
def replacing(paths: Sequence[str | Path]) -> Iterator[list[Path]]:
    """Temporary files beside ``paths`` to write; when the block ends without an error they replace
    ``paths`` (each by an atomic rename), else they are removed and ``paths`` stay as they were."""
    temporaries: list[Path] = []
    try:
        for path in map(Path, paths):
            handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent or ".")
            os.close(handle)
            os.chmod(name, 0o666 & ~_UMASK)  # as an ordinary new file would be (mkstemp makes it private)
            temporaries.append(Path(name))
        yield temporaries
        for temporary, path in zip(temporaries, paths, strict=True):
            os.replace(temporary, path)
    finally:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
