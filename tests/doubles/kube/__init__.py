"""A Kubernetes API server test double: serves a scenario's kubernetes/*.json and logs over real HTTP."""

from tests.doubles.kube.server import Fault, Faults, KubeDouble, Request
from tests.doubles.kube.store import LogBook, Store

__all__ = ["Fault", "Faults", "KubeDouble", "LogBook", "Request", "Store"]
