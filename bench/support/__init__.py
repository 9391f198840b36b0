"""What the benches share and none of them runs on its own: the stores they measure on, where the
data sets are, the arithmetic that turns timings into figures and verdicts, the in-process peers.

Every module here is pure or plain I/O with no clock of its own to read, so the parts that decide
"pass" are tested under ``tests/`` like any other code.
"""
