"""Put a few golden-set questions through retrieve → assemble → generate → validate on the local model.

Reads the corpus index (CITESTREAM_DATABASE_URL); writes nothing but the audit-ledger rows that
generation appends. Prints one line per question and a summary; ``--out FILE`` keeps the rows as JSON
lines. Run it niced on a shared machine, e.g.:

    CITESTREAM_LLM_BACKEND=local CITESTREAM_LOCAL_MODEL_PATH=.state/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
      nice -n 19 .venv/bin/python scripts/local_llm_try.py g001 g004 u005
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path

from citestream.models.question import QuestionEvent
from citestream.inprocess import answer_inprocess
from citestream.deps import get_deps

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "golden_set.jsonl"


class Recording:
    """Wraps the backend to keep what each call cost (tokens, seconds) without touching prompt or reply."""

    def __init__(self, backend):
        self.backend, self.model_name, self.calls = backend, backend.model_name, []

    def complete(self, prompt_text: str):
        start = time.perf_counter()
        reply = self.backend.complete(prompt_text)
        self.calls.append({"llm_s": round(time.perf_counter() - start, 2), "prompt_tokens": reply.prompt_tokens,
                           "completion_tokens": reply.completion_tokens, "finish_reason": reply.finish_reason,
                           "raw": reply.text})
        return reply


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+", help="golden-set ids, e.g. g001 u005")
    ap.add_argument("--out", help="write one JSON line per question here")
    args = ap.parse_args()
    golden = {row["id"]: row for row in (json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip())}

    deps = get_deps()
    t0 = time.perf_counter()
    llm = Recording(deps.llm)  # loads the model
    load_s = time.perf_counter() - t0
    deps.__dict__["llm"] = llm  # Deps.llm is a cached_property: replace the cached value
    _ = deps.embedder, deps.tokens, deps.chunks.index_version()
    print(f"model {llm.model_name} loaded in {load_s:.1f} s")

    rows = []
    for qid in args.ids:
        g = golden[qid]
        event = QuestionEvent(request_id=f"local-try-{qid}-{uuid.uuid4().hex[:8]}", policy_version=deps.policy.version,
                              question=g["question"], scope=g.get("scope", "MIXED"))
        before = len(llm.calls)
        start = time.perf_counter()
        answer = answer_inprocess(event, deps)
        call = llm.calls[before] if len(llm.calls) > before else {}
        row = {"id": qid, "answerable": g["answerable"], "seconds": round(time.perf_counter() - start, 2),
               "status": answer.status, "validation_status": answer.validation_status,
               "failure_reason": answer.failure_reason, "generation_status": answer.generation_status,
               "classification": answer.classification, "model_called": bool(call),
               "dropped": [d.reason for d in answer.dropped_sentences], **call, "answer_text": answer.answer_text}
        rows.append(row)
        if args.out:  # row by row: a long run stopped half way keeps what it measured
            with open(args.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
        print(f"{qid} {row['seconds']:>7.1f}s prompt={call.get('prompt_tokens')} out={call.get('completion_tokens')} "
              f"finish={call.get('finish_reason')} {answer.status}/{answer.validation_status} "
              f"{answer.failure_reason or ''} {sorted(set(row['dropped'])) or ''}", flush=True)
    called = [r for r in rows if r["model_called"]]
    passed = [r for r in called if r["validation_status"] == "PASSED"]
    print(f"{len(rows)} questions, {len(called)} reached the model, {len(passed)} passed R5 "
          f"({sum(r['status'] == 'answered' for r in passed)} answered, "
          f"{sum(r['status'] == 'refused' for r in passed)} refused); "
          f"mean {sum(r['llm_s'] for r in called) / max(len(called), 1):.1f} s per model call")


if __name__ == "__main__":
    main()
