"""The evaluation workers as Ray actors (`--ray ADDRESS|auto`): one actor per GPU of a Ray
cluster (`num_gpus=1`, so Ray names each its GPU in CUDA_VISIBLE_DEVICES), each holding a
station (station.py) as a local worker does. The pool (workers.py) is the same: jobs go out from
one queue, outcomes come back to this process, the one writer of the run's store.

Imported only when --ray is given: Ray is an optional extra (`pip install 'kernelgen[ray]'`).
An actor that dies (ray.kill, its node lost) is a WorkerDied: its job goes to another actor; a
cluster that goes away takes every actor, so the pool is lost and the run stops, resumable.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from kernelgen.errors import KernelgenError, UsageError
from kernelgen.records import Environment
from kernelgen.run.pool import START_TIMEOUT_S, Pool, WorkerDied, parse_gpus
from kernelgen.run.station import Job, Outcome, Ready, Station, StationConfig

INSTALL = "--ray needs Ray, an optional extra: pip install 'kernelgen[ray]'"
CONNECT_TIMEOUT_S = 5.0
# How often a caller waiting on an actor checks that the cluster is still there: a job's
# outcome may take minutes, a lost cluster should not.
POLL_S = 5.0


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL) from None
    return ray


class StationActor:
    """The actor's body: a station, named after its node and GPU."""

    def __init__(self, config_json: str):
        ray = _ray()
        config = StationConfig.model_validate_json(config_json)
        context = ray.get_runtime_context()
        gpus = ray.get_gpu_ids()
        node = context.get_node_id()[:8]
        name = f"ray-{node}-gpu{gpus[0] if gpus else '?'}-{os.getpid()}"
        self.station = Station(config, name)

    def ready(self) -> str:
        return self.station.ready().model_dump_json()

    def handle(self, job_json: str) -> str:
        return self.station.handle(Job.model_validate_json(job_json)).model_dump_json()

    def close(self) -> None:
        self.station.close()


class RayWorker:
    """One actor, as the pool sees a worker."""

    def __init__(self, actor: Any):
        self.actor = actor
        self.name = "ray-starting"
        self.gpu: str | None = None
        self.environment: Environment | None = None  # type: ignore[assignment]
        self.pid: int | None = None

    def started(self, ready: Ready) -> None:
        self.name, self.gpu, self.environment, self.pid = (
            ready.name,
            ready.gpu,
            ready.environment,
            ready.pid,
        )

    def call(self, job: Job) -> Outcome:
        ray = _ray()
        ref = self.actor.handle.remote(job.model_dump_json())
        while True:
            try:
                return Outcome.model_validate_json(ray.get(ref, timeout=POLL_S))
            except ray.exceptions.GetTimeoutError:
                if not _cluster_up(ray):
                    raise WorkerDied(f"{self.name}: the Ray cluster went away") from None
            except (ray.exceptions.RayActorError, ray.exceptions.RaySystemError) as e:
                raise WorkerDied(f"{self.name}: {type(e).__name__}") from None

    def close(self) -> None:
        ray = _ray()
        try:
            ray.get(self.actor.close.remote(), timeout=30)
        except Exception:  # noqa: BLE001 - dead already, or the cluster is gone
            pass
        try:
            ray.kill(self.actor)
        except Exception:  # noqa: BLE001
            pass


def _cluster_up(ray: Any) -> bool:
    try:
        return any(n.get("Alive") for n in ray.nodes())
    except Exception:  # noqa: BLE001 - the GCS is gone: so is the cluster
        return False


def _check_address(address: str) -> None:
    """A bad address fails in seconds, in one line: ray.init itself retries a missing GCS for
    minutes."""
    if address == "auto":
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(f"--ray {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise UsageError(f"--ray {address}: no Ray cluster answers there ({e})") from None


def connect(address: str) -> Any:
    ray = _ray()
    if ray.is_initialized():  # a driver that joined its cluster already (tests, scripts)
        return ray
    _check_address(address)
    try:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    except (ConnectionError, RuntimeError, ValueError) as e:
        if address == "auto":
            raise UsageError(
                "--ray auto: no running Ray cluster found from this host (start one with "
                "`ray start --head`, or pass its ADDRESS)"
            ) from None
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UsageError(f"--ray {address}: {first}") from None
    return ray


def open_ray_pool(config: StationConfig, address: str, gpus: str | None = None) -> Pool:
    """One actor per GPU of the cluster (or `gpus` of them), each started and ready."""
    ray = connect(address)
    have = int(ray.cluster_resources().get("GPU", 0))
    if have < 1:
        raise UsageError(
            f"--ray {address}: the cluster declares no GPU resources (a worker takes num_gpus=1)"
        )
    want = parse_gpus(gpus, config.device) if gpus is not None else None
    if want is not None and want > have:
        raise UsageError(f"--gpus {gpus}: the Ray cluster at {address} has {have} GPUs")
    n = want or have
    remote = ray.remote(StationActor).options(num_gpus=1, num_cpus=0, max_restarts=0)
    workers = [RayWorker(remote.remote(config.model_dump_json())) for _ in range(n)]
    refs = [w.actor.ready.remote() for w in workers]
    try:
        ready = ray.get(refs, timeout=START_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        for w in workers:
            ray.kill(w.actor)
        raise KernelgenError(
            f"--ray {address}: {n} workers did not start in {START_TIMEOUT_S:.0f} s "
            "(does every node hold this project and its Python environment?)"
        ) from None
    except ray.exceptions.RayError as e:
        for w in workers:
            ray.kill(w.actor)
        raise KernelgenError(f"--ray {address}: a worker failed to start: {e}") from None
    for w, text in zip(workers, ready, strict=True):
        w.started(Ready.model_validate_json(text))
    return Pool(workers, f"{n} Ray workers at {address}")  # type: ignore[arg-type]
