"""A Kubernetes API server test double: serves a scenario's kubernetes/*.json and logs over real HTTP."""

from tests.kube_double.server import Fault, Faults, KubeDouble, Request
from tests.kube_double.store import LogBook, Store

__all__ = ["Fault", "Faults", "KubeDouble", "LogBook", "Request", "Store"]
