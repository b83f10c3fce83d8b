"""The ceiling of the throughput bench: a bare httpx loop sending recorded request bodies, C at a time.

Run as a process of its own, so that it is timed as every tool is (interpreter start and imports
included), by ``bench.throughput``:

    python -m bench.raw_loop URL BODIES.jsonl CONCURRENCY
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx


async def send_all(url: str, bodies: list[bytes], concurrency: int) -> None:
    limits = httpx.Limits(max_connections=max(100, concurrency), max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=120.0) as client:
        queue = list(reversed(bodies))

        async def worker() -> None:
            while queue:
                body = queue.pop()
                response = await client.post(url, content=body, headers={"Content-Type": "application/json"})
                response.raise_for_status()

        await asyncio.gather(*(worker() for _ in range(concurrency)))


def main(argv: list[str]) -> None:
    url, bodies_file, concurrency = argv
    bodies = [line for line in Path(bodies_file).read_bytes().splitlines() if line.strip()]
    asyncio.run(send_all(url, bodies, int(concurrency)))


if __name__ == "__main__":
    main(sys.argv[1:])
