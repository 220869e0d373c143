"""A golden set on the ingested corpus, in-process and through Kafka: same per-item outcomes, figures printed.

The perturbation set (43 reworded questions) proves the parity; every question now costs the relevance model's
passes, and both old sets through both paths pushed `make test` past 30 minutes. `make eval` reports every set.

The gates themselves are asserted only with CITESTREAM_ENFORCE_GATES=1 (the
pipeline is still being brought up to them); the figures are printed either way.
"""

import os

import pytest

from citestream.eval.gates import evaluate_gates, gate_lines
from citestream.eval.main import score_set
from citestream.eval.run_report import EvalReport, render
from citestream.eval.run import run_inprocess, run_kafka
from citestream.eval.sets import PERTURB_SET, load_set, set_name
from citestream.deps import Deps

from tests.support.common import CORPUS, WorkerProcess
from tests.support.corpus import corpus_env

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.corpus_eval,
              pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present")]
SETS = {set_name(PERTURB_SET): load_set(PERTURB_SET)}


@pytest.fixture(scope="module")
def corpus_worker(corpus, tmp_path_factory):
    proc = WorkerProcess(tmp_path_factory.mktemp("eval-worker") / "worker.log", env=corpus_env(corpus))
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def reports(corpus, corpus_worker):
    """Each set scored through both paths: {through: EvalReport}."""
    deps = Deps(corpus)
    out = {}
    for through in ("inprocess", "kafka"):
        sets = {}
        for name, items in SETS.items():
            replies = run_inprocess(items, deps) if through == "inprocess" else run_kafka(items, settings=corpus)
            sets[name] = score_set(name, items, replies, deps.engine)
        out[through] = EvalReport(through=through, sets=sets,
                                  gates=evaluate_gates({name: (s.role, s.metrics) for name, s in sets.items()}))
        print("\n" + render(out[through]))
    return out


def test_kafka_and_inprocess_give_the_same_outcomes(reports):
    for name in SETS:
        kafka = {r.id: (r.outcome, r.cited) for r in reports["kafka"].sets[name].items}
        inprocess = {r.id: (r.outcome, r.cited) for r in reports["inprocess"].sets[name].items}
        assert all(outcome != "no_reply" for outcome, _ in kafka.values()), name
        assert kafka == inprocess, name
        assert reports["kafka"].sets[name].metrics["pass_rate"] == reports["inprocess"].sets[name].metrics["pass_rate"]


@pytest.mark.skipif(os.environ.get("CITESTREAM_ENFORCE_GATES") != "1",
                    reason="gates enforced only with CITESTREAM_ENFORCE_GATES=1")
def test_qa_contract_gates(reports):
    report = reports["kafka"]
    assert report.gates_passed, "\n".join(gate_lines(report.gates))
