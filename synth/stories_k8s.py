"""Kubernetes-side stories: scheduler preemption, a bad image, a liveness probe, a Job deadline and a clean finish."""

from __future__ import annotations

from datetime import timedelta

from synth.common import (
    end,
    killing,
    pod_event,
    restart,
    training_chatter,
)
from synth.ids import Ids
from synth.spec import KEvent, Recording
from synth.story import Setup, begin, day, expect


def scheduler_preemption(ids: Ids) -> Recording:
    s = Setup(
        "scheduler-preemption",
        "A low-priority Ray worker is preempted by the scheduler for a higher-priority inference pod; the "
        "Ray head marks the node dead and carries on.",
        "ppo-gridworld-sweep-41",
        "rl",
        "ray.io/cluster",
        "raycluster",
        "eks-g6e",
        "g6e-spot",
        "rl-eks",
        day(11, 16, 8),
        3,
        gpus=4,
        image="rayproject/ray-ml:2.40.0-py310-gpu",
    )
    rec, nodes, pods = begin(ids, s)
    head, victim = pods[0], pods[2]
    head.gpu_indices, head.gpu_request = (), 0
    t = day(11, 16, 9, 21) + timedelta(seconds=10)
    assert victim.node is not None
    preemptor_uid = ids.uuid("pod", "prod-inference", "mistral-serving")
    rec.events.append(
        KEvent(
            at=t,
            reason="Preempted",
            message=f"Preempted by pod {preemptor_uid} on node {victim.node.name}",
            kind="Pod",
            name=victim.name,
            namespace=victim.namespace,
            uid=victim.uid,
            component="default-scheduler",
            new_api=True,
            action="Preempting",
            reporting_instance=f"default-scheduler-{nodes[0].name}",
            related={
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "mistral-serving-6f7d9c8b5-qx2lp",
                "namespace": "prod-inference",
                "uid": preemptor_uid,
            },
        )
    )
    killing(rec, victim, t)
    victim.disruption = (
        "PreemptionByScheduler",
        "default-scheduler: preempting to accommodate a higher priority pod",
        t,
    )
    victim.deletion_at = t
    rec.say(victim, t + timedelta(seconds=1), f"*** SIGTERM received at time={int(t.timestamp()) + 1} on cpu 3 ***")
    end(victim, t + timedelta(seconds=4), 143)
    victim.gone_at = t + timedelta(seconds=5)
    ip = victim.ip
    rec.say(
        head,
        t + timedelta(seconds=31),
        f"The node with node id: {ids.hex('raynode', victim.name, length=56)} and address: {ip} and node "
        f"name: {ip} has been marked dead because the detector has missed too many heartbeats from it. This can happen when a \t(1) "
        "raylet crashes unexpectedly (OOM, etc.) \n\t(2) raylet has lagging heartbeats due to slow network or busy workload.",
    )
    return expect(rec, (victim, "scheduler-preemption", True, None))


def config_error(ids: Ids) -> Recording:
    image = "ghcr.io/acme-ml/trainer:2025.11.3-cu126"
    s = Setup(
        "config-error",
        "A TrainJob points at an image tag that does not exist: every pod is stuck in ImagePullBackOff.",
        "qwen2-72b-dpo-r3",
        "ml-platform",
        "jobset.sigs.k8s.io/jobset-name",
        "trainjob",
        "eks-p5",
        "p5-reserved",
        "mlp-eks",
        day(11, 17, 11),
        2,
        created_after=2462,
        image=image,
    )
    rec, _, pods = begin(ids, s)
    rec.events = [e for e in rec.events if e.reason == "Scheduled"]
    captured = rec.meta.end
    for pod in pods:
        assert pod.node is not None and pod.scheduled is not None
        pod.started = None
        pod.ready = False
        pod.waiting = ("ImagePullBackOff", f'Back-off pulling image "{image}"')
        first = pod.scheduled + timedelta(seconds=2)
        not_found = (
            f'Failed to pull image "{image}": rpc error: code = NotFound desc = failed to pull and unpack image "{image}": '
            f'failed to resolve reference "{image}": {image}: not found'
        )
        retried, backing_off = captured - timedelta(minutes=4), captured - timedelta(seconds=9)
        rec.events += [
            pod_event(pod, first, "Pulling", f'Pulling image "{image}"', last=retried, count=24),
            pod_event(pod, first + timedelta(seconds=1), "Failed", not_found, type_="Warning", last=retried, count=24),
            pod_event(
                pod,
                first + timedelta(seconds=1),
                "Failed",
                "Error: ErrImagePull",
                type_="Warning",
                last=retried,
                count=24,
            ),
            pod_event(
                pod,
                first + timedelta(seconds=2),
                "BackOff",
                f'Back-off pulling image "{image}"',
                last=backing_off,
                count=441,
            ),
            pod_event(
                pod,
                first + timedelta(seconds=2),
                "Failed",
                "Error: ImagePullBackOff",
                type_="Warning",
                last=backing_off,
                count=441,
            ),
        ]
    return expect(rec, *((p, "config-error", True, None) for p in pods))


