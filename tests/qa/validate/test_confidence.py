"""The confidence label is decided from the judge's scores, not taken from the model's word."""

from citestream.core.policy import RelevancePolicy
from citestream.models.answer import AnswerSentence
from citestream.qa.validate.stage import confidence_label

POLICY = RelevancePolicy()


def sentences(*scores: float | None) -> list[AnswerSentence]:
    return [AnswerSentence(n=i + 1, text="A sentence.", pdf="a.pdf", page=1, chunk_id=f"c{i}", anchor=f"C{i}",
                           relevance=s) for i, s in enumerate(scores)]


def test_high_needs_a_high_score_and_no_close_passage_elsewhere():
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.5) == "High"
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.9) == "Medium"  # another passage as close
    assert confidence_label(sentences(0.88), "High", POLICY, other=None) == "Medium"  # the model's word is not enough


def test_a_question_with_the_askers_background_is_never_high():
    """The judge scored the asking sentence alone: whether the asker's situation changes the answer is not in it."""
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.5, background=True) == "Medium"


def test_the_model_may_lower_the_label_never_raise_it():
    assert confidence_label(sentences(0.95), "Low", POLICY, other=None) == "Low"
    assert confidence_label(sentences(0.5), "High", POLICY, other=None) == "Medium"
    assert confidence_label(sentences(None), "High", POLICY) == "High"  # no scores: the model's label stands
