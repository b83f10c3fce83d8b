"""The config files the profile and the compass were once read from, refused by name.

The profile and the compass were configured from a section of ``experiment.yaml`` and item banks under
``items/`` that spelled an item's keying ``reverse_scored`` and the compass's construct ``axis``. They are now
questionnaire files like any other (``profile.yaml``, ``compass.yaml``). A project that still has its own
copy of an old file would otherwise lose its changes without a word: the run stops and says where each old
key now goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from snap_bench.design.config import ConfigError, ConfigFiles, load_yaml

RETIRED_EXPERIMENT = "experiment.yaml"
# Where each old key of an experiment.yaml section went in the questionnaire file.
NEW_SPELLINGS = {
    "item_banks": "items (each item with its `bank`)",
    "likert_points": "scale: {points, labels}",
    "answer_instruction": "instruction",
    "system_prompts": "system_prompts (each file as {file: PATH})",
    "contexts": "contexts (each file as {file: PATH})",
    "choices": "choices",
}
# An item's old keys and their new names.
ITEM_SPELLINGS = {"reverse_scored": "reverse", "axis": "construct"}


def refuse_retired_files(config: ConfigFiles, name: str, banks: Sequence[str]) -> None:
    """A ConfigError naming the project's old file, its key and the new spelling, where the project has one for
    the packaged questionnaire ``name`` (its experiment.yaml section, or one of the item ``banks`` it was read
    from); nothing otherwise."""
    new_file = f"{name}.yaml"
    packaged = config.packaged / new_file
    experiment = config.own(RETIRED_EXPERIMENT)
    sections = load_yaml(experiment) if experiment is not None else None
    if experiment is not None and sections is not None and sections.has(name):
        keys = list(sections.get(name).mapping())
        moves = "; ".join(f"{key} -> {NEW_SPELLINGS.get(key, key)}" for key in keys)
        raise ConfigError(
            experiment,
            name,
            f"experiment.yaml is retired: the {name} is defined by {new_file}, a questionnaire file",
            f"copy {packaged} to config/{new_file} and move this section into it ({moves}), then delete the section",
        )
    for bank in banks:
        own = config.own(bank)
        if own is None:
            continue
        text = own.read_text(encoding="utf-8")
        old_keys = [key for key in ITEM_SPELLINGS if f"{key}:" in text]
        key = f"items[].{old_keys[0]}" if old_keys else "items"
        renames = ", ".join(f"{old} -> {ITEM_SPELLINGS[old]}" for old in old_keys)
        raise ConfigError(
            own,
            key,
            f"item banks are retired: the {name}'s items are in {new_file}",
            f"copy {packaged} to config/{new_file} and move these items into its `items`"
            + (f", renaming {renames}" if renames else "")
            + f", then delete {bank}",
        )
