"""The runtime dependencies are ranges (no exact pin), constraints.txt pins a version inside each, and
constraints-lowest.txt pins each at its range's lower bound (what `make test-lowest` runs the suite on)."""

from __future__ import annotations

import re
import tomllib

from tests.conftest import REPO

REQUIREMENT = re.compile(r"^([A-Za-z0-9_.-]+)>=([0-9][0-9.]*),<([0-9][0-9.]*)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def ranges() -> dict[str, tuple[str, str]]:
    document = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found = {}
    for requirement in document["project"]["dependencies"]:
        match = REQUIREMENT.match(requirement.replace(" ", ""))
        assert match, f"{requirement!r} is not a range NAME>=LOW,<HIGH"
        found[canonical(match[1])] = (match[2], match[3])
    return found


def pins(file: str) -> dict[str, str]:
    lines = (REPO / file).read_text(encoding="utf-8").splitlines()
    pairs = [line.split("==") for line in lines if line.strip() and not line.startswith("#")]
    return {canonical(name): version for name, version in pairs}


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_every_runtime_dependency_is_a_range_that_holds_its_constraint() -> None:
    pinned = pins("constraints.txt")
    for name, (low, high) in ranges().items():
        assert version(low) <= version(pinned[name]) < version(high), name


def test_the_lowest_constraints_are_the_ranges_lower_bounds() -> None:
    assert pins("constraints-lowest.txt") == {name: low for name, (low, _) in ranges().items()}
