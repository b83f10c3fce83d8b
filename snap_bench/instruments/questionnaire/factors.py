"""The psychometric profile's factors: what its condition ids name, and which of them a comparison holds fixed.

Their own module, so that the metric specs and the analysis both read them and neither imports the other.
"""

# The factors of the profile design, in the order its condition ids name them.
FACTORS = ("item", "paraphrase", "system_prompt", "temperature", "context")
# What the paraphrases of an item are compared within: the same item asked under the same condition.
PARAPHRASE_ROWS = ("item", "system_prompt", "temperature", "context", "run")
# An occasion of Cronbach's alpha: everything but the item (the items of a bank are its columns).
OCCASION = ("paraphrase", "system_prompt", "temperature", "context", "run")
# A construct's statement and its reverse-keyed partner are compared under the same condition.
PAIR_CONDITION = ("paraphrase", "system_prompt", "context", "run")
