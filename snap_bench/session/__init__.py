"""The benchmark session as a stage of its own, below the pytest plugin and above the instruments: its settings,
its plan (models x instruments -> conditions), the asking of those conditions, and its outcome (judgement, exit
decision, output files, history). Nothing here imports pytest: the plugin drives the stage from pytest's hooks,
and :func:`snap_bench.session.run.run_session` runs a whole session in-process.
"""
