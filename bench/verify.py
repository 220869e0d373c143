"""The rag-loop §1.4 latency budget: ingest 3 docs + retrieve + verify 3 claims, end to end, against 600 s.

Each run ingests the smoke documents under fresh doc ids (so the ingest is real
work, not an unchanged-file skip) through `documents.ingest`, then sends the
three smoke claims to `claims.verify` with their own text as the query, through
one worker. The same loop also runs in-process on the stage functions.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

from citestream.ops.client import ask_many
from citestream.config import get_settings
from citestream.ops.demo_pdfs import smoke_dataset
from citestream.ingest import ingest_request
from citestream.models import ClaimVerifyRequest, IngestRequest, InlineDocument
from citestream.models.verdicts import Claim
from citestream.deps import Deps
from citestream.verification import RelevanceJudge, pack_finder, verify_claims

from ._support import Worker, percentile

RUNS = int(os.environ.get("BENCH_VERIFY_RUNS", "3"))
BUDGET_S = 600.0  # budgets.timeout_ms default of rag-loop-acceptance §1.4


def _loop_records(tag: str) -> tuple[IngestRequest, list[ClaimVerifyRequest]]:
    data = smoke_dataset()
    run = uuid.uuid4().hex[:8]
    ingest = IngestRequest(request_id=f"bench-verify-ingest-{tag}-{run}", documents=[
        InlineDocument(docId=f"{d['docId']}-{run}", title=d["title"], source=d["source"], text=d["text"],
                       metadata=d["metadata"]) for d in data["documents"]])
    claims = [ClaimVerifyRequest(request_id=f"bench-verify-{tag}-{run}-{c['id']}", query=c["text"],
                                 claims=[Claim(id=c["id"], text=c["text"])]) for c in data["claims"]]
    return ingest, claims


def _expected(verdicts: dict[str, str]) -> bool:
    return verdicts.get("C1") == "pass" and verdicts.get("C2") != "pass" and verdicts.get("C3") != "pass"


def run_stream() -> list[dict]:
    out = []
    log = Path(tempfile.mkdtemp(prefix="citestream-bench-verify-")) / "worker.log"
    worker = Worker(log)
    try:
        for i in range(RUNS):
            ingest, claims = _loop_records(f"stream{i}")
            started = time.monotonic()
            ingested, _ = ask_many([ingest], source="documents.ingest", reply="documents.ingested", timeout_s=BUDGET_S)
            t_ingest = time.monotonic() - started
            replies, _ = ask_many(claims, source="claims.verify", reply="claims.verdicts", timeout_s=BUDGET_S)
            total = time.monotonic() - started
            verdicts = {r.outputs.claim_verdicts[0].claimId: r.outputs.claim_verdicts[0].verdict
                        for r in replies.values()}
            out.append({"total_s": total, "ingest_s": t_ingest, "verify_s": total - t_ingest,
                        "complete": ingest.request_id in ingested and len(replies) == 3,
                        "verdicts_ok": _expected(verdicts)})
    finally:
        worker.stop()
    return out


def run_inprocess() -> list[dict]:
    deps = Deps(get_settings())
    deps.warm()
    out = []
    for i in range(RUNS):
        ingest, claims = _loop_records(f"inproc{i}")
        started = time.monotonic()
        ingest_request(ingest, deps.chunks, deps.embedder)
        t_ingest = time.monotonic() - started
        verdicts = {}
        for request in claims:
            result = verify_claims(request, RelevanceJudge(deps.claim_relevance),
                                   pack_finder(deps.search, deps.embedder, deps.policy, deps.claim_relevance),
                                   deps.policy.version)
            verdicts[request.claims[0].id] = result.outputs.claim_verdicts[0].verdict
        total = time.monotonic() - started
        out.append({"total_s": total, "ingest_s": t_ingest, "verify_s": total - t_ingest, "complete": True,
                    "verdicts_ok": _expected(verdicts)})
    return out


def main() -> None:
    results = {"in-process stage functions": run_inprocess(), "ingest + verify agents via Kafka": run_stream()}
    print(f"\nfull loop (ingest 3 docs + retrieve + verify 3 claims), {RUNS} runs each, budget {BUDGET_S:.0f} s")
    print(f"{'path':<34}{'p50 s':>8}{'max s':>8}{'ingest p50':>12}{'verify p50':>12}{'verdicts':>10}{'budget':>8}")
    for name, runs in results.items():
        totals = [r["total_s"] for r in runs]
        within = all(r["complete"] and r["total_s"] <= BUDGET_S for r in runs)
        print(f"{name:<34}{percentile(totals, 50):>8.2f}{max(totals):>8.2f}"
              f"{percentile([r['ingest_s'] for r in runs], 50):>12.2f}"
              f"{percentile([r['verify_s'] for r in runs], 50):>12.2f}"
              f"{'ok' if all(r['verdicts_ok'] for r in runs) else 'WRONG':>10}{'ok' if within else 'OVER':>8}")
    print("(stream runs start after the worker is ready; the first run includes partition assignment)")


if __name__ == "__main__":
    main()
