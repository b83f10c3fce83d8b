"""Where a local model's weights come from: the packages that carry its GGUF file and the digest it must have."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LocalWeights:
    """Where a model's GGUF file comes from and the digest it must have.

    Exactly one of the two shapes applies: ``module`` + ``file`` for weights shipped whole inside one
    package, or ``part_modules`` + ``joined_name`` for weights split across packages.
    """

    requirement: str
    sha256: str
    module: str | None = None
    file: str | None = None
    part_modules: tuple[str, ...] = ()
    joined_name: str | None = None

    def __post_init__(self) -> None:
        single = self.module is not None or self.file is not None
        split = bool(self.part_modules) or self.joined_name is not None
        if single == split:
            raise ValueError(
                "LocalWeights needs either module + file (one weights file) or part_modules + joined_name "
                f"(split weights), not {'both' if single else 'neither'}: {self!r}"
            )
        if single and (self.module is None or self.file is None):
            raise ValueError(f"LocalWeights with a single file needs both module and file: {self!r}")
        if split and (not self.part_modules or self.joined_name is None):
            raise ValueError(f"LocalWeights with parts needs both part_modules and joined_name: {self!r}")
        if self.joined_name is not None and Path(self.joined_name).name != self.joined_name:
            raise ValueError(f"joined_name must be a bare file name, got {self.joined_name!r}")
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"sha256 must be 64 lower-case hex digits, got {self.sha256!r}")
