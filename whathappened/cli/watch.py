"""``whathappened watch``: explain every failed experiment pod as it happens (CONTRACT.md section 3a).

One pod watch (collectors/kubernetes/pod_watch.py) feeds the Watcher (whathappened/watcher.py) through the loop
(whathappened/watch_loop.py); each incident, once settled, is explained exactly as ``whathappened EXPERIMENT``
explains it, printed as one JSON line (whathappened/watch_verdict.py), counted in the metrics served on ``--port``
and, opt-in, written: ``--write-events`` and ``--annotate`` on the failed pod's training job
(collectors/kubernetes/verdict_writes.py), ``--webhook`` to a URL (whathappened/webhook.py). Without those flags
the watch is read-only on the cluster like the CLI.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import sys
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated

import typer

from whathappened.cli import options as o
from whathappened.errors import UsageError, WhathappenedError, scrub
from whathappened.timeutils import now, parse_duration

if TYPE_CHECKING:
    from whathappened.watcher import Incident

SKEW = timedelta(minutes=2)


def register(app: typer.Typer) -> None:
    app.command("watch", help="Explain every failed experiment pod as it happens; metrics on --port.")(watch)


@o.with_sources(leave_out=("snapshot", "start", "end", "without"))
def watch(
    port: Annotated[int, typer.Option("--port", help="Serve /metrics and /healthz here [9978].")] = 9978,
    settle: Annotated[
        str, typer.Option("--settle", help="Wait this long after a death for the evidence [90s].")
    ] = "90s",
    webhook: Annotated[
        str | None, typer.Option("--webhook", help="POST each new verdict's JSON here (with a Slack-style text).")
    ] = None,
    write_events: Annotated[
        bool, typer.Option("--write-events", help="Write each new verdict as a Warning Event on the pod's job.")
    ] = False,
    annotate: Annotated[
        bool, typer.Option("--annotate", help="Set whathappened.io/verdict (the verdict JSON) on the pod's job.")
    ] = False,
    *,
    chosen: o.SourceOptions,
) -> None:
    from prometheus_client.registry import CollectorRegistry

    from whathappened.collectors.kubernetes.api import KubeApi, KubeWrites, build_api_client
    from whathappened.collectors.kubernetes.pod_watch import PodWatch
    from whathappened.collectors.kubernetes.verdict_writes import VerdictWriter
    from whathappened.explain import explain as make_report
    from whathappened.exporters.server import MetricsServer
    from whathappened.exporters.watch_metrics import WatchMetrics
    from whathappened.model import Window
    from whathappened.scope import Query
    from whathappened.sources import live_sources
    from whathappened.watch_loop import WatchLoop
    from whathappened.watch_verdict import in_words, verdict_line
    from whathappened.watcher import Watcher

    settings = chosen.settings()
    wait = timedelta(0) if re.fullmatch(r"0+[smhd]?", settle.strip()) else parse_duration(settle)  # 0: at once
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: not a port number")
    if webhook is not None and not webhook.startswith(("http://", "https://")):
        raise UsageError("--webhook must be an http:// or https:// URL")
    from whathappened.webhook import Webhook

    hook = Webhook(webhook, time.sleep) if webhook else None
    api_client, context_namespace = build_api_client(settings.kubernetes, settings.verify_tls)
    namespace = None if settings.all_namespaces else (settings.namespace or context_namespace)
    pods = PodWatch(KubeApi(api_client), namespace, settings.label_keys, time.sleep)
    writer = None
    if write_events or annotate:
        writes = KubeWrites(api_client)
        instance = socket.gethostname()
        writer = VerdictWriter(writes, time.sleep, instance, events=write_events, annotations=annotate)
    watcher = Watcher(settings.label_keys, wait)
    registry = CollectorRegistry()
    metrics = WatchMetrics(registry)
    if hook is not None:
        metrics.writes_of("webhook", lambda h=hook: (h.sent, h.failed, h.dropped))
    if writer is not None:
        for kind in writer.counts():
            metrics.writes_of(kind, lambda kind=kind, w=writer: w.counts()[kind])
    server = MetricsServer(port, registry=registry).start()

    def explain(incident: Incident) -> None:
        """As the CLI does it, with fresh collectors: a collector keeps what it fetched (nodes, spellings) for the
        run it was built for, and one explanation's cache must not answer for the next incident."""
        began = time.monotonic()
        # the window reaches --since back from the first death and the settle past the last (now, when the deaths
        # are new; a replayed incident keeps its own times)
        end = min(now(), (incident.last or incident.first) + wait)
        window = Window(incident.first - parse_duration(settings.since), max(end, incident.first + SKEW))
        query = Query(incident.experiment, incident.namespace, window, settings.label_keys)
        try:
            sources = live_sources(settings, utilization=False)  # the GPU strip is the HTML report's alone
            report = make_report(sources.collectors, query, settings.deadline_s, sources.not_configured)
        except WhathappenedError as error:
            print(json.dumps({"experiment": incident.experiment, "error": scrub(str(error))}), flush=True)
            return
        root = report.root_cause
        news = watcher.explained(incident, (root.pod, root.cause) if root else None)
        metrics.explained(report, time.monotonic() - began, news, incident.first - SKEW)
        metrics.watched(pods.lists, pods.watches, pods.expired, pods.failures)
        if news:
            line = verdict_line(incident, report)
            print(json.dumps(line), flush=True)
            if hook is not None:
                hook.send(line)
            owner = incident.owner(root.pod if root else None)
            if writer is not None and owner is not None:
                writer.write(owner, line, in_words(line), now())

    loop = WatchLoop(watcher, explain, now)

    def stop(*_: object) -> None:
        pods.stop()
        loop.stop()

    signal.signal(signal.SIGTERM, stop)
    loop.read((c.type, dict(c.pod)) for c in pods.changes())
    print(f"watching pods in {namespace or 'every namespace'}; metrics on :{server.port}", file=sys.stderr, flush=True)
    try:
        loop.run()
    except KeyboardInterrupt:
        stop()
    finally:
        if hook is not None:
            hook.close()
        if writer is not None:
            writer.close()
        server.stop()
