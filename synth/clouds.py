"""GPU node pools as the clouds name and label them: AKS VM scale sets, EKS instances, GKE node pools, on-prem DGX.

Names, providerIDs, instance types, GPU models, PCI bus ids and OS images follow each provider's real patterns,
so the product is exercised on the shapes it will meet rather than on one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from synth.ids import Ids
from synth.spec import Gpu, Node


@dataclass(frozen=True, slots=True)
class GpuModel:
    product: str  # nvidia.com/gpu.product label
    model_name: str  # DCGM modelName


H100 = GpuModel("NVIDIA-H100-80GB-HBM3", "NVIDIA H100 80GB HBM3")
H200 = GpuModel("NVIDIA-H200", "NVIDIA H200")
A100 = GpuModel("NVIDIA-A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB")
L40S = GpuModel("NVIDIA-L40S", "NVIDIA L40S")


@dataclass(frozen=True, slots=True)
class Flavor:
    cloud: str
    instance_type: str
    model: GpuModel
    gpus: int
    buses: tuple[str, ...]  # PCI bus of each GPU, as DCGM prints it
    cpu: str
    memory: str
    os_image: str
    kernel: str
    kubelet: str
    region: str
    zone: str


_HGX_BUSES = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")
_P5_BUSES = ("53", "64", "75", "86", "97", "a8", "b9", "ca")
_A3_BUSES = ("04", "05", "0a", "0b", "84", "85", "8a", "8b")
_A100_BUSES = ("07", "0f", "47", "4e", "87", "90", "b7", "bd")
_UBUNTU_AKS = ("Ubuntu 22.04.5 LTS", "5.15.0-1073-azure")
_AL2023 = ("Amazon Linux 2023.6.20241121", "6.1.115-126.197.amzn2023.x86_64")
_COS = ("Container-Optimized OS from Google", "6.1.100+")
_UBUNTU = ("Ubuntu 22.04.4 LTS", "5.15.0-119-generic")

FLAVORS: dict[str, Flavor] = {
    "aks-h100": Flavor(
        "azure",
        "Standard_ND96isr_H100_v5",
        H100,
        8,
        _HGX_BUSES,
        "96",
        "1900Gi",
        *_UBUNTU_AKS,
        "v1.30.6",
        "eastus",
        "eastus-1",
    ),
    "aks-a100": Flavor(
        "azure",
        "Standard_ND96amsr_A100_v4",
        A100,
        8,
        _A100_BUSES,
        "96",
        "1900Gi",
        *_UBUNTU_AKS,
        "v1.29.9",
        "southcentralus",
        "southcentralus-2",
    ),
    "eks-p5": Flavor(
        "aws",
        "p5.48xlarge",
        H100,
        8,
        _P5_BUSES,
        "192",
        "2002Gi",
        *_AL2023,
        "v1.31.2-eks-94953ac",
        "us-west-2",
        "us-west-2b",
    ),
    "eks-g6e": Flavor(
        "aws",
        "g6e.12xlarge",
        L40S,
        4,
        ("38", "3a", "3c", "3e"),
        "48",
        "371Gi",
        *_AL2023,
        "v1.31.2-eks-94953ac",
        "us-east-1",
        "us-east-1c",
    ),
    "gke-a3": Flavor(
        "gcp",
        "a3-highgpu-8g",
        H100,
        8,
        _A3_BUSES,
        "208",
        "1843Gi",
        *_COS,
        "v1.31.3-gke.1162000",
        "us-central1",
        "us-central1-a",
    ),
    "gke-a3mega": Flavor(
        "gcp",
        "a3-megagpu-8g",
        H100,
        8,
        _A3_BUSES,
        "208",
        "1843Gi",
        *_COS,
        "v1.31.3-gke.1162000",
        "europe-west4",
        "europe-west4-b",
    ),
    "gke-a2": Flavor(
        "gcp",
        "a2-ultragpu-8g",
        A100,
        8,
        _A100_BUSES,
        "96",
        "1300Gi",
        *_COS,
        "v1.30.5-gke.1443001",
        "us-east4",
        "us-east4-c",
    ),
    "onprem-h200": Flavor(
        "onprem", "dgx-h200", H200, 8, _HGX_BUSES, "224", "2015Gi", *_UBUNTU, "v1.30.4", "dc1", "rack-b07"
    ),
    "onprem-a100": Flavor(
        "onprem", "dgx-a100", A100, 8, _A100_BUSES, "256", "1007Gi", *_UBUNTU, "v1.26.15", "dc2", "rack-c02"
    ),
}


def _base36(n: int, width: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(width, "0")


def _gpus(ids: Ids, node: str, flavor: Flavor) -> tuple[Gpu, ...]:
    gpus = []
    for i, bus in enumerate(flavor.buses[: flavor.gpus]):
        # Azure VMs see each GPU in its own PCI domain; bare metal and the other clouds use domain 0.
        pci = f"0000{i + 1:04x}:00:00.0" if flavor.cloud == "azure" else f"00000000:{bus}:00.0"
        gpus.append(Gpu(index=i, uuid=ids.gpu_uuid(node, i), pci_bus_id=pci))
    return tuple(gpus)


def _identity(ids: Ids, flavor: Flavor, pool: str, cluster: str, index: int) -> tuple[str, str, str | None]:
    """Name, internal IP and providerID of the index-th node of a pool."""
    if flavor.cloud == "azure":
        scale_set = f"aks-{pool}-{ids.number(10_000_000, 99_999_999, cluster, pool)}-vmss"
        name = f"{scale_set}{_base36(index, 6)}"
        rg = f"MC_rg-{cluster}_{cluster}_{flavor.region}"
        sub = ids.uuid("subscription", cluster)
        pid = f"azure:///subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{scale_set}/virtualMachines/{index}"
        return name, f"10.224.{index // 250}.{index % 250 + 4}", pid
    if flavor.cloud == "aws":
        third, fourth = 32 + index // 250, (index * 7 + ids.number(1, 200, pool)) % 250 + 4
        ip = f"10.1.{third}.{fourth}"
        domain = "ec2.internal" if flavor.region == "us-east-1" else f"{flavor.region}.compute.internal"
        instance = "i-0" + ids.hex("instance", cluster, pool, index, length=16)
        return f"ip-{ip.replace('.', '-')}.{domain}", ip, f"aws:///{flavor.zone}/{instance}"
    if flavor.cloud == "gcp":
        group = ids.hex("mig", cluster, pool, length=8)
        name = f"gke-{cluster}-{pool}-{group}-{ids.suffix('gce', cluster, pool, index, length=4)}"
        return name, f"10.128.{index // 250}.{index % 250 + 2}", f"gce://{cluster}-proj/{flavor.zone}/{name}"
    rack = 7 + index // 16
    return f"{pool}-r{rack:02d}-n{index % 16 + 1:02d}", f"10.40.{rack}.{index % 16 + 11}", None


def _labels(flavor: Flavor, pool: str, name: str, cluster: str) -> tuple[tuple[str, str], ...]:
    labels = [
        ("kubernetes.io/hostname", name),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("node.kubernetes.io/instance-type", flavor.instance_type),
        ("topology.kubernetes.io/region", flavor.region),
        ("topology.kubernetes.io/zone", flavor.zone),
        ("nvidia.com/gpu.product", flavor.model.product),
        ("nvidia.com/gpu.count", str(flavor.gpus)),
    ]
    if flavor.cloud == "azure":
        labels += [
            ("agentpool", pool),
            ("kubernetes.azure.com/agentpool", pool),
            ("kubernetes.azure.com/cluster", f"MC_rg-{cluster}"),
        ]
    elif flavor.cloud == "aws":
        labels += [("eks.amazonaws.com/nodegroup", pool), ("eks.amazonaws.com/capacityType", "ON_DEMAND")]
    elif flavor.cloud == "gcp":
        labels += [
            ("cloud.google.com/gke-nodepool", pool),
            ("cloud.google.com/gke-accelerator", flavor.model.product.lower()),
        ]
    else:
        labels += [("nvidia.com/gpu.deploy.dcgm-exporter", "true"), ("pool", pool)]
    return tuple(labels)


def make_nodes(
    ids: Ids, flavor_name: str, count: int, *, pool: str, cluster: str, created: datetime, first: int = 0
) -> list[Node]:
    flavor = FLAVORS[flavor_name]
    nodes = []
    for index in range(first, first + count):
        name, ip, provider_id = _identity(ids, flavor, pool, cluster, index)
        nodes.append(
            Node(
                name=name,
                ip=ip,
                cloud=flavor.cloud,
                provider_id=provider_id,
                instance_type=flavor.instance_type,
                zone=flavor.zone,
                gpu_product=flavor.model.product,
                model_name=flavor.model.model_name,
                gpus=_gpus(ids, name, flavor),
                cpu=flavor.cpu,
                memory=flavor.memory,
                labels=_labels(flavor, pool, name, cluster),
                kubelet_version=flavor.kubelet,
                kernel_version=flavor.kernel,
                os_image=flavor.os_image,
                created=created - timedelta(days=ids.number(3, 40, name)),
                pod_cidr=f"10.244.{index % 250}.0/24",
            )
        )
    return nodes
