"""The same stage functions, chained in-process, on the smoke documents."""

from citestream.models import QuestionEvent, REFUSAL_TEXT
from citestream.inprocess import answer_inprocess
from citestream.deps import Deps

from tests.support.common import new_request_id


def test_inprocess_answer_and_refusal(settings, smoke_ingested):
    deps = Deps(settings)
    answered = answer_inprocess(QuestionEvent(
        request_id=new_request_id(), question="By how much did lecanemab slow cognitive decline?"), deps)
    assert answered.status == "answered", answered.failure_reason
    assert any("27% reduction in cognitive decline" in s.text for s in answered.sentences)
    refused = answer_inprocess(QuestionEvent(
        request_id=new_request_id(), question="Who won the 1998 football world cup?"), deps)
    assert refused.answer_text == REFUSAL_TEXT


def test_same_question_twice_gives_identical_prompt(settings, smoke_ingested):
    from citestream.qa.assemble import assemble
    from citestream.qa.filter import filter_facts
    from citestream.qa.retrieve import find_facts

    deps = Deps(settings)
    prompts = []
    for _ in range(2):
        q = QuestionEvent(request_id="same-id", question="How much is stroke risk reduced by apixaban?")
        facts = find_facts(q, deps.search, deps.chunks.index_version(), deps.embedder, deps.policy)
        relevant = filter_facts(facts, deps.policy)
        prompts.append(assemble(relevant, deps.policy, deps.tokens.count, deps.tokens.name, deps.embedder.name).prompt)
    assert prompts[0].prompt_text == prompts[1].prompt_text and prompts[0].prompt_sha256


def test_warm_builds_what_the_first_question_would_wait_for(settings, smoke_ingested):
    """Model weights, the pool, the in-memory lexical copies and the corpus lexicon (its acronyms and spelling: 1.6 s
    on the 19 PDFs) are ready before the first record arrives."""
    from citestream.qa.retrieve import lexicon

    lexicon._cache.clear()
    Deps(settings).warm()
    assert len(lexicon._cache) == 1


def test_warm_runs_the_judge_before_the_first_question(settings, smoke_ingested):
    """A worker says it is ready only after the judge's int8 graph is built (or verified) and run once, and the
    dependency parser is loaded: a fresh worker's first answer took 11 s when the first question paid for it
    (issue 53)."""
    from citestream.core import clauses
    from citestream.relevance import scorer

    scorer.get_relevance_model.cache_clear()  # a fresh process' model: no runtime yet
    clauses._pipeline.cache_clear()
    clauses.clauses.cache_clear()  # a parsed sentence is remembered: the warm-up must reach the parser
    deps = Deps(settings)
    deps.warm()
    if settings.judge_runtime == "onnx-int8":
        assert deps.relevance._runtime  # made, not False (the fallback)
    assert deps.relevance._cache  # the warm-up pair went through the model
    assert clauses._pipeline.cache_info().currsize == 1  # the premise checks' parser: ~1 s under the GIL otherwise


def test_a_question_whose_premise_the_documents_contradict_is_refused_naming_it(settings, smoke_ingested):
    """On the real model and Postgres: the premise is checked like a claim before any answer."""
    deps = Deps(settings)
    false = answer_inprocess(QuestionEvent(
        request_id=new_request_id(),
        question="Since lecanemab targets tau protein tangles, how large was its effect on cognitive decline?"), deps)
    assert false.answer_text == REFUSAL_TEXT and false.refusal_code == "FALSE_PREMISE"
    assert "lecanemab targets tau protein tangles" in false.explanation
    assert false.reading.premises == ["lecanemab targets tau protein tangles"]


def test_generate_and_validate_read_the_sentence_scores_retrieve_carried(settings, smoke_ingested, monkeypatch):
    """As if each stage ran in another worker: with the relevance cache cleared before generate and before validate,
    neither scores a sentence again, and the answer is the one a single process gives."""
    from citestream.flow import QUESTION_PATH
    from citestream.inprocess import run_steps

    deps = Deps(settings)
    question = "By how much did lecanemab slow cognitive decline?"
    together = answer_inprocess(QuestionEvent(request_id=new_request_id(), question=question), deps)
    model = deps.relevance
    prompt = run_steps(QuestionEvent(request_id=new_request_id(), question=question), QUESTION_PATH[:3], deps)
    assert prompt.sentence_scores is not None and prompt.sentence_scores.model == model.name
    scored: list[str] = []
    passes = model._blends
    monkeypatch.setattr(model, "_blends", lambda call: (scored.extend(call[1]), passes(call))[1])
    model.clear_cache()
    generation = run_steps(prompt, QUESTION_PATH[3:4], deps)
    model.clear_cache()
    apart = run_steps(generation, QUESTION_PATH[4:], deps)
    assert scored == []
    assert apart.status == together.status == "answered"
    assert [(s.text, s.chunk_id, s.relevance) for s in apart.sentences] == \
        [(s.text, s.chunk_id, s.relevance) for s in together.sentences]
