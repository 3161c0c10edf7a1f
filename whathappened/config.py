"""Settings: a TOML file, overridden by environment variables, overridden by command-line flags.

Every secret is held as a ``Secret`` so that no repr, log line or error message can print it by accident.
The file looks like::

    namespace = "research"
    since = "6h"
    label_keys = ["experiment", "training.kubeflow.org/job-name"]
    deadline = "20s"

    [kubernetes]
    kubeconfig = "~/.kube/config"
    context = "prod"
    log_lines = 50

    [prometheus]
    url = "https://prometheus.example.internal"
    bearer_token_file = "/var/run/secrets/prom-token"
    headers = { "X-Scope-OrgID" = "ml-team" }

    [elasticsearch]
    url = "https://logs.example.internal:9200"
    api_key = "..."              # or username/password, bearer_token, cloud_id
    log_index = "logs-*,filebeat-*"
    event_index = "kube-events-*"
    preset = "auto"              # auto (each index by its fields) | ecs | fluent-bit | vector | otel | ss4o
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from whathappened.errors import ConfigError, remember_secret
from whathappened.model import EMPTY
from whathappened.scope import DEFAULT_LABEL_KEYS


class Secret:
    """A string that never shows itself: ``str()``/``repr()`` give a mask, ``reveal()`` gives the value."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value
        remember_secret(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("secret", self._value))

    def __bool__(self) -> bool:
        return bool(self._value)


@dataclass(frozen=True)
class KubernetesSettings:
    enabled: bool = True
    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool | None = None  # None: use in-cluster config when no kubeconfig is found
    log_lines: int = 50
    log_containers: int = 32  # failed containers whose last lines are read, earliest-ended first
    page_size: int = 500


@dataclass(frozen=True)
class PrometheusSettings:
    url: str | None = None
    bearer_token: Secret | None = None
    bearer_token_file: str | None = None
    username: str | None = None
    password: Secret | None = None
    ca_file: str | None = None
    headers: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    max_concurrency: int = 4


@dataclass(frozen=True)
class ElasticsearchSettings:
    url: str | None = None
    api_key: Secret | None = None
    username: str | None = None
    password: Secret | None = None
    bearer_token: Secret | None = None
    cloud_id: str | None = None
    ca_file: str | None = None
    log_index: str = "logs-*,filebeat-*"
    event_index: str = "kube-events-*"
    preset: str = "auto"
    max_docs_per_pod: int = 2000


@dataclass(frozen=True)
class Settings:
    namespace: str | None = None
    all_namespaces: bool = False
    since: str = "24h"
    start: str | None = None
    end: str | None = None
    label_keys: tuple[str, ...] = DEFAULT_LABEL_KEYS
    deadline_s: float = 20.0
    verify_tls: bool = True
    debug: bool = False
    kubernetes: KubernetesSettings = KubernetesSettings()
    prometheus: PrometheusSettings = PrometheusSettings()
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()


_SECRET_FIELDS = {"bearer_token", "password", "api_key"}

# Environment variable -> (section or "", field)
ENVIRONMENT: dict[str, tuple[str, str]] = {
    "WHATHAPPENED_PROMETHEUS_URL": ("prometheus", "url"),
    "WHATHAPPENED_PROMETHEUS_TOKEN": ("prometheus", "bearer_token"),
    "WHATHAPPENED_PROMETHEUS_TOKEN_FILE": ("prometheus", "bearer_token_file"),
    "WHATHAPPENED_PROMETHEUS_USERNAME": ("prometheus", "username"),
    "WHATHAPPENED_PROMETHEUS_PASSWORD": ("prometheus", "password"),
    "WHATHAPPENED_ELASTICSEARCH_URL": ("elasticsearch", "url"),
    "WHATHAPPENED_ELASTICSEARCH_API_KEY": ("elasticsearch", "api_key"),
    "WHATHAPPENED_ELASTICSEARCH_USERNAME": ("elasticsearch", "username"),
    "WHATHAPPENED_ELASTICSEARCH_PASSWORD": ("elasticsearch", "password"),
    "WHATHAPPENED_ELASTICSEARCH_TOKEN": ("elasticsearch", "bearer_token"),
    "WHATHAPPENED_ELASTICSEARCH_CLOUD_ID": ("elasticsearch", "cloud_id"),
    "WHATHAPPENED_LOG_INDEX": ("elasticsearch", "log_index"),
    "WHATHAPPENED_EVENT_INDEX": ("elasticsearch", "event_index"),
    "WHATHAPPENED_NAMESPACE": ("", "namespace"),
    "WHATHAPPENED_SINCE": ("", "since"),
    "WHATHAPPENED_DEADLINE": ("", "deadline_s"),
    "KUBECONFIG": ("kubernetes", "kubeconfig"),
}


