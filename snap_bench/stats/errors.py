"""The exception raised when a statistic is mathematically undefined on the data it was given."""

from __future__ import annotations

__all__ = ["UndefinedStatistic"]


class UndefinedStatistic(ValueError):
    """A statistic has no value on this data (as opposed to the data being malformed).

    Raised instead of returning NaN, so that a caller can report ``"undefined: zero variance"``
    rather than a number that silently poisons every aggregate it enters. It subclasses
    :class:`ValueError` so that code which only guards against bad input still stops.

    Parameters
    ----------
    statistic : str
        Name of the statistic, e.g. ``"ICC(2,1)"``.
    reason : str
        Why it is undefined, short and lower case, e.g. ``"zero variance"``.

    Attributes
    ----------
    statistic : str
    reason : str

    Examples
    --------
    >>> try:
    ...     raise UndefinedStatistic("Cronbach's alpha", "zero variance of the total score")
    ... except UndefinedStatistic as error:
    ...     print(f"undefined: {error.reason}")
    undefined: zero variance of the total score
    """

    def __init__(self, statistic: str, reason: str) -> None:
        super().__init__(f"{statistic} is undefined: {reason}")
        self.statistic = statistic
        self.reason = reason

    def __reduce__(self) -> tuple[type[UndefinedStatistic], tuple[str, str]]:
        # Keep the two-argument constructor picklable (xdist and multiprocessing pickle exceptions).
        return (type(self), (self.statistic, self.reason))
