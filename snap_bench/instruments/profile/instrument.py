"""The psychometric-profile instrument (SNAP): moral and Big Five Likert items, a questionnaire written in
the packaged profile.yaml (a project's config/profile.yaml replaces it).

Design: item x paraphrase x system prompt x temperature x context x run, where an item lists the contexts
that apply to it (the moral dilemma context is for moral items only).
"""

from __future__ import annotations

from snap_bench.design.config import ConfigFiles
from snap_bench.instruments.profile.metrics import METRICS
from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument, packaged_design
from snap_bench.instruments.questionnaire.reader import LIKERT

PROFILE_FILE = "profile.yaml"
# Where the profile's items were once read from (a project's own copy is refused, naming where they go now).
RETIRED_BANKS = ("items/moral.yaml", "items/personality.yaml")


class ProfileInstrument(QuestionnaireInstrument):
    name = "profile"
    title = "psychometric profile"
    benchmark_doc = (
        "The psychometric profile: one test per model and condition (item x paraphrase x system prompt x\n"
        "temperature x context x run).\n"
        "An answer without a score (refused, invalid, API error) is recorded and reported as `unscored`, not as a\n"
        "failure."
    )
    benchmark_test = "test_likert"
    anchor = "snap"  # the report's ids as they were before the profile shared its section with questionnaires
    metrics = METRICS

    def __init__(self, config: ConfigFiles) -> None:
        design = packaged_design(config, PROFILE_FILE, self.name, LIKERT, RETIRED_BANKS)
        super().__init__(config, design, from_file=False)
