"""Files service throughput, search latency and memory, against the same work done on local disk.

Starts a real ``files-service`` process (local-disk storage, a scratch PostgreSQL database), then:
uploads and downloads 1 MB and 50 MB files over HTTP (MB/s, compared with a plain local copy of
the same bytes), times vector-store searches over 1,000 chunks (p50/p99), and samples the service
process's RSS during each transfer: streaming means the peak stays flat as files grow.

    make bench-files      # or: uv run python -m scripts.bench_files --sizes 1,50 --searches 1000
PostgreSQL comes from FILES_BENCH_POSTGRES_URI (default: the server on 127.0.0.1:5432);
``--embeddings-url`` adds semantic ranking (then that PostgreSQL needs pgvector).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from lgos_stack.bench.services import database
from lgos_stack.paths import ROOT
from lgos_stack.ports import free_port

KEY = "sk-bench"
MB = 1024 * 1024
WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
)


@contextmanager
def files_service(
    postgres_uri: str, state: Path, embeddings_url: str | None
) -> Iterator[tuple[str, psutil.Process]]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "FILES_PORT": str(port),
        "FILES_POSTGRES_URI": postgres_uri,
        "FILES_STORAGE_DIR": str(state / "storage"),
        "FILES_API_KEYS": KEY,
        "FILES_LOG_LEVEL": "warning",
    }
    env.pop("FILES_EMBEDDINGS_URL", None)
    if embeddings_url:
        env["FILES_EMBEDDINGS_URL"] = embeddings_url
    log = (state / "files.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "files_service"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"files-service did not start:\n{(state / 'files.log').read_text()}"
                )
            time.sleep(0.1)
        yield url, psutil.Process(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=10)


class PeakRSS:
    """Samples a process's resident memory every 5 ms while active."""

    def __init__(self, process: psutil.Process) -> None:
        self.process = process
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.005)

    def __enter__(self) -> PeakRSS:
        self.peak = self.process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Transfer:
    size_mb: int
    upload_mbs: float
    download_mbs: float
    local_copy_mbs: float
    peak_rss_mb: float


def measure_transfer(
    client: httpx.Client, service: psutil.Process, source: Path, size_mb: int, repeat: int
) -> Transfer:
    uploads, downloads = [], []
    with PeakRSS(service) as rss:
        for _ in range(repeat):
            with source.open("rb") as handle:
                start = time.perf_counter()
                response = client.post(
                    "/v1/files",
                    files={"file": (source.name, handle, "application/octet-stream")},
                    data={"purpose": "assistants"},
                )
                uploads.append(time.perf_counter() - start)
            response.raise_for_status()
            file_id = response.json()["id"]
            start = time.perf_counter()
            received = 0
            with client.stream("GET", f"/v1/files/{file_id}/content") as body:
                for chunk in body.iter_raw(MB):
                    received += len(chunk)
            downloads.append(time.perf_counter() - start)
            assert received == size_mb * MB, received
            client.delete(f"/v1/files/{file_id}").raise_for_status()
    copy_times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with tempfile.NamedTemporaryFile(dir=source.parent) as out, source.open("rb") as handle:
            shutil.copyfileobj(handle, out, MB)
            out.flush()
            os.fsync(out.fileno())
        copy_times.append(time.perf_counter() - start)
    return Transfer(
        size_mb,
        size_mb / statistics.median(uploads),
        size_mb / statistics.median(downloads),
        size_mb / statistics.median(copy_times),
        rss.peak / MB,
    )


def measure_search(client: httpx.Client, chunks: int, searches: int) -> tuple[float, float, int]:
    """p50/p99 search latency (ms) over a store holding ``chunks`` chunks of 100 tokens each."""
    words = [WORDS[(i * 7 + i // 13) % len(WORDS)] + str(i % 997) for i in range(chunks * 100)]
    text = " ".join(words).encode()
    uploaded = client.post(
        "/v1/files", files={"file": ("corpus.txt", text)}, data={"purpose": "assistants"}
    ).json()
    store = client.post("/v1/vector_stores", json={"name": "bench"}).json()
    strategy = {
        "type": "static",
        "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 0},
    }
    client.post(
        f"/v1/vector_stores/{store['id']}/files",
        json={"file_id": uploaded["id"], "chunking_strategy": strategy},
    ).raise_for_status()
    deadline = time.monotonic() + 120
    while True:
        status = client.get(f"/v1/vector_stores/{store['id']}/files/{uploaded['id']}").json()
        if status["status"] != "in_progress":
            break
        if time.monotonic() > deadline:
            raise SystemExit("indexing did not finish")
        time.sleep(0.1)
    if status["status"] != "completed":
        raise SystemExit(f"indexing failed: {status['last_error']}")
    latencies = []
    for i in range(searches):
        query = f"{WORDS[i % len(WORDS)]}{i % 997} {WORDS[(i + 5) % len(WORDS)]}"
        start = time.perf_counter()
        client.post(
            f"/v1/vector_stores/{store['id']}/search",
            json={"query": query, "max_num_results": 10},
        ).raise_for_status()
        latencies.append((time.perf_counter() - start) * 1000)
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return statistics.median(latencies), p99, status["usage_bytes"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1,50", help="file sizes in MB, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument(
        "--embeddings-url",
        help="OpenAI-compatible embeddings base URL (…/v1): semantic ranking; needs pgvector",
    )
    args = parser.parse_args()
    server_uri = os.environ.get(
        "FILES_BENCH_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
    )
    sizes = [int(s) for s in args.sizes.split(",")]
    with (
        tempfile.TemporaryDirectory(prefix="files-bench-") as tmp,
        database(server_uri, "lgos_files_bench") as db,
        files_service(db, Path(tmp), args.embeddings_url) as (url, service),
    ):
        state = Path(tmp)
        idle_rss = service.memory_info().rss / MB
        headers = {"Authorization": f"Bearer {KEY}"}
        with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
            transfers = []
            for size in sizes:
                source = state / f"payload-{size}mb.bin"
                with source.open("wb") as out:
                    for _ in range(size):
                        out.write(os.urandom(MB))
                transfers.append(measure_transfer(client, service, source, size, args.repeat))
                source.unlink()
            p50, p99, usage = measure_search(client, args.chunks, args.searches)

    ranking = "semantic + full-text" if args.embeddings_url else "full-text"
    print(f"## Files service (one process, local disk, PostgreSQL {ranking} search)\n")
    print("| size MB | upload MB/s | download MB/s | local copy MB/s | peak service RSS MB |")
    print("|---|---|---|---|---|")
    for t in transfers:
        print(
            f"| {t.size_mb} | {t.upload_mbs:.1f} | {t.download_mbs:.1f} | "
            f"{t.local_copy_mbs:.1f} | {t.peak_rss_mb:.1f} |"
        )
    print()
    print(
        f"search over {args.chunks} chunks ({usage / MB:.2f} MB of text), {args.searches} queries:"
    )
    print(f"- search latency p50: {p50:.1f} ms")
    print(f"- search latency p99: {p99:.1f} ms")
    print(f"- server RSS idle: {idle_rss:.1f} MB")
    growth = transfers[-1].peak_rss_mb - transfers[0].peak_rss_mb
    print(
        f"- peak RSS growth from {transfers[0].size_mb} MB to {transfers[-1].size_mb} MB files: "
        f"{growth:+.1f} MB (flat means streamed)"
    )


if __name__ == "__main__":
    main()
