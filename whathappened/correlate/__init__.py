"""Cause rules, cause chains, and root versus collateral: why each pod died and where the failure began."""

from whathappened.correlate.causes import CAUSES, Cause
from whathappened.correlate.engine import Correlation, correlate, correlate_attempts

__all__ = ["CAUSES", "Cause", "Correlation", "correlate", "correlate_attempts"]
