"""Collectives child: runs in the *target* interpreter, never in rocm-doctor's own process.

Stand-alone (stdlib + torch only; run by path, so the target interpreter does not need rocm-doctor installed).
It reads a JSON payload on stdin and prints one JSON object per line with the key "coll", flushed, so the parent
knows what each rank was doing when it hung or died.

Modes (payload["mode"]):
- "probe": torch, vendor, GPU count and names; with payload["peers"] the peer-access matrix
  (torch.cuda.can_device_access_peer) and a timed copy for every ordered pair of GPUs.
- "rank": one rank of a process group (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT from the
  environment): init (nccl on GPUs, which is RCCL on ROCm; gloo on CPU) with a timeout, then all-reduce,
  all-gather and broadcast over the size sweep: warm-up, a timed loop, and a correctness pass against values
  computed from known per-rank inputs; plus one all-reduce of fresh random data checked against a reference sum
  computed on the CPU.

Timing (as nccl-tests' default, non-blocking): barrier, `warmup` launches, synchronize, barrier, host clock
around `iters` back-to-back launches and one synchronize at the end; time = elapsed / iters.

Test-only fault switch, read only here: ROCM_DOCTOR_TEST_FAULT=stall:rank1 (that rank stops before its first
collective after init and sleeps), corrupt:rank2 (that rank's contribution in the correctness passes is off by
0.5). An optional "@OP" limits the stall to the first collective of that op, e.g. stall:rank1@all_gather.
"""

import functools
import importlib.util
import os
import socket
import sys
import time
import traceback


