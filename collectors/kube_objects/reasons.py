"""THE table from Kubernetes event reasons to timeline kinds: data, read by ``parse_event``.

One row per reason a kubelet, controller, node-problem-detector, AKS scheduled-events monitor,
aws-node-termination-handler, GKE or cluster-autoscaler writes (../shared/reference/k8s-events.md and
cloud-maintenance-samples.json). Where one reason covers several happenings ("Failed" is an image pull or a
bad container config; "Unhealthy" is a liveness or a readiness probe) the row lists message patterns, first
match wins. Reasons not listed here stay on the timeline as KUBE_EVENT, except Warnings on a node: those are
a generic node condition, because an unknown Warning there (a custom node-problem-detector rule) is a problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from whathappened.kinds import Kind


@dataclass(frozen=True, slots=True)
class Reason:
    kind: Kind
    # (pattern on the message, kind): the first that matches overrides ``kind``
    refine: tuple[tuple[re.Pattern[str], Kind], ...] = ()
    provider: str | None = None  # cloud that sent a maintenance/interruption notice
    notice: bool = False  # carries provider / event_type / event_id / not_before attrs


def _rx(*pairs: tuple[str, Kind]) -> tuple[tuple[re.Pattern[str], Kind], ...]:
    return tuple((re.compile(pattern, re.IGNORECASE), kind) for pattern, kind in pairs)


_MISSING_CLAIM = _rx(
    (
        r'persistentvolumeclaim "[^"]{1,253}" not found|unbound immediate PersistentVolumeClaims'
        # a DRA claim asking for a DeviceClass the cluster does not have (dynamicresources "request %s: device class
        # %s does not exist"): no capacity ever places it
        # (a prioritized list's subrequest is named "request/subrequest")
        r"|request [\w./-]{1,127}: device class [\w.-]{1,253} does not exist",
        Kind.CONFIG_ERROR,
    ),
)

# What other components relay under a reason of their own: kernel lines a node-problem-detector rule forwards
# ("PodOOMKilling", a custom kernel-monitor rule), and Karpenter's Events for a node's status conditions ("Status
# condition transitioned, Type: Ready, Status: True -> Unknown, Reason: NodeStatusUnknown, ...", the reason the
# condition's type): what the message says, whatever the reason is called
_RELAYED = _rx(
    (r"NVRM: Xid \(PCI:", Kind.GPU_XID),
    (r"out of memory: Kill(?:ed)? process \d", Kind.KERNEL_OOM),
    # the kubelet's pod lifecycle event generator stalled, or its container runtime stopped answering: the kubelet
    # reports its node NotReady (not in its first moments: a PLEG that never ran, a zero time's 2562047h)
    (
        r"(?:PLEG is not healthy|container runtime is down)"
        r"(?![^\]\n\"]{0,40}pleg (?:was last seen active 2562047h|has yet to be successful))",
        Kind.NODE_NOT_READY,
    ),
    (
        r"^Status condition transitioned, Type: (?:Ready, Status: \w+ -> (?:False|Unknown)|\w+, Status: \w+ ->"
        r" Unknown, Reason: NodeStatusUnknown)",
        Kind.NODE_NOT_READY,
    ),
)
# The API server refusing a pod's spec for what the namespace allows: Pod Security admission ("violates PodSecurity
# \"restricted:latest\": ..."), a ResourceQuota that needs requests the spec lacks ("failed quota: q: must specify
# cpu,memory", before 1.3 "cpu is limited by quota, must make explicit request"), a LimitRange ("maximum cpu usage
# per Container is 16, but request is 17", "minimum memory usage per Pod is ...", "cpu max limit to request ratio
# per Container is 10, but provided ratio is ...", before 1.3 "Limited to 750Mi memory, but pod has no specified
# memory limit"), a validating webhook's denial ('admission webhook "validation.gatekeeper.sh" denied the
# request: ...'), a ValidatingAdmissionPolicy's (1.26+: "ValidatingAdmissionPolicy 'p' with binding 'b' denied
# request: ..."), PodSecurityPolicy and OpenShift's SCC ("unable to validate against any pod security policy",
# 1.19-1.24's "PodSecurityPolicy: unable to admit pod: [...]", "... security context constraint"), and the spec's own
# validation ('Pod "x" is invalid: ...')
_REFUSED_SPEC = (
    r"violates PodSecurity|failed quota: [^\n]{0,200}must specify|is limited by quota, must make explicit request"
    r"|(?:maximum|minimum) [\w.-]{1,60} usage per (?:Container|Pod) is|max limit to request ratio per (?:Container|Pod)"
    r"|Limited to \S{1,40} \S{1,40}, but pod has no specified|admission webhook \"[^\"\n]{1,200}\" denied the request"
    r"|ValidatingAdmissionPolicy '[^'\n]{1,253}'(?: with binding '[^'\n]{1,253}')? denied request"
    r"|unable to validate against any (?:pod security policy|security context constraint)"
    r"|PodSecurityPolicy: unable to admit pod|\bis invalid: |error looking up service account"
    # the Priority admission plugin: a PriorityClass that does not exist, or a system one outside its namespaces
    r"|no PriorityClass with name \S{1,253} was found|priorityClass is not permitted in \S{1,253} namespace"
    # ... or a spec giving what it computes from the class ("the integer value of priority (%d) must not be provided
    # in pod spec; priority admission controller computed %d ...", the PreemptionPolicy's; 1.8's capitalised form)
    r"|must not be provided in pod spec"
)
# A refusal of another object than a pod, in the words a pasted client error or a policy engine keeps: the API
# server's '<resource>.<group> "name" is forbidden' for another resource (deployments.apps, jobs.batch), Kyverno's
# "resource Deployment/ns/name was blocked", a client's "failed to create deployment" or "failed to delete ...", a
# kubebuilder-scaffolded webhook named for another kind ("mjobset.kb.io", "vpytorchjob.kb.io"; a pod's is
# "mpod.kb.io"). No pod of such an object was ever made: the words are about something else. Not in the messages of
# the controllers that make pods ("Error creating: ...", the StatefulSet's "create Pod ..." and "create Claim ...
# for Pod ..."): whatever webhook refused there refused the pod or what it needs.
_OTHER_OBJECT_REFUSED = (
    r"^(?![^\n]{0,200}?(?:Error creating: |create (?:Pod|Claim) ))[^\n]{0,2000}?(?:"
    r'(?<![\w."-])(?!pods?\b)[a-z][a-z0-9-]{1,62}(?:\.[\w.-]{1,100})? "[^"\n]{0,253}" is forbidden: '
    r"|\bresource (?!Pod/)[A-Z]\w{1,62}/[^\s/]{1,253}/\S{1,253} was blocked"
    r"|\bfailed to (?:create|delete|update|patch|apply) (?![\w -]{0,40}\bpods?\b)[\w -]{1,40}: admission"
    r'|admission webhook "[mv](?!pod)[a-z0-9]{1,60}\.kb\.io" denied)'
)
_CREATE_REFUSED = _rx(
    (_OTHER_OBJECT_REFUSED, Kind.KUBE_EVENT),
    # (Volcano's webhook holding a pod back while its PodGroup waits for resources: "failed to create pod %s as the
    # podgroup phase is Pending")
    (r"exceeded quota|quota is \S{1,40}, current usage is|podgroup phase is Pending", Kind.FAILED_SCHEDULING),
    (_REFUSED_SPEC, Kind.CONFIG_ERROR),
)

# kube-scheduler's cache racing its own bind (scheduler.go: "AssumePod failed: %v"; cache.go: "pod %v(%v) is in the
# cache, so can't be assumed")
_SCHEDULER_RACE = _rx((r"AssumePod failed|is in the cache, so can't be assumed", Kind.KUBE_EVENT))

_IMAGE = r"ErrImagePull|ImagePullBackOff|Failed to pull image|pull access denied|manifest unknown|InvalidImageName|ErrImageNeverPull"


# AKS node-problem-detector's scheduled-events plugins saying they could not ask ("IMDS query failed, exit code: 28",
# curl's timeout) or that nothing is scheduled ("VM has no scheduled event"), under the event's own reason
_AZURE_NOTHING_SCHEDULED = _rx((r"IMDS query failed|\bhas no scheduled event", Kind.KUBE_EVENT))


def _azure(kind: Kind = Kind.MAINTENANCE_NOTICE) -> Reason:
    return Reason(kind, refine=_AZURE_NOTHING_SCHEDULED, provider="azure", notice=True)


def _aws(kind: Kind = Kind.MAINTENANCE_NOTICE) -> Reason:
    return Reason(kind, provider="aws", notice=True)


# AKS node auto-repair's Events about the node, each action's start and end
AKS_AUTO_REPAIR = tuple(
    f"Node{action}{phase}" for action in ("Reboot", "Redeploy", "Reimage") for phase in ("Start", "End")
)


REASONS: dict[str, Reason] = {
    # --- scheduling ---
    "Scheduled": Reason(Kind.POD_SCHEDULED),
    # a claim that does not exist or that nothing binds is the pod's set-up (a missing volume), not capacity
    # ("AssumePod failed: pod ... is in the cache, so can't be assumed": the scheduler's own cache racing a bind it
    # already made, retried, not a shortage)
    "FailedScheduling": Reason(Kind.FAILED_SCHEDULING, refine=(*_MISSING_CLAIM, *_SCHEDULER_RACE)),
    # HAMi's scheduler extender finding no node ("no available node, all node scores do not meet")
    "FilteringFailed": Reason(Kind.FAILED_SCHEDULING),
    # Kueue holding a workload back for quota ("couldn't assign flavors to pod set ...: insufficient unused quota",
    # "Workload no longer fits after processing another workload"): its pods are never created to run
    "Pending": Reason(
        Kind.KUBE_EVENT,
        refine=_rx(
            (r"couldn't assign flavors to pod set|[Ww]orkload (?:no longer fits|didn't fit)", Kind.FAILED_SCHEDULING)
        ),
    ),
    "failedScheduling": Reason(Kind.FAILED_SCHEDULING, refine=_MISSING_CLAIM),  # the reason's spelling before 1.2
    "NotTriggerScaleUp": Reason(Kind.FAILED_SCHEDULING),
    # gang schedulers on the pod group: Volcano ("1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending,
    # 1 minAvailable"; the condition's reason NotEnoughResources), kube-batch ("not enough resource for job")
    "Unschedulable": Reason(Kind.FAILED_SCHEDULING),
    "NotEnoughResources": Reason(Kind.FAILED_SCHEDULING),
    # a controller could not create the pod (the API server refused it): a namespace quota ("... is forbidden:
    # exceeded quota: ...", before 1.3 "cpu quota is 200m, current usage is 200m") holds it back as capacity does;
    # a spec the namespace's policies refuse is never created until it changes (_REFUSED_SPEC); its other
    # refusals (a webhook that cannot be reached, the API server's timeout, "already exists", a namespace
    # terminating) say nothing of the pods
    "FailedCreate": Reason(Kind.KUBE_EVENT, refine=_CREATE_REFUSED),
    # the Kubeflow training operator's own word for it
    "FailedCreatePod": Reason(Kind.KUBE_EVENT, refine=_CREATE_REFUSED),
    "Preempted": Reason(Kind.PREEMPTED),  # default-scheduler, on the victim
    # Volcano's evictor ("Pod is evicted, because of %v", the action: preempt, or a queue's reclaim)
    "Evict": Reason(Kind.KUBE_EVENT, refine=_rx((r"\bbecause of (?:preempt|reclaim)\b", Kind.PREEMPTED))),
    "Preempting": Reason(Kind.PREEMPTED),  # kubelet, critical pod admission
    # the kubelet refusing a pod the scheduler placed (its admission; the pod fails with the same reason):
    # "UnexpectedAdmissionError" (the device plugin could not allocate), "OutOf<resource>" (see classify)
    "UnexpectedAdmissionError": Reason(Kind.POD_FAILED),
    "NodeAffinity": Reason(Kind.POD_FAILED),
    # --- containers ---
    "Started": Reason(Kind.CONTAINER_STARTED),
    # the kubelet kills a container whose postStart hook failed with the message "FailedPostStartHook" (and says
    # FailedPostStartHook "PostStartHook failed" before it, the hook's output kept out since 1.26): the pod's spec
    "Killing": Reason(Kind.KILLING, refine=_rx((r"^FailedPostStartHook$", Kind.CONFIG_ERROR))),
    "FailedPostStartHook": Reason(Kind.CONFIG_ERROR),
    # the GPU Operator's upgrade controller walking a node through a driver upgrade (k8s-operator-libs: "Successfully
    # updated node state label to [pod-deletion-required]", "Deleted workload pods on the node for the driver
    # upgrade", "Successfully drained the node"): its pod-deletion and drain steps delete the node's GPU pods on
    # purpose; its other states (upgrade-required, which a node may keep for weeks, drain-required with drain
    # disabled by default, upgrade-done) and its failures ("Failed to update node state label to ...") do nothing
    # to them
    "GPUDriverUpgrade": Reason(
        Kind.KUBE_EVENT,
        refine=_rx(
            (
                r"^Successfully updated node state label to \[?pod-deletion-required\b"
                r"|^Deleted workload pods on the node for the driver upgrade|^Successfully drained the node",
                Kind.DRAIN,
            )
        ),
    ),
    # the kubelet's own kill (an eviction, a preemption, a node shutdown) slower than its grace period ("Container
    # runtime did not kill the pod within specified grace period."): says the kill was slow, not who ordered it
    "ExceededGracePeriod": Reason(Kind.KUBE_EVENT),
    "BackOff": Reason(Kind.BACK_OFF, refine=_rx((r"pulling image", Kind.IMAGE_PULL_FAILED))),
    # ("failed to reserve container name", a CRI call past its deadline: the runtime busy, the kubelet retries)
    "Failed": Reason(
        Kind.CONFIG_ERROR,
        refine=_rx(
            # no message says nothing: the kubelet always says what failed (JobSet's controller before 0.3 wrote its
            # Failed events with the message lost)
            (r"^\s*$", Kind.KUBE_EVENT),
            (_IMAGE, Kind.IMAGE_PULL_FAILED),
            (r"CreateContainerConfigError", Kind.CONFIG_ERROR),
            # the kubelet's static CPU manager with no exclusive CPUs left for the container ("Internal
            # PreStartContainer hook failed: not enough cpus available to satisfy request"): the node's capacity, as
            # its admission's "OutOfcpu"
            (r"PreStartContainer hook failed: not enough cpus available", Kind.FAILED_SCHEDULING),
            (r"^ReachedMaxRestarts|reaching max number of restarts", Kind.DEADLINE_EXCEEDED),
            # runc's own init killed by the memory limit before the program ran ("container init was OOM-killed
            # (memory limit too low?)"): the limit, as an OOM kill of the program would be
            (r"container init was OOM-killed", Kind.OOM_KILLED),
            (r"failed to reserve container name|context deadline exceeded", Kind.KUBE_EVENT),
            # the runtime's own races the kubelet retries through (runc unable to freeze the cgroup, a sandbox task
            # or its namespaces gone, CRI-O's "kubelet may be retrying requests that are timing out ...
            # name is reserved"): no fault of the pod's spec
            # ... and the NVIDIA container CLI's own timeouts on a busy node (libnvidia-container's 10 s RPC to its Go
            # helper: "nvidia-container-cli: initialization error: nvcgo rpc error: timed out"; the driver's "driver
            # error: timed out")
            (
                r"unable to freeze|no running task found|running lstat on namespace path"
                r"|kubelet may be retrying requests that are timing out"
                r"|nvidia-container-cli: [^\n]{0,200}?\btimed out",
                Kind.KUBE_EVENT,
            ),
        ),
    ),
    # the kubelet before 1.6 reported every failed sync under one reason, the step's own reason in the message
    # ('Error syncing pod, skipping: failed to "StartContainer" for "trainer" with ErrImagePull: ...')
    "FailedSync": Reason(
        Kind.KUBE_EVENT,
        refine=_rx(
            (r"with (?:ErrImagePull|ImagePullBackOff|ErrImageNeverPull|InvalidImageName)\b", Kind.IMAGE_PULL_FAILED),
            (r"with (?:RunContainerError|CreateContainerConfigError|CreateContainerError)\b", Kind.CONFIG_ERROR),
            (r"with CrashLoopBackOff\b", Kind.BACK_OFF),
        ),
    ),
    "ErrImagePull": Reason(Kind.IMAGE_PULL_FAILED),
    "FailedPullImage": Reason(Kind.IMAGE_PULL_FAILED),  # (kubelets of some distributions, for the kubelet's "Failed")
    "ImagePullBackOff": Reason(Kind.IMAGE_PULL_FAILED),
    "ErrImageNeverPull": Reason(
        Kind.IMAGE_PULL_FAILED
    ),  # "Container image %q is not present with pull policy of Never"
    "InspectFailed": Reason(Kind.IMAGE_PULL_FAILED),
    # 'object "ns"/"kube-root-ca.crt" not registered': the kubelet's own object cache not yet filled (a known
    # race it retries through), not a missing volume
    "FailedMount": Reason(
        Kind.CONFIG_ERROR,
        refine=_rx(
            (r'object "[^"]{1,253}"/"[^"]{1,253}" not registered', Kind.KUBE_EVENT),
            # the same cache not filled in time ("failed to sync configmap cache: timed out waiting for the condition")
            (r"failed to sync (?:configmap|secret) cache", Kind.KUBE_EVENT),
            # Cloud Storage FUSE's CSI driver relaying its sidecar's end ("the sidecar container terminated due to
            # %v, exit code: %v": OOMKilled, Error, ContainerStatusUnknown after the node went): that container's
            # own status in the pod says what ended it; the mount says nothing of the volume's configuration
            (r"the sidecar container terminated due to", Kind.KUBE_EVENT),
        ),
    ),
    "FailedAttachVolume": Reason(Kind.CONFIG_ERROR),
    # a raw block volume (volumeDevices) the kubelet cannot map into the pod ("MapVolume.SetUp failed",
    # "MapVolume.EvalHostSymlinks failed", "MapVolume.MapPodDevice failed"): the block device's FailedMount
    "FailedMapVolume": Reason(Kind.CONFIG_ERROR),
    # Dynamic Resource Allocation: the kubelet cannot prepare a claim's devices, or the claim controller cannot make
    # the pod's claim (its template missing): like a volume that cannot be mounted, the pod cannot start
    "FailedPrepareDynamicResources": Reason(Kind.CONFIG_ERROR),
    # a DRA driver's own Event on the claim it could not prepare (dranet: "failed to get netlink to interface
    # dummy0: Link not found"); dranet records it on the ResourceClaim, which nothing here ties to a pod yet: such a
    # pod is told by the kubelet's FailedPrepareDynamicResources on it
    "ClaimPrepareFailed": Reason(Kind.CONFIG_ERROR),
    "FailedResourceClaimCreation": Reason(Kind.CONFIG_ERROR),
    # "unable to ensure pod container exists: ...": the pod's cgroup the kubelet could not make (its QoS slice
    # missing a moment, systemd busy): the node's, retried
    "FailedCreatePodContainer": Reason(Kind.KUBE_EVENT),
    # a sandbox the node's runtime cannot make for the pod's RuntimeClass (containerd: 'no runtime for "nvidia" is
    # configured', dockershim and CRI-O: 'RuntimeHandler "nvidia" not supported', the NVIDIA runtime's binary
    # missing where containerd's config points) is the pod's set-up against its node, and so is a network its
    # attachments cannot give it: a CNI plugin's binary missing (libcni: 'failed to find plugin "multus" in path
    # [...]'), an address pool with none left (host-local "no IP addresses available in range set", whereabouts
    # "Could not allocate IP in range", Cilium's IPAM "range is full"), an SR-IOV VF the plugin cannot configure
    # ("SRIOV-CNI failed to configure VF", "... to load netconf", the InfiniBand plugin's "SRI-OV CNI failed to
    # configure VF"); other sandbox failures (the CNI not ready yet, a restarting runtime) pass and stay Events
    "FailedCreatePodSandBox": Reason(
        Kind.KUBE_EVENT,
        refine=_rx(
            (
                r'no runtime for "[^"]*" is configured|RuntimeHandler "?[\w.-]+"? not supported'
                # the runtime the node's containerd config names is not installed on it (fork/exec of the binary)
                r"|fork/exec \S{0,200}nvidia-container-runtime\S{0,40}: no such file or directory"
                r'|exec: "[\w.-]{0,60}runc": executable file not found in \$PATH'
                r'|failed to find plugin "[^"]{1,100}" in path'
                r"|no IP addresses available in range set|Could not allocate IP in range|\brange is full\b"
                r"|SRI-?OV[ -]CNI failed to (?:configure VF|load netconf)"
                # a pod asking for a user namespace of a runtime without them ("can't set `spec.hostUsers: false`,
                # runtime does not support user namespaces")
                r"|runtime does not support user namespaces"
                # ... or a runtime or snapshotter that cannot build its id-mapped root (CRI-O's "create mapped mount
                # for %q on %q: %w", containerd's "container ID %d cannot be mapped to a host ID")
                # (containers/storage 1.56+ names the call: "...: mount_setattr %s: invalid argument"; composefs's
                # has no " on ")
                r"|create mapped mount for \S{1,300}(?: on \S{1,300})?: (?:mount_setattr \S{1,300}: )?"
                r"(?:invalid argument|operation not permitted)|cannot be mapped to a host ID",
                Kind.CONFIG_ERROR,
            )
        ),
    ),
    # "%s probe errored: %v": the kubelet could not run the probe and throws the result away (prober worker):
    # no failure counted, no restart; "%s probe failed: %s" is the one that counts (anywhere in the message: an
    # archiver or an old kubectl may put its source column before it)
    "Unhealthy": Reason(
        Kind.PROBE_FAILED, refine=_rx((r"\b(?:liveness|readiness|startup) probe errored", Kind.KUBE_EVENT))
    ),
    "OOMKilled": Reason(Kind.OOM_KILLED),
    # --- pod endings ---
    # the kubelet's pressure eviction; Karpenter (drift, consolidation) writes "Evicted pod: <node> drifted" for
    # its own Eviction API calls, which are a controller's stop, not a node running out of a resource
    "Evicted": Reason(
        Kind.EVICTED, _rx((r"^Evicted pod\b|\b(?:drifted|consolidat\w*|underutilized)\b", Kind.EVICTION_API))
    ),
    # the taint manager's "Marking for deletion Pod %s", and "Cancelling deletion of Pod %s" when the taint went
    "TaintManagerEviction": Reason(Kind.TAINT_EVICTION, refine=_rx((r"^Cancelling deletion", Kind.KUBE_EVENT))),
    "NodeControllerEviction": Reason(Kind.TAINT_EVICTION),  # the node controller's, before the taint manager
    "PodEviction": Reason(Kind.EVICTION_API),  # aws-node-termination-handler draining
    # the descheduler evicting by its policy through the Eviction API ("pod evicted by sigs.k8s.io/descheduler...")
    "Descheduled": Reason(Kind.EVICTION_API),
    # Kueue taking an admitted workload back (its pods deleted, the Job suspended) for a reason of its own: the
    # PodsReady timeout, a failed admission check, a stopped queue, a deactivated workload
    "EvictedDueToPodsReadyTimeout": Reason(Kind.EVICTION_API),
    # ... or to make room for another workload ("Preempted to accommodate a workload (UID: ...) due to ..."), the
    # event Kueue records beside its "Preempted"
    "EvictedDueToPreempted": Reason(Kind.PREEMPTED),
    "EvictedDueToAdmissionCheck": Reason(Kind.EVICTION_API),
    "EvictedDueToClusterQueueStopped": Reason(Kind.EVICTION_API),
    "EvictedDueToLocalQueueStopped": Reason(Kind.EVICTION_API),
    "EvictedDueToDeactivated": Reason(Kind.EVICTION_API),
    "EvictedDueToInactiveWorkload": Reason(Kind.EVICTION_API),
    # ... or for a node of its topology-aware placement gone unhealthy with no replacement ("Workload was evicted as
    # there was no replacement for unhealthy node(s): %s")
    "EvictedDueToNodeFailures": Reason(Kind.EVICTION_API),
    # and on the pod it stops (jobframework's "Stopped", with the eviction's message)
    "Stopped": Reason(
        Kind.KUBE_EVENT,
        refine=_rx(
            (r"^Preempted to accommodate", Kind.PREEMPTED),
            (
                r"^Exceeded the PodsReady timeout|^No matching Workload|^Not admitted|^The workload is deactivated"
                r"|^Workload evicted|^Workload was evicted",
                Kind.EVICTION_API,
            ),
        ),
    ),
    "EvictionByEvictionAPI": Reason(Kind.EVICTION_API),
    "DeadlineExceeded": Reason(Kind.DEADLINE_EXCEEDED),
    "BackoffLimitExceeded": Reason(Kind.DEADLINE_EXCEEDED),
    # JobSet out of restarts ("jobset failed due to reaching max number of restarts"; before v0.5 the event's reason
    # was "Failed" and its message "ReachedMaxRestarts%!(EXTRA string=...)")
    "ReachedMaxRestarts": Reason(Kind.DEADLINE_EXCEEDED),
    # (a FailJob rule matched the named pod's own exit code: "Container %s for pod %s/%s failed with exit code %v
    # matching %v rule at index %d": an exit code its users declared a failure of the program not worth retrying,
    # the docs' "software bug"; the others' end is the Job's)
    "PodFailurePolicy": Reason(
        Kind.DEADLINE_EXCEEDED,
        refine=_rx((r"^Container \S{1,253} for pod \S{1,320} failed with exit code \d", Kind.APP_EXCEPTION)),
    ),
    # an Indexed Job's backoff limit per index (1.28+): "Job has failed indexes" once its indexes ran out of retries,
    # "Job has exceeded the specified maximal number of failed indexes" at maxFailedIndexes
    "FailedIndexes": Reason(Kind.DEADLINE_EXCEEDED),
    "MaxFailedIndexesExceeded": Reason(Kind.DEADLINE_EXCEEDED),
    "Completed": Reason(Kind.JOB_COMPLETED),
    "AllJobsCompleted": Reason(Kind.JOB_COMPLETED),  # JobSet
    # the Kubeflow training operator's per-kind success ("TFJob %s successfully completed.")
    **{
        f"{kind}JobSucceeded": Reason(Kind.JOB_COMPLETED)
        for kind in ("TF", "PyTorch", "MPI", "XGBoost", "Paddle", "MX", "JAX")
    },
    "SuccessfulDelete": Reason(Kind.POD_DELETED),
    "SuccessfulDeletePod": Reason(Kind.POD_DELETED),  # training-operator
    # --- nodes: kubelet and node controller ---
    "NodeNotReady": Reason(Kind.NODE_NOT_READY),
    "NodeStatusUnknown": Reason(Kind.NODE_NOT_READY),  # the node controller's Ready=Unknown: the kubelet went silent
    "NodeReady": Reason(Kind.NODE_READY),
    "NodeNotSchedulable": Reason(Kind.NODE_CORDONED),
    "NodeSchedulable": Reason(Kind.NODE_UNCORDONED),
    "Rebooted": Reason(Kind.NODE_REBOOTED),
    # AKS node auto-repair, which acts only on a node NotReady for more than five minutes (no notice before it):
    # NodeRebootStart "Node auto-repair is initiating a reboot action due to NotReady status persisting ...",
    # NodeRebootEnd, and the same for its redeploy and reimage actions
    **dict.fromkeys(AKS_AUTO_REPAIR, Reason(Kind.NODE_REBOOTED)),
    "EvictionThresholdMet": Reason(Kind.NODE_PRESSURE),
    "NodeHasInsufficientMemory": Reason(Kind.NODE_PRESSURE),
    "NodeHasDiskPressure": Reason(Kind.NODE_PRESSURE),
    "NodeHasInsufficientPID": Reason(Kind.NODE_PRESSURE),
    "RemovingNode": Reason(Kind.NODE_DELETED),
    "DeletingNode": Reason(Kind.NODE_DELETED),
    "NodeLost": Reason(Kind.NODE_DELETED),
    "DeletingAllPods": Reason(Kind.NODE_DELETED),
    "TerminatingEvictedPod": Reason(Kind.NODE_DELETED),
    "Shutdown": Reason(Kind.NODE_SHUTDOWN),
    "NodeShutdown": Reason(Kind.NODE_SHUTDOWN),
    # --- node-problem-detector ---
    "OOMKilling": Reason(Kind.KERNEL_OOM),
    # the kubelet's own word for a node-wide OOM kill ("System OOM encountered, victim process: %s, pid: %d")
    "SystemOOM": Reason(Kind.KERNEL_OOM),
    # the kernel crashed ("KernelPanic" of a kernel-monitor rule, reported after the node came back)
    "KernelPanic": Reason(Kind.NODE_REBOOTED),
    "TaskHung": Reason(Kind.NODE_CONDITION),
    "KernelOops": Reason(Kind.NODE_CONDITION, refine=_RELAYED),
    "DockerHung": Reason(Kind.NODE_CONDITION),
    "CperHardwareErrorFatal": Reason(Kind.NODE_CONDITION),
    # NVSentinel / DCGM health watches as node conditions and events ("GpuThermalMarginWatchIsNotHealthy",
    # "GpuXidWatchIsNotHealthy", ...): the thermal ones are heat, the rest a GPU condition on the node
    "GpuThermalMarginWatchIsNotHealthy": Reason(Kind.GPU_THERMAL),
    "GpuThermalWatchIsNotHealthy": Reason(Kind.GPU_THERMAL),
    "GpuPowerWatchIsNotHealthy": Reason(Kind.GPU_POWER_VIOLATION),
    # --- Azure scheduled events through AKS node-problem-detector ---
    "RebootScheduled": _azure(),
    "FreezeScheduled": _azure(),
    "RedeployScheduled": _azure(),
    "TerminateScheduled": _azure(),
    "PreemptScheduled": _azure(Kind.SPOT_INTERRUPTION),
    "VMEventScheduled": _azure(),
    "PreemptionScheduled": _azure(Kind.SPOT_INTERRUPTION),
    "SpotEvictionIncoming": _azure(Kind.SPOT_INTERRUPTION),
    # --- aws-node-termination-handler ---
    "SpotInterruption": _aws(Kind.SPOT_INTERRUPTION),
    "ScheduledEvent": _aws(),
    "RebalanceRecommendation": _aws(Kind.REBALANCE_RECOMMENDATION),
    "SQSTermination": Reason(Kind.MAINTENANCE_NOTICE, _rx((r"spot", Kind.SPOT_INTERRUPTION)), "aws", True),
    "ASGLifecycle": _aws(Kind.DRAIN),
    "StateChange": _aws(Kind.NODE_SHUTDOWN),
    "UnknownInterruption": _aws(),
    "CordonAndDrain": Reason(Kind.DRAIN),
    "Drain": Reason(Kind.DRAIN),  # AKS upgrades: "Draining node: [...]"
    "PreDrain": Reason(Kind.DRAIN),
    "PostDrain": Reason(Kind.DRAIN),
    "Cordon": Reason(Kind.NODE_CORDONED),
    "Uncordon": Reason(Kind.NODE_UNCORDONED),
    # --- Karpenter: its disruption controller (drift, consolidation, emptiness, expiry: "Disrupting Node:
    # Drifted"), a controller's own stop, and the AWS provider's interruption controller relaying EC2's notices ---
    "DisruptionTerminating": Reason(Kind.DRAIN),
    "SpotInterrupted": _aws(Kind.SPOT_INTERRUPTION),
    "SpotRebalanceRecommendation": _aws(Kind.REBALANCE_RECOMMENDATION),
    "InstanceUnhealthy": _aws(),  # an AWS Health scheduled change for the instance
    "InstanceStopping": _aws(Kind.NODE_SHUTDOWN),
    "InstanceTerminating": _aws(Kind.NODE_SHUTDOWN),
    "TerminatingOnInterruption": Reason(Kind.DRAIN),
    # --- GKE ---
    "ImpendingNodeTermination": Reason(Kind.MAINTENANCE_NOTICE, provider="gcp", notice=True),
    "MaintenanceWindowStarted": Reason(Kind.MAINTENANCE_NOTICE, provider="gcp", notice=True),
    "UpcomingMaintenance": Reason(Kind.MAINTENANCE_NOTICE, provider="gcp", notice=True),
    "PreemptibleNodeTermination": Reason(Kind.SPOT_INTERRUPTION, provider="gcp", notice=True),
    # --- cluster-autoscaler ---
    "ScaleDown": Reason(Kind.DRAIN),
    "ScaleDownEmpty": Reason(Kind.NODE_DELETED),
}

# Warnings on a node whose reason is not above: a custom node-problem-detector rule is still a node problem.
NODE_DEFAULT = Reason(Kind.NODE_CONDITION, refine=_RELAYED)
# Everything else stays on the timeline as what it is, a Kubernetes Event (Pulled, FailedCreatePodSandBox, ...).
OTHER = Reason(Kind.KUBE_EVENT, refine=_RELAYED)

# Components that tell which cloud a notice came from when the reason alone does not.
PROVIDER_BY_COMPONENT: tuple[tuple[str, str], ...] = (
    ("aws-node-termination-handler", "aws"),
    ("scheduledevents", "azure"),
    ("azure", "azure"),
    ("gke", "gcp"),
    ("gce", "gcp"),
    ("google", "gcp"),
)

# DisruptionTarget condition reasons that also name a more specific happening.
DISRUPTION_KINDS: dict[str, Kind] = {
    "EvictionByEvictionAPI": Kind.EVICTION_API,
    "PreemptionByScheduler": Kind.PREEMPTED,
    "PreemptionByKubeScheduler": Kind.PREEMPTED,  # 1.26-1.27
    "DeletionByTaintManager": Kind.TAINT_EVICTION,
    "DeletionByPodGC": Kind.NODE_DELETED,
    "DeletionByGCPControllerManager": Kind.NODE_DELETED,  # GKE: "GCPControllerManager: node no longer exists"
    # Kueue's TerminationTarget condition: v0.5-v0.6's "StoppedByKueue", v0.7+'s reason of the workload's eviction
    # ("WorkloadEvictedDueToPodsReadyTimeout", "...DueToPreempted", "WorkloadDeleted", "NoMatchingWorkload",
    # "NotAdmitted"); a preemption where it says so (pods.py)
    "StoppedByKueue": Kind.EVICTION_API,
    "WorkloadEvicted": Kind.EVICTION_API,
    "WorkloadDeleted": Kind.EVICTION_API,
    "NoMatchingWorkload": Kind.EVICTION_API,
    "NotAdmitted": Kind.EVICTION_API,
}

# Pod status.reason -> kind (anything else on a failed pod is POD_FAILED).
POD_STATUS_KINDS: dict[str, Kind] = {
    "Evicted": Kind.EVICTED,
    "DeadlineExceeded": Kind.DEADLINE_EXCEEDED,
    "Preempting": Kind.PREEMPTED,
    "Terminated": Kind.NODE_SHUTDOWN,
    "Shutdown": Kind.NODE_SHUTDOWN,
    "NodeShutdown": Kind.NODE_SHUTDOWN,
    "NodeLost": Kind.NODE_NOT_READY,
    # Apache YuniKorn's shim failing a pod whose application the scheduler refused ("application 'x' rejected,
    # cannot create queue 'root.x' without placement rules"): the queue it names is not the scheduler's, a spec
    # the pod will never run with
    "ApplicationRejected": Kind.CONFIG_ERROR,
}

# A service mesh's own proxy containers: their postStart hook waits for the proxy to be ready (Istio's "pilot-agent
# wait", Linkerd's linkerd-await), and its failure, or the kill after it, is the mesh's control plane slow, not the
# pod's spec (since 1.26 the Event's message is only "PostStartHook failed": the container is in its fieldPath)
MESH_PROXIES = frozenset({"istio-proxy", "linkerd-proxy"})

# Node condition types that mean the kubelet may evict, and the resource each names.
PRESSURE: dict[str, str] = {"MemoryPressure": "memory", "DiskPressure": "disk", "PIDPressure": "pid"}

# Container waiting reasons worth a timeline entry.
WAITING_KINDS: dict[str, Kind] = {
    "CrashLoopBackOff": Kind.BACK_OFF,
    "ImagePullBackOff": Kind.IMAGE_PULL_FAILED,
    "ErrImagePull": Kind.IMAGE_PULL_FAILED,
    "InvalidImageName": Kind.IMAGE_PULL_FAILED,
    "ErrImageNeverPull": Kind.IMAGE_PULL_FAILED,  # imagePullPolicy Never, and the image not on the node
    "CreateContainerConfigError": Kind.CONFIG_ERROR,
    "CreateContainerError": Kind.CONFIG_ERROR,
    "RunContainerError": Kind.CONFIG_ERROR,
    "PostStartHookError": Kind.CONFIG_ERROR,  # kubecontainer.ErrPostStartHook: the hook failed, the container killed
}


# Reasons that carry a number: the EKS node monitoring agent's Events for each Xid it classifies
# (eks-node-monitoring-agent: NvidiaXID<code>Error sets its condition, NvidiaXID<code>Warning is an Event only).
XID_REASON = re.compile(r"^NvidiaXID(\d{1,3})(?:Error|Warning)$")


_XID_ROW = Reason(Kind.GPU_XID)
# "OutOfcpu", "OutOfnvidia.com/gpu", "OutOfpods": the kubelet's admission found less than the scheduler counted
ADMISSION_SHORTAGE = "OutOf"
_ADMISSION_ROW = Reason(Kind.POD_FAILED)


def xid_in_reason(reason: str) -> int | None:
    found = XID_REASON.match(reason)
    return int(found.group(1)) if found else None


def _unlisted(reason: str, warning_on_node: bool) -> Reason:
    """The row of a reason not in REASONS: by its shape (an Xid in it, an admission shortage), else by where."""
    if XID_REASON.match(reason):
        return _XID_ROW
    if reason.startswith(ADMISSION_SHORTAGE):
        return _ADMISSION_ROW
    return NODE_DEFAULT if warning_on_node else OTHER


def classify(reason: str, message: str, warning_on_node: bool) -> tuple[Kind, Reason]:
    """The kind an event reason means, refined by its message."""
    row = REASONS.get(reason) or _unlisted(reason, warning_on_node)
    for pattern, kind in row.refine:
        if pattern.search(message):
            return kind, row
    return row.kind, row


def provider_from(component: str, message: str) -> str | None:
    lowered = f"{component} {message}".lower()
    for needle, provider in PROVIDER_BY_COMPONENT:
        if needle in lowered:
            return provider
    return None
