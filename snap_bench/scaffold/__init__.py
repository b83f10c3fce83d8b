"""``snap-bench init``: the files a repository needs to run the packaged instruments as its own.

One thin test module per registered instrument under ``benchmarks/`` (the text each instrument gives,
``Instrument.benchmark_module``), the BFI-25 questionnaire and the prompt-perturbation task (YAML, collected
as tests), a commented
``config/models.yaml`` that extends the packaged model list,
``.env.example``, a ``.gitignore`` and a GitHub Actions workflow that records on a schedule and gates pull
requests against committed baselines. The templates are the files of ``templates/`` beside this module.
Everything else (items, prompts, data, experiment.yaml, thresholds.yaml) stays in the package until the
project puts a file of the same name under ``config/``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from snap_bench.instruments import registered

TEMPLATES = Path(__file__).resolve().with_name("templates")
# Where each template goes, relative to the project folder (the package's copies carry no leading dot).
PLACES = {
    # The shipped instruments written in YAML (this repository's benchmarks/*.yaml; a test keeps them one).
    "benchmarks/bfi25.yaml": "bfi25.yaml",
    "benchmarks/perturbation.yaml": "perturbation.yaml",
    "config/models.yaml": "models.yaml",
    ".env.example": "env.example",
    ".gitignore": "gitignore",
    ".github/workflows/snap-bench.yml": "snap-bench.yml",
}
# The workflow installs exactly the snap-bench that wrote it.
REQUIREMENT_MARK = "@REQUIREMENT@"


def project_files() -> dict[str, str]:
    """Relative path -> text of every file ``init`` writes, in the order it lists them."""
    files = {f"benchmarks/test_{name}.py": kind.benchmark_module() for name, kind in registered().items()}
    for place, template in PLACES.items():
        files[place] = (TEMPLATES / template).read_text(encoding="utf-8").replace(REQUIREMENT_MARK, _requirement())
    return files


def existing(folder: Path) -> list[str]:
    """The files ``init`` would write that ``folder`` already has (anything at such a path counts)."""
    return [relative for relative in project_files() if (folder / relative).exists()]


def write_project(folder: Path) -> list[str]:
    """Write every file of :func:`project_files` under ``folder``; the caller has checked :func:`existing`."""
    written = []
    for relative, text in project_files().items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(relative)
    return written


def _requirement() -> str:
    try:
        return f"snap-bench=={version('snap-bench')}"
    except PackageNotFoundError:  # a checkout on sys.path, not installed: no version to pin
        return "snap-bench"
