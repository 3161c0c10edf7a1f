"""``dashboards install`` against the loopback Grafana double: requests, idempotence by uid, errors, no token leaks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from whathappened.dashboards.generate import build
from whathappened.dashboards.install import GrafanaError, client_for, install

from tests.doubles.grafana import TOKEN, GrafanaDouble

UIDS = {board["uid"] for board in build().values()}


def run_install(double: GrafanaDouble, token: str = TOKEN, folder_uid: str | None = None) -> list:
    with client_for(double.url, token, timeout=10.0) as client:
        return install(client, build().values(), folder_uid, message="test")


def test_first_install_creates_every_dashboard_with_the_token_and_overwrite(grafana_double: GrafanaDouble) -> None:
    done = run_install(grafana_double, folder_uid="gpu-folder")

    assert {d.uid for d in done} == UIDS and {d.outcome for d in done} == {"created"}
    posts = [r for r in grafana_double.requests if r.method == "POST"]
    gets = [r for r in grafana_double.requests if r.method == "GET"]
    assert [r.path for r in posts] == ["/api/dashboards/db"] * 3
    assert sorted(r.path for r in gets) == sorted(f"/api/dashboards/uid/{uid}" for uid in UIDS)
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in grafana_double.requests)
    for post in posts:
        assert post.headers["content-type"] == "application/json"
        assert post.body["overwrite"] is True and post.body["folderUid"] == "gpu-folder"
        assert post.body["dashboard"]["id"] is None and post.body["dashboard"]["uid"] in UIDS
    assert all(d.url.startswith("/d/") and d.version == 1 for d in done)


def test_second_install_changes_nothing(grafana_double: GrafanaDouble) -> None:
    run_install(grafana_double)
    grafana_double.requests.clear()

    again = run_install(grafana_double)

    assert {d.outcome for d in again} == {"unchanged"}
    assert [r.method for r in grafana_double.requests] == ["GET"] * 3
    assert {uid: e["version"] for uid, e in grafana_double.stored.items()} == dict.fromkeys(UIDS, 1)


def test_changed_dashboard_is_overwritten_in_place_by_uid(grafana_double: GrafanaDouble) -> None:
    run_install(grafana_double)
    uid = "whathappened-experiment"
    grafana_double.stored[uid]["dashboard"]["title"] = "edited by hand in the UI"

    again = run_install(grafana_double)

    outcomes = {d.uid: d.outcome for d in again}
    assert outcomes.pop(uid) == "updated" and set(outcomes.values()) == {"unchanged"}
    assert len(grafana_double.stored) == 3
    assert grafana_double.stored[uid]["version"] == 2
    assert grafana_double.stored[uid]["dashboard"]["title"] == build()["experiment.json"]["title"]


def test_wrong_token_is_a_clear_error_that_never_shows_the_token(grafana_double: GrafanaDouble) -> None:
    wrong = "glsa_wrong_token_fedcba9876543210"
    with pytest.raises(GrafanaError) as caught:
        run_install(grafana_double, token=wrong)
    message = str(caught.value)
    assert "HTTP 401" in message and "token was refused" in message
    assert wrong not in message and TOKEN not in message
    assert grafana_double.stored == {}


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (
            412,
            {"message": "A dashboard with the same name in the folder already exists", "status": "name-exists"},
            "412",
        ),
        (500, {"message": "Failed to save dashboard"}, "HTTP 500 (Failed to save dashboard)"),
        (503, {"message": "database is locked"}, "try again later"),
        (403, {"message": "Access denied"}, "dashboards:write"),
    ],
)
def test_refused_uploads_name_the_status(grafana_double: GrafanaDouble, status: int, body: dict, expected: str) -> None:
    grafana_double.fail_next("POST", status, body)
    with pytest.raises(GrafanaError) as caught:
        run_install(grafana_double)
    assert expected in str(caught.value)
    assert body["message"] in str(caught.value)
    assert len(grafana_double.stored) == 0  # the first upload failed, and install stops there


def test_failed_lookup_names_the_status(grafana_double: GrafanaDouble) -> None:
    grafana_double.fail_next("GET", 502, {"message": "Bad Gateway"})
    with pytest.raises(GrafanaError, match="HTTP 502"):
        run_install(grafana_double)


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("WHATHAPPENED_GRAFANA_TOKEN", "GRAFANA_TOKEN")}
    code = "from whathappened.cli.main import run; run()"
    return subprocess.run(
        [sys.executable, "-c", code, "dashboards", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_install_uses_the_token_from_the_environment(grafana_double: GrafanaDouble) -> None:
    done = _cli(["install", "--grafana-url", grafana_double.url], {"WHATHAPPENED_GRAFANA_TOKEN": TOKEN})

    assert done.returncode == 0, done.stderr
    assert sorted(line.split()[1] for line in done.stdout.splitlines()) == sorted(UIDS)
    assert all(line.startswith("created") for line in done.stdout.splitlines())
    assert TOKEN not in done.stdout + done.stderr
    again = _cli(["install", "--grafana-url", grafana_double.url], {"GRAFANA_TOKEN": TOKEN})
    assert again.returncode == 0 and all(line.startswith("unchanged") for line in again.stdout.splitlines())


def test_cli_install_refused_exits_1_without_printing_the_token(grafana_double: GrafanaDouble) -> None:
    wrong = "glsa_wrong_token_fedcba9876543210"
    done = _cli(["install", "--grafana-url", grafana_double.url], {"GRAFANA_TOKEN": wrong})
    assert done.returncode == 1
    assert "HTTP 401" in done.stderr
    assert wrong not in done.stdout + done.stderr


def test_cli_install_without_a_token_is_a_usage_error(grafana_double: GrafanaDouble) -> None:
    done = _cli(["install", "--grafana-url", grafana_double.url], {})
    assert done.returncode == 2
    assert "WHATHAPPENED_GRAFANA_TOKEN" in done.stderr
    assert grafana_double.requests == []


def test_cli_install_unreachable_grafana_is_one_line(grafana_double: GrafanaDouble) -> None:
    from tests.support import free_port

    done = _cli(["install", "--grafana-url", f"http://127.0.0.1:{free_port()}"], {"GRAFANA_TOKEN": TOKEN})
    assert done.returncode == 1
    assert "unreachable" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_install_into_another_folder_moves_the_dashboards(grafana_double: GrafanaDouble) -> None:
    run_install(grafana_double, folder_uid="gpu-folder")
    assert {d.outcome for d in run_install(grafana_double, folder_uid="gpu-folder")} == {"unchanged"}
    assert {d.outcome for d in run_install(grafana_double)} == {"unchanged"}  # no folder asked: leave them be

    moved = run_install(grafana_double, folder_uid="ml-folder")

    assert {d.outcome for d in moved} == {"updated"}
    assert {e["folderUid"] for e in grafana_double.stored.values()} == {"ml-folder"}
