"""whathappened: why did my training run on Kubernetes die? One timeline, the failing rank, what to do next."""

__version__ = "0.1.0"
