"""Where :class:`~collectives.errors.DistError` used to live: it is defined in
:mod:`collectives.errors` with every other error of the package, and still importable from
here (``collectives.dist.errors.DistError``) and from :mod:`collectives.dist`."""

from ..errors import DistError

__all__ = ["DistError"]
