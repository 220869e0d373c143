"""Where a retrieval miss's answering chunk was: fused, in the judge's pool, read by the judge (issue 52).

    python -m citestream.eval.misses --set tests/golden/qa_v2_dev.jsonl ... --out DIR
    python scripts/retrieval_misses.py DIR/misses.json [--out rows.json]

For each miss of class ``retrieval`` (dev sets only: ``eval.misses`` refuses a test split), the chunks on its
expected pages that hold an answer phrase are looked up in the fused candidates (every one, not only the pool), in
the judge's pool (``rerank_pool``) and in the judge's scores. A score of about 0.3 × cosine or less means the judge
never read the answering unit (``relevance_cross_k``): only the cosine share scored it.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from citestream.deps import get_deps
from citestream.eval.misses import answering_chunks
from citestream.eval.sets import load_set
from citestream.qa.retrieve.candidates import gather
from citestream.qa.retrieve.expansion import expand_query
from citestream.qa.retrieve.facts import search_chunks
from citestream.qa.retrieve.lexicon import corpus_lexicon
from citestream.qa.retrieve.reading import read_question
from citestream.qa.retrieve.scope import asked_scope

SETS = ("tests/golden/qa_v2_dev.jsonl", "tests/golden/qa_docs_dev.jsonl", "tests/golden/qa_docs_calibration.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("misses")
    parser.add_argument("--out")
    args = parser.parse_args()
    deps = get_deps()
    wanted = {m["id"] for m in json.loads(Path(args.misses).read_text()) if m["cls"] == "retrieval"}
    items = [i for path in SETS for i in load_set(path) if i.id in wanted]
    search, policy = deps.search, deps.policy
    lexicon = corpus_lexicon(search, None)
    rows = []
    for item in items:
        answering = answering_chunks(deps.engine, item)
        asked = asked_scope(item.question, "MIXED", search.authorities(), search.issuers())
        scope = asked.searched("MIXED")
        variants = expand_query(item.question, lexicon=lexicon)
        fused = [h.chunk_id for h in gather(variants, deps.embedder.embed_together(variants), scope, search,
                                            policy.retrieval, policy.retrieval.top_k).hits]
        selection, _ = search_chunks(item.question, scope, policy.retrieval.top_k, search, deps.embedder,
                                     policy.retrieval, deps.relevance, policy.relevance, None,
                                     read_question(item.question, lexicon).asked)
        scores = sorted(selection.relevance.values(), reverse=True)
        judged = max((selection.relevance[c] for c in answering if c in selection.relevance), default=None)
        rows.append({"id": item.id, "fused_rank": min((fused.index(c) + 1 for c in answering if c in fused),
                                                      default=None),
                     "in_pool": judged is not None, "score": judged,
                     "judge_rank": scores.index(judged) + 1 if judged is not None else None,
                     "best": scores[0] if scores else None, "scope": str(scope)})
        print(rows[-1], flush=True)
    where = Counter("not fused" if r["fused_rank"] is None else "fused, outside the pool" if not r["in_pool"]
                    else "in the pool, scored by its cosine only" if r["score"] <= 0.3 else "in the pool, read"
                    for r in rows)
    print(dict(where))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
