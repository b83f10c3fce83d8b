"""The pytest plugin: the only layer that imports pytest (hooks, the session object, options)."""
