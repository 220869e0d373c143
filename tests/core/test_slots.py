"""The asked slot (``core.slots``): what a question asks for, read from its grammar, and whether a sentence holds a
value of that kind. Questions here are made up; the golden sets never appear."""

import pytest

from citestream.core.slots import KINDS, asked_slot, fills
from citestream.models.common import AskedSlot


@pytest.mark.parametrize("question,kind", [
    ("How long may the samples be stored before analysis?", "duration"),
    ("Within how many business days does the office reply?", "duration"),
    ("How soon after the meeting are the minutes sent?", "duration"),
    ("How often must the equipment be recalibrated?", "frequency"),
    ("What percentage of the batch must be sampled?", "percentage"),
    ("At what temperature should the vials be kept?", "temperature"),
    ("How much is the application fee?", "money"),
    ("On what date did the guideline reach Step 4?", "date"),
    ("How many lots are tested per site?", "count"),
    ("What maximum dose is given to the animals?", "quantity"),
    ("Who signs the certification?", "actor"),
    ("Which office receives the amendment?", "actor"),
    ("Does the guidance cover biologics?", "yes_no"),
    ("Does the guidance say how long the records are kept?", "duration"),  # the embedded value decides
    ("Can the plan cover a larger run? What's the cap?", "quantity"),     # the last question sentence asks
    ("What does the regulation require for audit trails?", "requirement"),
    ("Which kinds of products count as complex?", "list"),
    ("How does the guideline define a hazard?", "definition"),
    ("Why is the study design randomized?", "open"),
    ("What decides how many units are sampled?", "open"),  # asks what decides, not a count
    ("Who do I ask if I am unsure how much sample the lab needs?", "actor"),  # the first wh-phrase asks
    ("How many days after the audit is the report sent?", "duration"),  # same place: the more specific kind
])
def test_the_asked_slot_is_read_from_the_question_grammar(question, kind):
    assert asked_slot(question) == kind


def test_every_kind_is_a_value_of_the_record_model():
    assert set(AskedSlot.__args__) == KINDS


@pytest.mark.parametrize("kind,sentence,held", [
    ("duration", "The report is sent within 30 calendar days of the inspection.", True),
    ("duration", "The report is sent once the inspection is closed.", False),
    ("duration", "Use is limited to 14 or fewer consecutive days per episode.", True),
    ("duration", "The waiver stays in effect only so long as the shortage lasts.", True),  # bounded by a condition
    ("duration", "Records are kept until the batch expires.", True),
    ("count", "Studies use both a rodent and a nonrodent species over 1-month dosing.", False),  # days, not things
    ("count", "Approval of two new drug products followed.", True),
    ("quantity", "The criteria might need to be narrowed.62", False),  # a footnote mark is no value
    ("quantity", "See section (3.2.S.4.1) of the dossier for details.", False),  # nor a section number
    ("quantity", "Growth of no more than 0.5log10 is accepted.", True),
    ("percentage", "Stroke risk falls by approximately 70%.", True),
    ("date", "The guideline reached Step 4 on 9 November 2005.", True),
    ("requirement", "requirements related to electronic signatures (e.g., §§ 11.50, 11.70)", False),
    ("requirement", "Each signature must be unique to one individual.", True),
    ("yes_no", "Any statement answers a yes/no question.", True),
    ("actor", "The ORA district office collects the sample.", True),  # an office's acronym names who
    ("actor", "The Compliance Branch manager reviews the file.", True),
    ("actor", "Tablets are tested for dissolution.", False),
])
def test_a_sentence_holds_the_asked_value_or_not(kind, sentence, held):
    assert fills(kind, sentence) is held


def test_the_answer_threshold_follows_what_is_asked_and_who_read_it():
    """A single value asked: its own threshold, whoever read it; a question the background judge read: the background
    threshold; a coordinated question's parts and any other: the ordinary one (``RelevancePolicy.threshold_for``)."""
    from citestream.core.policy import RelevancePolicy

    policy = RelevancePolicy()
    assert policy.threshold_for(("duration",)) == policy.threshold_for(("duration",), True) == 0.35
    assert policy.threshold_for(("requirement",), background=True) == policy.background_answer_threshold == 0.45
    assert policy.threshold_for(("requirement",)) == policy.threshold_for(("duration", "actor")) == 0.40
