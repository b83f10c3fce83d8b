"""An answer -> a parsed score -> an Observation, and the files observations are exported to."""