def liveness_probe(ids: Ids) -> Recording:
    s = Setup(
        "liveness-probe",
        "A multi-host vLLM leader hangs; its liveness probe fails three times and the kubelet kills and restarts "
        "it, again and again, until it sits in CrashLoopBackOff.",
        "llama-405b-fp8-mh",
        "serving",
        "leaderworkerset.sigs.k8s.io/name",
        "lws",
        "eks-p5",
        "p5-serving",
        "serve-eks",
        day(11, 18, 16),
        2,
        image="vllm/vllm-openai:v0.6.4",
    )
    rec, _nodes, pods = begin(ids, s)
    leader = pods[0]
    leader.restart_policy = pods[1].restart_policy = "Always"
    leader.liveness_probe = {
        "failureThreshold": 3,
        "httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"},
        "initialDelaySeconds": 900,
        "periodSeconds": 10,
        "successThreshold": 1,
        "timeoutSeconds": 5,
    }
    assert leader.started is not None
    rec.say(
        leader,
        leader.started + timedelta(minutes=9),
        "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
        "stdout",
    )
    starts = [leader.started]
    hangs = [
        day(11, 18, 17, 2) + timedelta(seconds=10),
        day(11, 18, 17, 31) + timedelta(seconds=5),
        day(11, 18, 17, 52),
    ]
    for i, hang in enumerate(hangs):
        stamp = (hang + timedelta(seconds=60)).strftime("%H:%M:%S")
        rec.say(
            leader,
            hang + timedelta(seconds=60),
            f"WARNING 11-18 {stamp} [shm_broadcast.py:396] No available shared memory broadcast block found in "
            "60 second. This typically happens when some processes are hanging.",
        )
        probe = hang + timedelta(seconds=62)
        failed = (
            f'Liveness probe failed: Get "http://{leader.ip}:8000/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)"
        )
        rec.events.append(
            pod_event(leader, probe, "Unhealthy", failed, type_="Warning", last=probe + timedelta(seconds=20), count=3)
        )
        kill = probe + timedelta(seconds=20)
        killing(rec, leader, kill, f"Container {leader.container} failed liveness probe, will be restarted")
        restart(leader, starts[-1], kill + timedelta(seconds=30), 137)
        starts.append(kill + timedelta(seconds=31 + 10 * i))
    leader.started = starts[-1]
    last = leader.runs[-1].finished
    back_off = (
        f"Back-off restarting failed container {leader.container} in pod {leader.name}_{leader.namespace}({leader.uid})"
    )
    rec.events.append(
        pod_event(
            leader,
            last + timedelta(seconds=1),
            "BackOff",
            back_off,
            type_="Warning",
            last=rec.meta.end - timedelta(seconds=20),
            count=4,
        )
    )
    leader.waiting = (
        "CrashLoopBackOff",
        f"back-off 40s restarting failed container={leader.container} pod={leader.name}_{leader.namespace}({leader.uid})",
    )
    leader.ready = False
    return expect(rec, (leader, "liveness-probe", True, None))


