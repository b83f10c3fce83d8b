"""What the workflow ``snap-bench init`` writes installs: the snap-bench this repository installed, from where it
was installed, and the key variables of the providers the project's models.yaml names.

pip records where a distribution came from (``direct_url.json``, PEP 610) unless it came from a package index.
From an index the workflow pins the version; from a git URL, that commit; from a remote archive, that archive;
from a wheel on this machine, the wheel committed with the project (a copy under ``wheels/`` when it lies
outside it). A folder (a checkout, installed editable or not) is nothing CI can reach: the workflow installs the
wheel built from it under ``wheels/``, and init says how to build and commit it (until then the install step stops
saying so).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from importlib.metadata import Distribution, distributions
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from snap_bench.design.config import MODELS_FILE, ConfigFiles
from snap_bench.design.models import load_models

DISTRIBUTION = "snap-bench"
# Where init puts a wheel installed from outside the project, for the workflow to install it from.
WHEELS = "wheels"


@dataclass(frozen=True)
class Install:
    """What the workflow's ``SNAP_BENCH`` holds ("" where CI cannot reach what was installed), how init says it
    was chosen, and a wheel of this machine to copy into the project (its path there: ``place``)."""

    requirement: str
    how: str
    wheel: Path | None = None
    place: str | None = None


def team_install(project: Path) -> Install:
    """The snap-bench installed here, as the workflow of ``project`` can install it."""
    found = _distribution()
    if found is None:
        return _unreachable("not installed (a checkout on sys.path)", "CHECKOUT", "VERSION")
    raw = found.read_text("direct_url.json")
    return install_from(found.version, json.loads(raw) if raw else None, project)


def install_from(version: str, direct_url: dict[str, Any] | None, project: Path) -> Install:
    """The workflow's install of ``version`` recorded by pip as ``direct_url`` (None: from a package index)."""
    if direct_url is None:
        requirement = f"{DISTRIBUTION}=={version}"
        return Install(
            requirement,
            f"{requirement} from the package index, as it was installed here (a private index: give pip its "
            "address in the workflow, e.g. PIP_INDEX_URL from a repository secret)",
        )
    url = str(direct_url.get("url", ""))
    fragment = f"#subdirectory={direct_url['subdirectory']}" if direct_url.get("subdirectory") else ""
    local = urlparse(url).scheme == "file"
    vcs = direct_url.get("vcs_info")
    if isinstance(vcs, dict) and not local:
        requirement = f"{DISTRIBUTION} @ {vcs.get('vcs', 'git')}+{url}@{vcs.get('commit_id', '')}{fragment}"
        return Install(requirement, f"{requirement}: the commit it was installed from here")
    if "archive_info" in direct_url and not local:
        return Install(f"{DISTRIBUTION} @ {url}", f"the archive it was installed from here ({url})")
    path = Path(url2pathname(unquote(urlparse(url).path))) if local else Path(url)
    if "archive_info" in direct_url and path.is_file():
        try:
            place = path.resolve().relative_to(project.resolve()).as_posix()
            wheel = None
        except ValueError:
            place, wheel = f"{WHEELS}/{path.name}", path
        return Install(
            f"./{place}",
            f"./{place}, the file it was installed from here: commit it (git add -f {place} if it is ignored)",
            wheel,
            place if wheel is not None else None,
        )
    return _unreachable(f"installed from the folder {path}, which CI cannot reach", str(path), version)


def _unreachable(why: str, source: str, version: str) -> Install:
    """A folder CI cannot reach: the workflow installs the wheel built from it into ``wheels/``, once committed."""
    place = f"{WHEELS}/snap_bench-{version}-py3-none-any.whl"
    return Install(
        f"./{place}",
        f"./{place}, which is not there yet: snap-bench was {why}. Build it there from the repository's root "
        f"and commit it (pip wheel --no-deps -w {WHEELS} {source}), or set SNAP_BENCH to a git URL at a pushed commit "
        f"({DISTRIBUTION} @ git+https://HOST/OWNER/REPO@COMMIT); until then the install step fails saying so",
    )


def _distribution() -> Distribution | None:
    """The installed distribution: the one pip recorded (a checkout's own egg-info on sys.path, e.g. when
    started inside it, records nothing and comes second)."""
    found = list(distributions(name=DISTRIBUTION))
    return next((d for d in found if d.read_text("direct_url.json")), found[0] if found else None)


def key_variables(config: Path, models_text: str) -> list[str]:
    """The key variables the entries of a project's models.yaml name, over the packaged list: those the workflow's
    recording job takes from repository secrets. ``config``: the project's config folder, read when it holds a
    models.yaml (an error names that file); else ``models_text``, the one init writes."""
    if (config / MODELS_FILE).is_file():
        registry = load_models(ConfigFiles(config))
    else:
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / MODELS_FILE).write_text(models_text, encoding="utf-8")
            registry = load_models(ConfigFiles(Path(folder)))
    return sorted({m.api_key_env for m in registry.models.values() if m.api_key_env and not m.retired})
