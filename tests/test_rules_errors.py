"""The referee's errors cross process boundaries intact (the benchmarks judge shots in worker processes)."""

from __future__ import annotations

import pickle

from rules.errors import LogError


def test_a_log_error_survives_pickling_with_its_fields_and_message():
    err = LogError("log line 1", "end.cue", "[-3.9, 11.6] is off the pool_9ft table")
    back = pickle.loads(pickle.dumps(err))
    assert isinstance(back, LogError)
    assert (back.record, back.field, back.problem) == (err.record, err.field, err.problem)
    assert str(back) == str(err)