def deadline_exceeded(ids: Ids) -> Recording:
    s = Setup(
        "deadline-exceeded",
        "An embedding Job runs past its activeDeadlineSeconds; the Job controller deletes its pod. Asked 20 "
        "minutes later: the pod is gone from the API, its story is in events, metrics and logs.",
        "embed-laion-shard-0175",
        "data",
        "job-name",
        "legacy-job",
        "onprem-a100",
        "dgxa100",
        "dc2",
        day(11, 19, 1),
        1,
        gpus=4,
        created_after=-1200,
        image="registry.internal:5000/data/clip-embed:3.2.1",
    )
    rec, _nodes, pods = begin(ids, s)
    pod = pods[0]
    pod.command = ["python", "-m", "embed.run", "--shard", "0175", "--batch-size", "2048"]
    deadline = pod.created + timedelta(hours=2)
    assert pod.started is not None
    t, done = pod.started + timedelta(minutes=2), 0
    while t < deadline:
        done += 60_500
        rec.say(pod, t, f"embedded {done}/1200000 images ({done / 12000:.1f}%) rate=1008.3 img/s", "stdout")
        t += timedelta(minutes=10)
    owner_uid = pod.owner.uid if pod.owner else ""
    rec.events.append(
        KEvent(
            at=deadline,
            reason="DeadlineExceeded",
            message="Job was active longer than specified deadline",
            kind="Job",
            name=s.experiment,
            namespace=s.namespace,
            uid=owner_uid,
            api_version="batch/v1",
            component="job-controller",
            type="Warning",
        )
    )
    rec.events.append(
        KEvent(
            at=deadline,
            reason="SuccessfulDelete",
            message=f"Deleted pod: {pod.name}",
            kind="Job",
            name=s.experiment,
            namespace=s.namespace,
            uid=owner_uid,
            api_version="batch/v1",
            component="job-controller",
        )
    )
    killing(rec, pod, deadline)
    rec.say(pod, deadline + timedelta(seconds=1), "received SIGTERM, flushing partial shard to /out/part-0175.parquet")
    end(pod, deadline + timedelta(seconds=6), 143)
    pod.deletion_at, pod.gone_at = deadline, deadline + timedelta(seconds=7)
    rec.archive_events = True
    return expect(rec, (pod, "deadline-exceeded", True, None))


def completed(ids: Ids) -> Recording:
    s = Setup(
        "completed",
        "A fine-tuning JobSet finishes: both pods exit 0 and the JobSet completes.",
        "gemma2-27b-sft-cs4",
        "alignment",
        "experiment",
        "jobset",
        "gke-a2",
        "a2-ultra",
        "align-gke",
        day(11, 19, 9),
        2,
    )
    rec, _nodes, pods = begin(ids, s)
    t = day(11, 19, 10, 48) + timedelta(seconds=20)
    training_chatter(rec, ids, pods, t, ckpt_path="/gcs/ckpt/gemma2-27b-sft-cs4")
    rec.say(
        pods[0],
        t,
        "{'train_runtime': 5312.4, 'train_samples_per_second': 96.3, 'train_steps_per_second': 0.094, "
        "'train_loss': 1.4123, 'epoch': 3.0}",
        "stdout",
    )
    rec.say(
        pods[0],
        t + timedelta(seconds=1),
        "\n\nTraining completed. Do not forget to share your model on huggingface.co/models =)\n\n",
        "stdout",
    )
    for i, pod in enumerate(pods):
        end(pod, t + timedelta(seconds=9 + i), 0, "Completed", "Succeeded")
    job = pods[0].owner
    assert job is not None
    done = t + timedelta(seconds=12)
    rec.events.append(
        KEvent(
            at=done,
            reason="Completed",
            message="Job completed",
            kind="Job",
            name=job.name,
            namespace=s.namespace,
            uid=job.uid,
            api_version="batch/v1",
            component="job-controller",
        )
    )
    rec.events.append(
        KEvent(
            at=done + timedelta(seconds=1),
            reason="AllJobsCompleted",
            message="jobset completed",
            kind="JobSet",
            name=s.experiment,
            namespace=s.namespace,
            uid=ids.uuid("jobset", s.experiment),
            api_version="jobset.x-k8s.io/v1alpha2",
            component="jobset",
        )
    )
    return expect(rec, *((p, "completed", False, None) for p in pods))