def _load_childlib():
    """The shared child library, by path: the target interpreter need not have rocm-doctor installed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "_childlib.py")
    spec = importlib.util.spec_from_file_location("_doctor_childlib", os.path.normpath(path))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


childlib = _load_childlib()
emit = childlib.Emitter("coll")
error_text = functools.partial(childlib.error_text, limit=2000, bare_type=True)

FAULT_ENV = "ROCM_DOCTOR_TEST_FAULT"
PATTERN_PERIOD = 13
PATTERN_STEP = 16.0


def parse_fault(rank):
    """(kind, op) of the test fault aimed at this rank, else (None, None)."""
    spec = os.environ.get(FAULT_ENV, "").strip()
    if not spec or ":" not in spec:
        return None, None
    kind, _, target = spec.partition(":")
    target, _, op = target.partition("@")
    if target != f"rank{rank}":
        return None, None
    return kind, (op or None)


def vendor_of(torch):
    version = getattr(torch, "version", None)
    if getattr(version, "hip", None):
        return "amd"
    if getattr(version, "cuda", None):
        return "nvidia"
    return None


def nccl_version(torch):
    try:
        version = torch.cuda.nccl.version()
    except Exception:
        return None
    if isinstance(version, tuple):
        return ".".join(str(v) for v in version)
    return str(version)


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# ---------------------------------------------------------------------------------------------- probe mode


def probe(payload):
    import torch

    emit("import", torch=torch.__version__, cuda=getattr(torch.version, "cuda", None),
         hip=getattr(torch.version, "hip", None), vendor=vendor_of(torch), nccl=nccl_version(torch))
    try:
        import torch.distributed as dist

        backends = {"available": dist.is_available(), "nccl": dist.is_available() and dist.is_nccl_available(),
                    "gloo": dist.is_available() and dist.is_gloo_available()}
    except Exception as exc:
        backends = {"available": False, "error": error_text(exc)}
    available = False
    try:
        available = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if available else 0
    except Exception as exc:
        count = 0
        emit("warning", what="device_count", error=error_text(exc))
    devices = []
    for index in range(count):
        try:
            props = torch.cuda.get_device_properties(index)
            devices.append({"index": index, "name": props.name, "arch": getattr(props, "gcnArchName", None),
                            "pci_bus_id": getattr(props, "pci_bus_id", None)})
        except Exception as exc:
            devices.append({"index": index, "error": error_text(exc)})
    emit("devices", available=available, count=count, devices=devices, backends=backends)
    if payload.get("peers") and count >= 2:
        peers(torch, count, int(payload.get("peer_bytes", 64 << 20)), int(payload.get("peer_iters", 5)))
    emit("done")


def peers(torch, count, nbytes, iters):
    matrix = [[None] * count for _ in range(count)]
    for i in range(count):
        for j in range(count):
            if i == j:
                continue
            try:
                matrix[i][j] = bool(torch.cuda.can_device_access_peer(i, j))
            except Exception as exc:
                matrix[i][j] = None
                emit("warning", what=f"can_device_access_peer({i}, {j})", error=error_text(exc))
    emit("peer_matrix", matrix=matrix)
    buffers = {}
    for i in range(count):
        for j in range(count):
            if i == j:
                continue
            emit("peer_begin", src=i, dst=j, bytes=nbytes)
            try:
                if i not in buffers:
                    buffers[i] = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{i}").fill_(7)
                src = buffers[i]
                dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{j}")
                dst.copy_(src)  # warm-up (also enables peer access where the runtime does so lazily)
                torch.cuda.synchronize(i)
                torch.cuda.synchronize(j)
                started = time.perf_counter()
                for _ in range(iters):
                    dst.copy_(src, non_blocking=True)
                torch.cuda.synchronize(i)
                torch.cuda.synchronize(j)
                seconds = (time.perf_counter() - started) / iters
                ok = bool((dst[:4096] == 7).all().item()) and bool((dst[-4096:] == 7).all().item())
                emit("peer_copy", src=i, dst=j, bytes=nbytes, iters=iters, time_s=seconds,
                     gbs=nbytes / seconds / 1e9 if seconds > 0 else None, correct=ok)
                del dst
            except Exception as exc:
                emit("peer_copy", src=i, dst=j, bytes=nbytes, error=error_text(exc))
    buffers.clear()


# ----------------------------------------------------------------------------------------------- rank mode


def pattern(torch, rank, count, device, offset=0):
    """The known input of `rank`: (rank + 1) + 16 * ((offset + i) % 13), exact in float32."""
    index = torch.arange(offset, offset + count, device=device, dtype=torch.int64)
    return (index % PATTERN_PERIOD).to(torch.float32) * PATTERN_STEP + float(rank + 1)


TIMED_LOOPS_ON_GPU = 5


def timed_iterations(base, nbytes):
    """Small messages take tens of microseconds: time enough of them (up to 1000) that the loop lasts long enough
    to read. Derived from the size alone, so every rank runs the same count without agreeing on it."""
    return max(base, min(1000, (16 << 20) // max(nbytes, 1)))


def op_size(op, requested, world):
    """(bytes S as nccl-tests counts them, elements per rank's input) for a requested size of float32: rounded down
    so that an all-gather splits evenly over the ranks (at least one element per rank), S then recomputed."""
    elements = max(1, int(requested) // 4)
    if op == "all_gather":
        per_rank = max(1, elements // world)
        return per_rank * world * 4, per_rank
    return elements * 4, elements


class Rank:
    def __init__(self, payload):
        import torch
        import torch.distributed as dist

        self.torch, self.dist, self.payload = torch, dist, payload
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        self.fault, self.fault_op = parse_fault(self.rank)
        self.stalled = False
        self.use_all_gather_into = True
        wanted = payload.get("device", "cpu")
        if wanted == "cuda":
            index = int(payload.get("device_index_base", 0)) + self.local_rank
            torch.cuda.set_device(index)
            self.device = torch.device("cuda", index)
        else:
            self.device = torch.device("cpu")

    # -- plumbing

    def begin(self, op, nbytes, phase):
        if self.fault == "stall" and not self.stalled and phase != "init" and self.fault_op in (None, op):
            self.stalled = True
            emit("fault", kind="stall", op=op, bytes=nbytes, note="test fault: this rank stops before the collective")
            while True:
                time.sleep(3600)
        emit("begin", op=op, bytes=nbytes, phase=phase)

    def barrier(self):
        # A tiny all-reduce works the same on every backend and binds to this rank's device.
        flag = self.torch.ones(1, device=self.device)
        self.dist.all_reduce(flag)
        sync(self.torch, self.device)

    def all_gather(self, out, inp):
        if self.use_all_gather_into:
            try:
                # all_gather_single is the newer name (torch 2.13 deprecates all_gather_into_tensor)
                fn = getattr(self.dist, "all_gather_single", None) or self.dist.all_gather_into_tensor
                fn(out, inp)
                return
            except (RuntimeError, AttributeError, NotImplementedError) as exc:
                if "not supported" not in str(exc).lower() and not isinstance(exc, (AttributeError, NotImplementedError)):
                    raise
                self.use_all_gather_into = False
        chunks = list(out.chunk(self.world))
        self.dist.all_gather(chunks, inp)

    def run_op(self, op, buffers):
        if op == "all_reduce":
            self.dist.all_reduce(buffers["data"])
        elif op == "all_gather":
            self.all_gather(buffers["out"], buffers["data"])
        elif op == "broadcast":
            self.dist.broadcast(buffers["data"], src=0)
        else:
            raise ValueError(op)

    # -- phases

    def init(self):
        from datetime import timedelta

        backend = self.payload.get("backend") or ("nccl" if self.device.type == "cuda" else "gloo")
        timeout = timedelta(seconds=float(self.payload.get("pg_timeout_s", 120)))
        emit("init_begin", backend=backend, device=str(self.device), world_size=self.world,
             master=f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}")
        started = time.monotonic()
        kwargs = {"backend": backend, "timeout": timeout, "rank": self.rank, "world_size": self.world}
        if self.device.type == "cuda":
            kwargs["device_id"] = self.device
        try:
            self.dist.init_process_group(**kwargs)
        except TypeError:  # torch without device_id
            kwargs.pop("device_id", None)
            self.dist.init_process_group(**kwargs)
        self.begin("barrier", 4, "init")
        self.barrier()
        emit("ready", backend=backend, seconds=round(time.monotonic() - started, 3))

    def sweep(self):
        warmup = int(self.payload.get("warmup", 5))
        iters = int(self.payload.get("iters", 20))
        for op in self.payload.get("ops", ["all_reduce", "all_gather", "broadcast"]):
            for requested in self.payload.get("sizes", [1024]):
                nbytes, per_rank = op_size(op, requested, self.world)
                self.measure(op, nbytes, per_rank, warmup, iters)
        if self.payload.get("random_check_bytes"):
            self.random_check(int(self.payload["random_check_bytes"]))

    def buffers(self, op, per_rank, fill):
        torch = self.torch
        if fill:
            data = pattern(torch, self.rank, per_rank, self.device)
            if self.fault == "corrupt":
                data += 0.5
            if op == "broadcast" and self.rank != 0:
                data.fill_(-1.0)
        else:
            data = torch.ones(per_rank, dtype=torch.float32, device=self.device)
        out = torch.empty(per_rank * self.world, dtype=torch.float32, device=self.device) if op == "all_gather" else None
        return {"data": data, "out": out}

    def expected(self, op, per_rank):
        torch = self.torch
        if op == "all_reduce":
            index = torch.arange(per_rank, device=self.device, dtype=torch.int64)
            base = (index % PATTERN_PERIOD).to(torch.float32) * PATTERN_STEP
            return base * self.world + float(self.world * (self.world + 1) // 2)
        if op == "all_gather":
            return torch.cat([pattern(torch, r, per_rank, self.device) for r in range(self.world)])
        if op == "broadcast":
            return pattern(torch, 0, per_rank, self.device)
        raise ValueError(op)

    def measure(self, op, nbytes, per_rank, warmup, iters):
        torch = self.torch
        on_gpu = self.device.type == "cuda"
        iters = timed_iterations(iters, nbytes) if on_gpu else iters
        buffers = self.buffers(op, per_rank, fill=False)
        self.begin(op, nbytes, "warmup")
        self.barrier()
        for _ in range(warmup):
            self.run_op(op, buffers)
        sync(torch, self.device)
        self.begin(op, nbytes, "timed")
        loops = []
        for _ in range(TIMED_LOOPS_ON_GPU if on_gpu else 1):  # the median of several loops: latency is noisy
            self.barrier()
            started = time.perf_counter()
            for _ in range(iters):
                self.run_op(op, buffers)
            sync(torch, self.device)
            loops.append((time.perf_counter() - started) / max(1, iters))
        seconds = sorted(loops)[len(loops) // 2]
        # correctness pass on known per-rank inputs
        buffers = self.buffers(op, per_rank, fill=True)
        self.begin(op, nbytes, "check")
        self.run_op(op, buffers)
        sync(torch, self.device)
        got = buffers["out"] if op == "all_gather" else buffers["data"]
        want = self.expected(op, per_rank)
        diff = (got - want).abs()
        max_err = float(diff.max().item())
        correct = max_err == 0.0
        bad_chunks = []
        if not correct and op == "all_gather":
            per_chunk = diff.view(self.world, per_rank).amax(dim=1)
            bad_chunks = [r for r in range(self.world) if float(per_chunk[r].item()) != 0.0]
        emit("result", op=op, bytes=nbytes, elements=per_rank, dtype="float32", iters=iters, warmup=warmup,
             time_s=seconds, correct=correct, max_err=max_err, bad_chunks=bad_chunks)
        del buffers

    def random_check(self, requested):
        torch = self.torch
        nbytes, count = op_size("all_reduce", requested, self.world)
        seed = int(self.payload.get("seed", 0))

        def draw(rank):
            generator = torch.Generator().manual_seed(seed + rank)
            return torch.randn(count, generator=generator, dtype=torch.float32)

        mine = draw(self.rank)
        if self.fault == "corrupt":
            mine = mine + 0.5
        data = mine.to(self.device)
        self.begin("all_reduce", nbytes, "random")
        self.dist.all_reduce(data)
        sync(torch, self.device)
        reference = torch.zeros(count, dtype=torch.float64)
        for rank in range(self.world):
            reference += draw(rank).to(torch.float64)
        err = (data.to("cpu", torch.float64) - reference).abs()
        tolerance = 1e-4 + 1e-5 * float(reference.abs().max().item())
        max_err = float(err.max().item())
        emit("random_check", op="all_reduce", bytes=nbytes, elements=count, seed=seed, correct=max_err <= tolerance,
             max_abs_err=max_err, tolerance=tolerance)


def run_rank(payload):
    started = time.monotonic()
    import torch

    emit("import", torch=torch.__version__, cuda=getattr(torch.version, "cuda", None),
         hip=getattr(torch.version, "hip", None), vendor=vendor_of(torch), nccl=nccl_version(torch))
    rank = Rank(payload)
    if rank.device.type == "cuda":
        emit("device", index=rank.device.index, name=torch.cuda.get_device_name(rank.device))
    rank.init()
    try:
        rank.sweep()
    finally:
        try:
            rank.dist.destroy_process_group()
        except Exception:
            pass
    emit("done", seconds=round(time.monotonic() - started, 3))


def main():
    try:
        payload = childlib.read_payload()
    except ValueError as exc:
        emit("error", error=f"bad payload: {exc}")
        return 2
    emit("start", pid=os.getpid(), host=socket.gethostname(), python=sys.version.split()[0],
         executable=sys.executable, rank=os.environ.get("RANK"), mode=payload.get("mode"))
    try:
        if payload.get("mode") == "probe":
            probe(payload)
        else:
            run_rank(payload)
    except BaseException as exc:  # noqa: BLE001 - report anything (incl. SystemExit from a library), then fail
        if isinstance(exc, KeyboardInterrupt):
            raise
        emit("error", error=error_text(exc), traceback=traceback.format_exc(limit=8))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
