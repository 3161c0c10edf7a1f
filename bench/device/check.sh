#!/usr/bin/env bash
# The exporter's NVML path and real GPU failure texts, on a machine with an NVIDIA GPU. Writes into $OUT (default
# ./device-out): env.txt, nvml.json, metrics.txt,
# metrics-after-fault.txt, exporter.log, faults.txt, kernel.txt. Needs the project's wheel and any of
# its needs the machine lacks in .whl/ (bench/README.md says how they were made; FAULTS_ONLY=1 needs neither). 2 to 4 minutes on one H100.
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
{
  date -u; uname -a
  nvidia-smi --query-gpu=name,driver_version,ecc.mode.current,pci.bus_id,vbios_version --format=csv
  nvidia-smi -q -d ECC,ROW_REMAPPER,PERFORMANCE,PAGE_RETIREMENT
  python3 -c 'import sys, torch, pynvml, prometheus_client; print(sys.version); print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version()); print("nvidia-ml-py", getattr(pynvml, "__version__", "?")); print("prometheus_client", prometheus_client.__file__)'
  python3 -m pip list 2>/dev/null | grep -i -E '^(cupy|nvidia-ml-py|nvidia-nccl|torch |typer|rich|httpx|prometheus)'
} > "$OUT/env.txt" 2>&1

CASES=${CASES:-nccl-timeout oom illegal-address device-assert nccl-duplicate child-exception child-sigkill}
faults() {  # each case's words into faults.txt, then the kernel's log (the driver's NVRM Xid lines) into kernel.txt
  for case in $CASES; do
    echo "===== $case"
    start=$(date +%s)
    timeout 170 python3 bench/device/faults.py $case 2>&1
    echo "===== $case rc=$? seconds=$(( $(date +%s) - start ))"
  done > "$OUT/faults.txt" 2>&1
  { dmesg 2>&1 || journalctl -k --no-pager 2>&1; } | tail -300 > "$OUT/kernel.txt"
}
if [ -n "${FAULTS_ONLY:-}" ]; then  # a second look: the fault cases and the kernel's lines only
  faults
  exit 0
fi

python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site

timeout 120 python3 bench/device/nvml_probe.py > "$OUT/nvml.json" 2> "$OUT/nvml.stderr"
echo "nvml probe rc=$?"

# The exporter as a node runs it: no metadata service reachable here (port 9 refuses), GPU health from NVML; a
# real fault while it runs must show in its own /metrics. (Run from /tmp: the source tree would shadow the install.)
(cd /tmp && exec python3 -c 'from whathappened.cli.main import run; run()' exporter --host 127.0.0.1 --port 9977 \
  --metadata-url http://127.0.0.1:9 --poll-interval 2s --node device-node) > "$OUT/exporter.log" 2>&1 &
exporter=$!
scrape() {  # scrape FILE NEEDLE: /metrics into FILE once NEEDLE shows (60 s at most), /healthz after it
  python3 - "$1" "$2" <<'PY'
import sys, time, urllib.request
deadline, body = time.monotonic() + 60, "exporter never answered"
while time.monotonic() < deadline:
    try:
        body = urllib.request.urlopen("http://127.0.0.1:9977/metrics", timeout=2).read().decode()
        if sys.argv[2] in body:
            break
    except OSError:
        pass
    time.sleep(0.5)
try:
    health = urllib.request.urlopen("http://127.0.0.1:9977/healthz", timeout=2).read().decode()
except OSError as exc:
    health = f"healthz: {exc}"
open(sys.argv[1], "w").write(body + "\n# healthz: " + health + "\n")
PY
}
scrape "$OUT/metrics.txt" "whathappened_gpu_throttle_active{"  # a sample, not the family's HELP line
timeout 60 python3 bench/device/faults.py illegal-address > /dev/null 2>&1
scrape "$OUT/metrics-after-fault.txt" 'xid="31"'
kill $exporter; wait $exporter
echo "exporter rc=$?"

faults
echo done
