"""A Likert questionnaire: the machinery the psychometric profile and every questionnaire written in YAML share."""

from snap_bench.instruments.questionnaire.instrument import QuestionnaireInstrument, questionnaire_kind
from snap_bench.instruments.questionnaire.reader import KIND_KEY

__all__ = ["KIND_KEY", "QuestionnaireInstrument", "questionnaire_kind"]
