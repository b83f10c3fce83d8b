"""The design: config files and the shipped defaults -> models, conditions and shards."""
