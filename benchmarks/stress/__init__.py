"""The stress suite: hostile peers, a soak with leak accounting and a cancel-versus-result race, on asyncio and
trio, over the in-memory transport, stdio and Streamable HTTP.

``python -m benchmarks.stress --short`` takes seconds (CI runs it through ``tests/stress``);
``python -m benchmarks.stress --soak-seconds 300`` is the long form for a developer. Either prints the counts and
exits non-zero on any crash, hang, untyped error, lost answer, leak or duplicate execution.
"""
