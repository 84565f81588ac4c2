"""The one error type a bad match log raises: it names the record and the field, in one line."""

from __future__ import annotations


class LogError(ValueError):
    """A record of a match log (a shot or a control) that cannot be judged."""

    def __init__(self, record: str, field: str | None, problem: str) -> None:
        self.record = record
        self.field = field
        self.problem = problem
        where = f"{record}, field {field!r}" if field else record
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):
        # Rebuilt from its three fields, not from its message (what pickle passes a ValueError by default): a
        # bench worker's LogError otherwise killed the pool's result thread and the run hung.
        return (type(self), (self.record, self.field, self.problem))
