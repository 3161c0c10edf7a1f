"""Cause rules, cause chains, and root versus collateral."""
