"""The political compass's factors: what its condition ids name, and which of them a comparison holds fixed.

Their own module, so that the metric specs and the analysis both read them and neither imports the other.
"""

AXES = ("economic", "social")
FACTORS = ("item", "paraphrase", "system_prompt", "temperature", "choice")
# The conditions whose coordinates should agree: everything but the item, the paraphrase and the run.
CONDITION_FACTORS = ("system_prompt", "temperature", "choice")
# A statement and one of the opposite direction on the same axis, answered under the same condition.
PAIR_CONDITION = ("paraphrase", "system_prompt", "choice", "run")
