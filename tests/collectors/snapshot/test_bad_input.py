"""A damaged snapshot: the report names each bad file and line, and still uses everything else."""

import gzip
import shutil

from tests.acceptance import run_cli, scenario_args
from tests.support import SCENARIOS_DIR, load_scenario

SCENARIO = load_scenario(SCENARIOS_DIR / "xid79-fallen-off-bus")


def _copy(tmp_path):
    folder = tmp_path / "snapshot"
    shutil.copytree(SCENARIO.path, folder)
    for path in folder.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    return folder


def test_bad_lines_and_files_are_named_and_the_rest_is_used(tmp_path):
    folder = _copy(tmp_path)
    (folder / "kubernetes" / "events.json").write_text('{"kind": "EventList", "items": [\n  {"reason": \n')
    lines = (folder / "logs.ndjson").read_bytes().splitlines(keepends=True)
    damaged = [
        *lines[:4],
        b"{this is not json\n",
        b'{"create": {"_index": "logs-k8s-x"}}\n',
        b'{"@timestamp": "2026-11-20T06:30:00Z", "message": "\xff\xfe caf\xe9 ' + b"x" * 1_200_000 + b'"}\n',
        *lines[4:],
    ]
    (folder / "logs.ndjson").write_bytes(b"".join(damaged))
    code, document, stderr = run_cli(*scenario_args(SCENARIO), "--snapshot", str(folder))
    assert code == 3, stderr
    assert document is not None
    sources = {s["name"]: s for s in document["sources"]}
    assert sources["kubernetes"]["status"] == "failed"
    assert "kubernetes/events.json: line 3" in sources["kubernetes"]["detail"]
    assert sources["logs"]["status"] == "failed"
    assert "logs.ndjson: line 5" in sources["logs"]["detail"]
    assert sources["prometheus"]["status"] == "ok"
    # what the damaged files did not hold is still explained: the Xid from Prometheus, the pods from pods.json
    assert document["root_cause"]["cause"] == "gpu-fallen-off-bus"
    assert max(len(e["message"]) for e in document["timeline"]) < 10_000


def test_truncated_gzip_and_empty_folder(tmp_path):
    folder = _copy(tmp_path)
    data = (folder / "prometheus.om.gz").read_bytes()
    (folder / "prometheus.om.gz").write_bytes(data[: len(data) // 2])
    code, document, stderr = run_cli(*scenario_args(SCENARIO), "--snapshot", str(folder))
    assert document is not None, stderr
    prometheus = next(s for s in document["sources"] if s["name"] == "prometheus")
    assert prometheus["status"] == "failed" and "prometheus.om.gz" in prometheus["detail"]
    assert code == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    code, document, stderr = run_cli(*scenario_args(SCENARIO), "--snapshot", str(empty))
    assert code == 2 and "holds no snapshot files" in stderr


def test_plain_openmetrics_is_read_too(tmp_path):
    folder = _copy(tmp_path)
    plain = gzip.decompress((folder / "prometheus.om.gz").read_bytes())
    (folder / "prometheus.om.gz").unlink()
    (folder / "prometheus.om").write_bytes(plain)
    code, document, stderr = run_cli(*scenario_args(SCENARIO), "--snapshot", str(folder), "--without", "logs")
    assert code == 0, stderr
    assert any(e["kind"] == "gpu-xid" and e["source"] == "prometheus" for e in document["timeline"])
