import pytest

from whathappened.config import Secret, load_settings
from whathappened.errors import ConfigError


def test_file_then_environment_then_flags(tmp_path):
    config = tmp_path / "whathappened.toml"
    config.write_text(
        'namespace = "from-file"\nsince = "6h"\n[prometheus]\nurl = "http://file:9090"\n'
        '[elasticsearch]\nurl = "http://file:9200"\nlog_index = "file-*"\n'
    )
    environ = {"WHATHAPPENED_PROMETHEUS_URL": "http://env:9090", "WHATHAPPENED_NAMESPACE": "from-env"}
    settings = load_settings(config, environ, {"namespace": "from-flag", "since": None})
    assert settings.namespace == "from-flag"  # flag beats environment and file
    assert settings.prometheus.url == "http://env:9090"  # environment beats file
    assert settings.elasticsearch.url == "http://file:9200"  # file beats default
    assert settings.elasticsearch.log_index == "file-*"
    assert settings.since == "6h"  # a flag left unset does not override


def test_secrets_never_print(tmp_path):
    settings = load_settings(None, {"WHATHAPPENED_ELASTICSEARCH_API_KEY": "s3cr3t-api-key"}, {})
    assert isinstance(settings.elasticsearch.api_key, Secret)
    assert settings.elasticsearch.api_key.reveal() == "s3cr3t-api-key"
    assert "s3cr3t" not in repr(settings)
    assert "s3cr3t" not in str(settings.elasticsearch)


def test_unknown_setting_is_named(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[prometheus]\nurll = 'x'\n")
    with pytest.raises(ConfigError, match="unknown setting 'urll'"):
        load_settings(config, {}, {})


def test_malformed_toml_is_one_clear_error(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("namespace = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(config, {}, {})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml", {}, {})


def test_types_are_coerced():
    settings = load_settings(None, {"WHATHAPPENED_DEADLINE": "5s"}, {"label_keys": "a, b", "kubernetes.log_lines": "7"})
    assert settings.deadline_s == 5.0
    assert settings.label_keys == ("a", "b")
    assert settings.kubernetes.log_lines == 7