def load_settings(
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """File < environment < overrides. Override keys are ``field`` or ``section.field``; None means unset."""
    settings = Settings()
    if config_file is not None:
        settings = _apply(settings, _read_toml(Path(config_file)), origin=str(config_file))
    env = os.environ if environ is None else environ
    from_env: dict[str, Any] = {}
    for variable, (section, name) in ENVIRONMENT.items():
        value = env.get(variable)
        if value:
            from_env.setdefault(section, {})[name] = value
    settings = _apply(settings, _nest(from_env), origin="environment")
    if overrides:
        nested: dict[str, Any] = {}
        for key, value in overrides.items():
            if value is None:
                continue
            section, _, name = key.rpartition(".")
            nested.setdefault(section, {})[name] = value
        settings = _apply(settings, _nest(nested), origin="command line")
    return settings


def _nest(by_section: dict[str, Any]) -> dict[str, Any]:
    flat = dict(by_section.pop("", {}))
    flat.update(by_section)
    return flat


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.expanduser().open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"config file {path} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read: {exc.strerror}") from exc


def _apply(target: Any, values: Mapping[str, Any], origin: str, section: str = "") -> Any:
    known = {f.name: f for f in fields(target)}
    aliases = {"deadline": "deadline_s"}
    changes: dict[str, Any] = {}
    for raw_key, value in values.items():
        key = aliases.get(raw_key, raw_key)
        if key not in known:
            raise ConfigError(f"unknown setting {raw_key!r} in {origin}")
        current = getattr(target, key)
        if isinstance(value, Mapping) and hasattr(current, "__dataclass_fields__"):
            changes[key] = _apply(current, value, origin, key)
        elif hasattr(current, "__dataclass_fields__"):
            raise ConfigError(f"[{raw_key}] in {origin} must be a table of settings, not {value!r}")
        else:
            if _is_text(known[key].type) and not isinstance(value, str | Secret):
                raise ConfigError(f"{_setting_name(section, raw_key, origin)} must be text, not {value!r}")
            changes[key] = _coerce(key, value, current, origin)
            if key == "url" and changes[key] is not None:
                check_url(changes[key], _setting_name(section, raw_key, origin))
    return replace(target, **changes) if changes else target


def _is_text(annotation: object) -> bool:
    """A field whose value is one string (annotations are strings here: ``from __future__ import annotations``)."""
    return str(annotation).replace(" ", "") in ("str", "str|None", "Secret|None")


def _setting_name(section: str, key: str, origin: str) -> str:
    """How the user wrote the setting: the flag on the command line, the variable, or the file's key."""
    if origin == "command line" and section in ("prometheus", "elasticsearch") and key == "url":
        return f"--{section}-url"
    if origin == "environment":
        variable = next((v for v, where in ENVIRONMENT.items() if where == (section, key)), None)
        if variable:
            return variable
    return f"setting {'.'.join(p for p in (section, key) if p)!r} in {origin}"


def check_url(url: str, name: str) -> None:
    """A source URL must name a scheme and a host; said before any request, so no server is blamed for it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{name} {url!r} is not a URL: {exc}") from exc
    if parts.scheme not in ("http", "https"):
        hint = f"; did you mean http://{url}?" if "://" not in url else ""
        raise ConfigError(f"{name} {url!r} needs http:// or https://{hint}")
    if not parts.hostname:
        raise ConfigError(f"{name} {url!r} names no host")
    del port


def _coerce(key: str, value: Any, current: Any, origin: str) -> Any:
    if key in _SECRET_FIELDS:
        return value if isinstance(value, Secret) else Secret(str(value))
    if key == "deadline_s":
        from whathappened.timeutils import parse_duration

        return value if isinstance(value, int | float) else parse_duration(str(value)).total_seconds()
    if isinstance(current, bool) or key in ("enabled", "in_cluster", "verify_tls", "debug", "all_namespaces"):
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)
    if isinstance(current, int) and not isinstance(current, bool):
        try:
            return int(value)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"setting {key!r} in {origin} must be a whole number, not {value!r}") from exc
    if key == "label_keys":
        items = value.split(",") if isinstance(value, str) else list(value)
        return tuple(str(v).strip() for v in items if str(v).strip())
    if key == "headers":
        if isinstance(value, str):  # "K=V,K2=V2"
            pairs = [p.split("=", 1) for p in value.split(",") if "=" in p]
            return {k.strip(): v.strip() for k, v in pairs}
        return dict(value)
    return value
