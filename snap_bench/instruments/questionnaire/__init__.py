"""A Likert questionnaire: the machinery every questionnaire written in YAML shares, the packaged profile and
compass among them."""

from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument
from snap_bench.instruments.questionnaire.reader import KIND_KEY

__all__ = ["KIND_KEY", "QuestionnaireInstrument"]
