"""``whathappened watch`` end to end, as the installed command: against the API double's WATCH it explains an
experiment pod's death once its settle is over, prints one JSON line for it and counts its verdicts in the
contract's metrics, and a SIGTERM ends it cleanly. (The watch's pieces: tests/test_watcher.py, the pod watch:
tests/collectors/kubernetes/test_pod_watch.py.)"""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from tests.acceptance import BIN
from tests.doubles.kube import KubeDouble, Store
from tests.fixtures.kube import write_kubeconfig
from tests.support import all_scenarios, free_port, http_server, require_binary, server_process
from whathappened.watch_verdict import in_words

SCENARIO = next(s for s in all_scenarios() if s.name == "maintenance-eviction")
WORKER = "phi-3-medium-pt-r5-worker-1"
JOB = "phi-3-medium-pt-r5"  # the PyTorchJob that owns it
JOB_RESOURCE = "pytorchjobs.kubeflow.org"


@pytest.fixture
def double() -> Iterator[KubeDouble]:
    with KubeDouble(Store.from_scenario(SCENARIO.path)) as started:
        yield started


class Receiver(BaseHTTPRequestHandler):
    posted: ClassVar[queue.Queue[dict[str, Any]]] = queue.Queue()

    def do_POST(self) -> None:
        self.posted.put(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_death_is_explained_once_printed_counted_and_posted(double: KubeDouble, tmp_path: Path) -> None:
    with http_server(Receiver) as hook:
        line, text, errors = watched(double, tmp_path, "--webhook", hook + "/hooks/secret-path")
    assert line["root_cause"] is not None and line["outcome"] == "explained"
    assert line["sources"]["kubernetes"] == "ok" and line["sources"]["prometheus"] == "not_configured"
    root = line["root_cause"]["cause"]
    counted = re.findall(rf'whathappened_pod_failures_total{{[^}}]*cause="{re.escape(root)}"[^}}]*}} (\S+)', text)
    assert counted and float(counted[0]) >= 1
    assert re.search(r"whathappened_explain_seconds_count (\S+)", text).group(1) == "1.0"
    assert 'whathappened_watch_requests{kind="list"} 1.0' in text
    posted = Receiver.posted.get(timeout=10)
    assert posted["experiment"] == SCENARIO.experiment and posted["root_cause"]["pod"] == line["root_cause"]["pod"]
    assert posted["text"].startswith(f"whathappened: {SCENARIO.experiment} in {SCENARIO.namespace}: ")
    assert Receiver.posted.empty()  # one POST for the one incident
    assert "secret-path" not in errors
    assert [r for r in double.requests if r.method != "GET"] == []  # without --write-events/--annotate: read-only


def test_the_verdict_is_written_on_the_training_job_and_read_back_with_kubectl(tmp_path: Path) -> None:
    scraped: list[str] = []

    def written(port: int) -> None:
        """Writes finish after the line is printed: wait for both to reach the server, then for both metrics (each
        is counted when its response comes back, the two queues in either order)."""
        assert double.changes.wait_for(lambda changes: {c.resource for c in changes} >= {"events", JOB_RESOURCE})
        metrics_until(port, 'whathappened_watch_writes{kind="annotation",result="sent"} 1.0')
        scraped.append(metrics_until(port, 'whathappened_watch_writes{kind="event",result="sent"} 1.0'))

    with KubeDouble(Store.from_scenario(SCENARIO.path), writable=True) as double:
        line, _, _ = watched(double, tmp_path, "--write-events", "--annotate", during=written)
        events = json.loads(kubectl(double, tmp_path, "get", "events", "--field-selector", "reason=WhatHappened"))
        job = json.loads(kubectl(double, tmp_path, "get", "pytorchjob", JOB))
    [event] = events["items"]  # one incident, one Event
    assert event["type"] == "Warning" and event["involvedObject"]["kind"] == "PyTorchJob"
    assert event["involvedObject"]["uid"] == job["metadata"]["uid"]
    assert event["message"] == in_words(line) and line["root_cause"]["summary"] in event["message"]
    assert json.loads(job["metadata"]["annotations"]["whathappened.io/verdict"]) == line
    assert 'whathappened_watch_writes{kind="event",result="sent"} 1.0' in scraped[0]
    assert 'whathappened_watch_writes{kind="event",result="failed"} 0.0' in scraped[0]
    writes = sorted((r.method, r.status) for r in double.requests if r.method != "GET")  # two queues, either first
    assert writes == [("PATCH", 200), ("POST", 201)]


def kubectl(double: KubeDouble, tmp_path: Path, *args: str) -> str:
    config = write_kubeconfig(tmp_path / "kubectl-config", double.url, SCENARIO.namespace)
    env = {"KUBECONFIG": str(config), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    command = [require_binary("kubectl"), "--cache-dir", str(tmp_path / "cache"), *args, "-o", "json"]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=True).stdout


def test_a_source_down_during_an_explanation_is_named_in_the_verdict(tmp_path: Path) -> None:
    """Prometheus refuses: the verdict still comes, from the sources that answered, and says which one did not, in
    the line, the metrics and the Event written on the job."""
    with KubeDouble(Store.from_scenario(SCENARIO.path), writable=True) as double:
        unreachable = f"http://127.0.0.1:{free_port()}"
        line, text, _ = watched(double, tmp_path, "--prometheus-url", unreachable, "--write-events")
        assert double.changes.wait_for(lambda changes: any(c.resource == "events" for c in changes))
        [event] = [e for e in double.store.objects("events") if e.get("reason") == "WhatHappened"]
    assert line["sources"]["prometheus"] == "unreachable" and line["sources"]["kubernetes"] == "ok"
    assert line["root_cause"] is not None
    assert event["message"].endswith("Not read: prometheus (unreachable).")
    assert 'whathappened_watch_source_up{source="prometheus"} 0.0' in text
    assert 'whathappened_watch_source_up{source="kubernetes"} 1.0' in text


def test_a_real_prometheus_scrapes_the_verdicts(double: KubeDouble, tmp_path: Path) -> None:
    """The contract's counter as Prometheus stores it, with the labels the dashboards group by."""
    found: list[dict[str, Any]] = []

    def scrape(port: int) -> None:
        config = tmp_path / "prometheus.yml"
        scrape = {"job_name": "whathappened-watch", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
        config.write_text(yaml.safe_dump({"global": {"scrape_interval": "1s"}, "scrape_configs": [scrape]}))
        listen = free_port()
        args = [require_binary("prometheus"), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}"]
        url = f"http://127.0.0.1:{listen}"
        with server_process([*args, f"--web.listen-address=127.0.0.1:{listen}"], f"{url}/-/ready", tmp_path / "p.log"):
            found.extend(query_until(url, "whathappened_pod_failures_total"))

    line, _, _ = watched(double, tmp_path, during=scrape)
    roots = [s["metric"] for s in found if s["metric"]["root"] == "true"]
    assert [(m["cause"], m["namespace"], m["job"]) for m in roots] == [
        (line["root_cause"]["cause"], SCENARIO.namespace, "whathappened-watch")
    ]
    assert {"category", "retryable"} <= set(roots[0])


def test_a_storm_of_500_deaths_is_one_incident_one_event_and_no_request_storm(tmp_path: Path) -> None:
    """500 ranks of one job fail within the settle, and the API server asks the first watch to come back later
    (429): one explanation, one Event, and the explanation's requests do not grow with the ranks."""
    store = Store.from_scenario(SCENARIO.path)
    worker = next(p for p in store.pods if p["metadata"]["name"] == WORKER)
    ranks = [f"{JOB}-worker-{i}" for i in range(100, 600)]
    store = Store.build(
        [*store.pods, *({**worker, "metadata": {**worker["metadata"], "name": n, "uid": n}} for n in ranks)],
        store.events,
        store.nodes,
        store.logs,
    )
    with KubeDouble(store, writable=True) as double:
        double.faults.add(status=429, query="watch=", retry_after=1)
        line, text, _ = watched(double, tmp_path, "--write-events", "--settle", "5s", deaths=ranks)
        writes = [r for r in double.requests if r.method != "GET"]
        reads = [r for r in double.requests if r.method == "GET" and not r.is_log]
    assert line["root_cause"] is not None
    assert re.search(r"whathappened_explain_seconds_count (\S+)", text).group(1) == "1.0"
    assert [(r.method, r.path.rsplit("/", 1)[-1]) for r in writes] == [("POST", "events")]
    pod_lists = [r for r in reads if r.path.endswith("/pods") and r.query.get("watch") not in ("1", "true")]
    # the watch's one LIST, then the explanation's (which pods, which experiment), in pages of 500
    assert len([r for r in pod_lists if "continue" not in r.query]) <= 3 and len(pod_lists) <= 6
    assert len(reads) < 40, [r.path for r in reads]  # not a request per rank
    assert [r.status for r in double.requests if r.query.get("watch") in ("1", "true")][:1] == [429]


def metrics_until(port: int, needle: str, timeout_s: float = 10.0) -> str:
    """The watch's metrics once they show ``needle``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
        if needle in text:
            return text
        time.sleep(0.1)  # the scrape's poll interval, not a wait for an effect
    raise AssertionError(f"no {needle!r} in the metrics after {timeout_s} s")


def query_until(url: str, promql: str, timeout_s: float = 30.0) -> list[dict[str, Any]]:
    """The query's series once there are any (scrapes come on Prometheus' schedule)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        answer = json.loads(urllib.request.urlopen(f"{url}/api/v1/query?query={promql}", timeout=5).read())
        if answer["data"]["result"]:
            return list(answer["data"]["result"])
        time.sleep(0.2)  # the query API's poll interval, not a wait for an effect
    raise AssertionError(f"{promql}: no series after {timeout_s} s")


def watched(
    double: KubeDouble,
    tmp_path: Path,
    *extra: str,
    during: Callable[[int], None] | None = None,
    deaths: Sequence[str] = (WORKER,),
) -> tuple[dict[str, Any], str, str]:
    """Run the installed command against the double, let the ``deaths`` pods die, and return its JSON line, its
    metrics and what it wrote to stderr; ``during`` runs with its metrics port before it is stopped. A SIGTERM must
    end it with 0."""
    config = write_kubeconfig(tmp_path / "kubeconfig", double.url, SCENARIO.namespace, token="unused")
    port = free_port()
    command = [str(BIN), "watch", "--kubeconfig", str(config), "--port", str(port), "--settle", "0s", *extra]
    # the recorded incident is days old: a window of a century holds it whatever the date
    command += ["--since", "36500d", "--label-key", SCENARIO.label_key, "--deadline", "10s"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as watch:
        try:
            assert watch.stderr is not None and watch.stdout is not None
            started = watch.stderr.readline()
            assert f"metrics on :{port}" in started and SCENARIO.namespace in started
            assert double.changes.wait_watching(1)
            for pod in deaths:
                double.change("MODIFIED", "pods", double.store.in_phase(pod, "Running"))  # it ran again: no death
            for pod in deaths:
                double.change("MODIFIED", "pods", double.store.in_phase(pod, "Failed"))  # and failed
            line = json.loads(watch.stdout.readline())
            assert (line["experiment"], line["namespace"], line["deaths"]) == (
                SCENARIO.experiment,
                SCENARIO.namespace,
                len(deaths),
            )
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
            if during is not None:
                during(port)
        finally:
            watch.send_signal(signal.SIGTERM)
            code = watch.wait(timeout=30)
            errors = watch.stderr.read()
    assert code == 0, errors
    return line, text, errors
