"""The question as the person meant it (``retrieval.reading``): what every relevance decision after retrieve scores."""

from citestream.models import QuestionEvent
from citestream.qa.retrieve.lexicon import build_lexicon
from citestream.qa.retrieve.reading import asking_part, has_background, read_question

DOCS = {
    "qos": "The quality overall summary (QOS) should be text-based. FDA recommends against a scanned QOS.",
    "anda": "An abbreviated new drug application (ANDA) is submitted to the Office. Each ANDA is reviewed.",
    "sys": "A legacy system must meet the criteria. The system requirements are described in the section.",
    "ster": "Sterilization of the container closure system is validated.",
}


def test_typos_are_read_as_the_corpus_spells_them_and_english_words_are_left_alone():
    lexicon = build_lexicon(DOCS)
    reading = read_question("What critera must a legacy sytem meet?", lexicon)
    assert reading.asked == "What criteria must a legacy system meet?"
    assert reading.corrected == ["critera -> criteria", "sytem -> system"]
    # an English word the documents never use is not a typo of one they do: the question stays about serialization
    assert "serialization" in read_question("What are the serialization requirements?", lexicon).asked


def test_acronyms_are_written_out_as_the_documents_define_them_in_either_direction():
    lexicon = build_lexicon(DOCS)
    assert read_question("Is a scanned QOS acceptable?", lexicon).asked == \
        "Is a scanned quality overall summary (QOS) acceptable?"
    long_form = read_question("Is a scanned quality overall summary acceptable?", lexicon)
    assert long_form.asked == "Is a scanned quality overall summary (QOS) acceptable?"
    assert long_form.spelled_out == ["QOS"]
    # a lower-case short form that is no English word is the acronym too
    lower_case = read_question("is a scanned pdf ok for an anda??", lexicon)
    assert "abbreviated new drug application (ANDA)" in lower_case.asked


def test_a_long_question_is_asked_by_its_question_sentence_and_the_rest_is_background():
    asked, background = asking_part("I am preparing a submission for a tablet. The team disagrees about stability. "
                                    "Which ICH stability guidances apply?")
    assert asked == "Which ICH stability guidances apply?"
    assert background == "I am preparing a submission for a tablet. The team disagrees about stability."
    assert asking_part("What is a design space?") == ("What is a design space?", "")
    assert asking_part("We make tablets. Tell us the hold time.")[0] == "Tell us the hold time."  # no "?": the last


def test_retrieve_carries_the_reading_to_every_stage(settings, smoke_ingested):
    """On the real model and Postgres: the reading made in retrieve reaches the answer, and the typo'd question is
    answered as the plain one is."""
    from citestream.deps import Deps
    from citestream.inprocess import answer_inprocess

    deps = Deps(settings)
    answer = answer_inprocess(QuestionEvent(request_id="reading-typo",
                                            question="By how much did lecanemab slow cognitve decline?"), deps)
    assert answer.reading is not None and answer.reading.corrected == ["cognitve -> cognitive"]
    assert answer.status == "answered" and any("27% reduction" in s.text for s in answer.sentences)


def test_with_the_background_judge_the_judges_score_the_background_first_and_the_slot_stays_the_asking_ones():
    question = "We ship tablets to patients. How many days does FDA have to decide whether to file an application?"
    plain = read_question(question, None)
    assert plain.asked == plain.asking() == "How many days does FDA have to decide whether to file an application?"
    assert not has_background(plain.asked)
    read = read_question(question, None, with_background=True)
    assert read.asked == question and read.background == "We ship tablets to patients."
    assert read.asking() == plain.asked and read.slot == plain.slot == "duration"
    assert has_background(read.asked)
    assert not has_background(read_question("What is a design space?", None, with_background=True).asked)


def test_a_question_with_background_is_scored_by_the_background_judge_end_to_end(settings, smoke_ingested):
    """On the real models and Postgres: the shipped settings route a question that comes with the asker's situation
    to the background judge, which answers it as the question judge answers the plain one."""
    from citestream.deps import Deps
    from citestream.inprocess import answer_inprocess
    from citestream.relevance.routed import BackgroundRouted

    deps = Deps(settings)
    assert isinstance(deps.relevance, BackgroundRouted)
    background = "I run a memory clinic and patients keep asking me."
    answer = answer_inprocess(QuestionEvent(request_id="reading-background", question=(
        f"{background} By how much did lecanemab slow cognitive decline?")), deps)
    assert answer.reading is not None and answer.reading.background == background
    assert answer.reading.asking() == "By how much did lecanemab slow cognitive decline?"
    assert deps.relevance.name_for(answer.reading.asked) == deps.relevance.background.name != deps.relevance.plain.name
    assert answer.status == "answered" and any("27% reduction" in s.text for s in answer.sentences)
