"""The installed riskgrid version, for reports and exported files."""

from importlib.metadata import PackageNotFoundError, version

__all__ = ["riskgrid_version"]


def riskgrid_version() -> str:
    """The installed riskgrid version ("unknown" when running from a checkout not installed)."""
    try:
        return version("riskgrid")
    except PackageNotFoundError:
        return "unknown"
