"""``snap-bench init``: the files a repository needs to run snap-bench's instruments, or its own, as its own.

The shipped instruments a team takes (``--instruments``: all by default, none, or a list): one thin test module
per registered instrument under ``benchmarks/`` (the text each instrument gives, ``Instrument.benchmark_module``)
and the BFI-25 questionnaire and the prompt-perturbation task (YAML, collected as tests); optionally a
questionnaire skeleton of its own (``--questionnaire NAME``). Always: ``snap-bench.toml`` (the project root the
plugin finds wherever pytest is started: snap_bench.design.project), a commented ``config/models.yaml`` that
extends the packaged model list, ``.env.example``, a ``.gitignore`` and a GitHub Actions workflow that records
on a schedule and gates pull requests against committed baselines. The templates are the files of
``templates/`` beside this module. Everything else (profile.yaml, compass.yaml, prompts, data, thresholds.yaml)
stays in the package until the project puts a file of the same name under ``config/``.

In a repository with files of its own nothing is overwritten: a file that exists is kept as it is, except the
``.gitignore``, to which the lines it lacks are added (the team's stay as they are).
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from snap_bench.design.config import ConfigError
from snap_bench.design.project import PROJECT_FILE, PROJECT_FILE_TEXT
from snap_bench.instruments import registered
from snap_bench.scaffold.install import Install, key_variables, team_install

TEMPLATES = Path(__file__).resolve().with_name("templates")
# The shipped instruments written in YAML (this repository's benchmarks/*.yaml; a test keeps them one).
SHIPPED_FILES = {"bfi25": "bfi25.yaml", "perturbation": "perturbation.yaml"}
# Where each other template goes, relative to the project folder (the package's copies carry no leading dot).
PLACES = {
    "config/models.yaml": "models.yaml",
    ".env.example": "env.example",
    ".gitignore": "gitignore",
    ".github/workflows/snap-bench.yml": "snap-bench.yml",
}
GITIGNORE = ".gitignore"
# The workflow installs the snap-bench that wrote it, from where it was installed (snap_bench.scaffold.install),
# and passes the key variable of every provider the project's models.yaml names; the questionnaire skeleton
# carries its name.
WORKFLOW = ".github/workflows/snap-bench.yml"
MODELS = "config/models.yaml"
REQUIREMENT_MARK = "@REQUIREMENT@"
INSTALL_MARK = "@INSTALL@"
KEYS_MARK = "@KEYS@"
NAME_MARK = "@NAME@"


class InitError(ValueError):
    """A value of ``snap-bench init`` that cannot be used (the message names the option and the fix)."""


def shipped_instruments() -> list[str]:
    """The instruments a team may take: the plugin's (a test module each) and the shipped YAML files."""
    return [*registered(), *SHIPPED_FILES]


def chosen_instruments(value: str) -> list[str]:
    """``--instruments``: all, none, or a comma list of shipped instruments."""
    shipped = shipped_instruments()
    if value.strip() == "all":
        return shipped
    if value.strip() == "none":
        return []
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in shipped]
    if unknown or not names:
        raise InitError(
            f"--instruments={value}: unknown {', '.join(map(repr, unknown)) or 'empty list'}. "
            f"Fix: all, none, or a comma list of: {', '.join(shipped)}"
        )
    return [name for name in shipped if name in names]


@dataclass(frozen=True)
class Workflow:
    """What the workflow installs (snap_bench.scaffold.install) and the key variables it passes."""

    install: Install
    keys: tuple[str, ...]

    @classmethod
    def of(cls, folder: Path) -> Workflow:
        """For ``folder``: the snap-bench installed here, and the keys of its models.yaml (the one it has, else
        the one init writes)."""
        try:
            keys = key_variables(folder / "config", _template(PLACES[MODELS]))
        except ConfigError as error:
            raise InitError(f"{error} (the workflow passes the key of every provider it names)") from None
        return cls(team_install(folder), tuple(keys))

    def render(self, template: str) -> str:
        how = textwrap.wrap(f"SNAP_BENCH installs {self.install.how}.", 106)
        keys = [f"      {key}: ${{{{ secrets.{key} }}}}" for key in self.keys]
        return (
            template.replace(REQUIREMENT_MARK, self.install.requirement)
            .replace(f"  # {INSTALL_MARK}", "\n".join(f"  # {line}" for line in how))
            .replace(f"      {KEYS_MARK}", "\n".join(keys))
        )


def project_files(
    instruments: list[str] | None = None, questionnaire: str | None = None, workflow: Workflow | None = None
) -> dict[str, str]:
    """Relative path -> text of every file ``init`` writes, in the order it lists them; ``instruments`` the
    shipped ones taken (None: all), ``questionnaire`` the name of a skeleton of the team's own, ``workflow``
    what the CI workflow installs and passes (None: as for the current folder)."""
    taken = shipped_instruments() if instruments is None else instruments
    files = {
        f"benchmarks/test_{name}.py": kind.benchmark_module() for name, kind in registered().items() if name in taken
    }
    for name, template in SHIPPED_FILES.items():
        if name in taken:
            files[f"benchmarks/{template}"] = _template(template)
    if questionnaire is not None:
        if not questionnaire.isidentifier() or not questionnaire.isascii() or questionnaire in shipped_instruments():
            raise InitError(
                f"--questionnaire={questionnaire}: not a name of its own. Fix: letters, digits and underscores, "
                f"none of: {', '.join(shipped_instruments())} (e.g. --questionnaire=team)"
            )
        files[f"benchmarks/{questionnaire}.yaml"] = _template("questionnaire.yaml").replace(NAME_MARK, questionnaire)
    files[PROJECT_FILE] = PROJECT_FILE_TEXT
    files.update({place: _template(template) for place, template in PLACES.items()})
    files[WORKFLOW] = (workflow or Workflow.of(Path())).render(files[WORKFLOW])
    return files


@dataclass
class Written:
    """What ``init`` did: the files it wrote, the lines it added to the team's .gitignore, the files it kept."""

    written: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def write_project(folder: Path, files: dict[str, str], wheel: Install | None = None) -> Written:
    """Write every file of ``files`` that ``folder`` lacks; add to an existing .gitignore the lines it lacks;
    copy the wheel the workflow installs into the project when it lies outside (``wheel``)."""
    done = Written()
    if wheel is not None and wheel.wheel is not None and wheel.place is not None and not (folder / WORKFLOW).exists():
        target = folder / wheel.place
        if target.exists():
            done.kept.append(wheel.place)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(wheel.wheel, target)
            done.written.append(wheel.place)
    for relative, text in files.items():
        path = folder / relative
        if relative == GITIGNORE and path.is_file():
            done.added = _merge_ignore(path, text)
            if not done.added:
                done.kept.append(relative)
            continue
        if path.exists():
            done.kept.append(relative)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        done.written.append(relative)
    return done


def _merge_ignore(path: Path, template: str) -> list[str]:
    """The template's patterns the team's .gitignore lacks, appended under a comment; the lines added."""
    present = {line.strip() for line in path.read_text(encoding="utf-8").splitlines()}
    missing = [line for line in template.splitlines() if line.strip() and not line.startswith("#")]
    missing = [line for line in missing if line.strip() not in present]
    if missing:
        text = path.read_text(encoding="utf-8")
        separator = "" if not text or text.endswith("\n") else "\n"
        added = "\n".join(["# snap-bench: session outputs and keys (recordings and baselines are committed)", *missing])
        path.write_text(f"{text}{separator}{added}\n", encoding="utf-8")
    return missing


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")
