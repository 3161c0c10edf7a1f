"""The one exception tree. The CLI maps each class to the contract's exit code and prints one line."""

from __future__ import annotations

import re


class WhathappenedError(Exception):
    """Anything we report to the user as one line. ``exit_code`` follows CONTRACT.md section 1."""

    exit_code = 1


class UsageError(WhathappenedError):
    exit_code = 2


class ConfigError(WhathappenedError):
    exit_code = 2


class ExperimentNotFound(WhathappenedError):
    exit_code = 4

    def __init__(self, experiment: str, suggestions: tuple[str, ...] = (), namespaces: tuple[str, ...] = ()) -> None:
        self.experiment = experiment
        self.suggestions = suggestions
        self.namespaces = namespaces  # where it was found instead: the namespace given was wrong
        if namespaces:
            hint = f"; found in namespace {', '.join(namespaces)}; use -n {namespaces[0]}"
        else:
            hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"experiment {experiment!r} was not found in any source{hint}")


class SourcesFailed(WhathappenedError):
    """No configured source could be read, so nothing could be said or recorded (exit 3, the sources named)."""

    exit_code = 3


class SourceError(WhathappenedError):
    """A source failed. Carries the contract status; the message must already be scrubbed of secrets."""

    status = "failed"

    def __init__(self, message: str, *, status: str | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class SourceUnreachable(SourceError):
    status = "unreachable"


class SourceForbidden(SourceError):
    status = "forbidden"


class SourceTimeout(SourceError):
    status = "timeout"


class SnapshotError(UsageError):
    """A snapshot folder that cannot be read at all (a single bad file is reported, not raised)."""


# --- keeping secrets out of every message -------------------------------------------------------------------

_KNOWN_SECRETS: set[str] = set()
_PATTERNS = (
    (re.compile(r"(?i)(://)[^/\s:@]+:[^/\s@]+@"), r"\1***:***@"),  # user:password@ in URLs
    (re.compile(r"(?i)\b(bearer|basic|apikey|api-key|token)(\s+|=|:\s*)[A-Za-z0-9._~+/=-]{6,}"), r"\1\2***"),
    (
        re.compile(
            r"(?i)\b(password|passwd|secret|api_key|access_token|client-key-data|token)(\"?\s*[=:]\s*\"?)[^\s\"&,;]+"
        ),
        r"\1\2***",
    ),
)


def remember_secret(value: str) -> None:
    """Register a secret value so that ``scrub`` removes it wherever it appears."""
    if value and len(value) >= 4:
        _KNOWN_SECRETS.add(value)


def scrub(text: str) -> str:
    """The text with every known secret and every credential-shaped token masked."""
    for secret in sorted(_KNOWN_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "***")
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
