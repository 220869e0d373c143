"""The confidence label is decided from the judge's scores, not taken from the model's word."""

from citestream.core.policy import RelevancePolicy
from citestream.models.answer import AnswerSentence
from citestream.qa.validate.stage import confidence_label, second_opinion

POLICY = RelevancePolicy()


def sentences(*scores: float | None) -> list[AnswerSentence]:
    return [AnswerSentence(n=i + 1, text="A sentence.", pdf="a.pdf", page=1, chunk_id=f"c{i}", anchor=f"C{i}",
                           relevance=s) for i, s in enumerate(scores)]


def test_high_needs_a_high_score_from_both_judges():
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.5, agreement=0.93) == "High"
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.5, agreement=0.80) == "Medium"  # judges differ
    assert confidence_label(sentences(0.80), "High", POLICY, other=None, agreement=0.99) == "Medium"  # the first low


def test_the_second_judge_is_asked_only_when_the_first_would_make_it_high():
    class Second:
        asked: list = []

        def score(self, question, texts):
            self.asked.append(texts)
            return [0.5 + 0.1 * i for i in range(len(texts))]

    second = Second()
    assert second_opinion(second, "q", sentences(0.95, 0.9), POLICY) == 0.6 and second.asked == [["A sentence."] * 2]
    assert second_opinion(second, "q", sentences(0.70), POLICY) is None and len(second.asked) == 1
    assert second_opinion(None, "q", sentences(0.95), POLICY) is None


def test_a_question_with_the_askers_background_is_never_high():
    """The judge scored the asking sentence alone: whether the asker's situation changes the answer is not in it."""
    assert confidence_label(sentences(0.95), "High", POLICY, other=0.5, background=True) == "Medium"


def test_the_model_may_lower_the_label_never_raise_it():
    assert confidence_label(sentences(0.95), "Low", POLICY, other=None) == "Low"
    assert confidence_label(sentences(0.5), "High", POLICY, other=None) == "Medium"
    assert confidence_label(sentences(None), "High", POLICY) == "High"  # no scores: the model's label stands
