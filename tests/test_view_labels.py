"""Unit tests of ``reports.view.labels``: every word of the fixed vocabularies is there, so no
report shows a raw tag id or status id where a reader expects words."""

from __future__ import annotations

from grader.judging.results import STATUSES
from grader.lab import active as active_lab
from reports.view.labels import GROUP_TITLES, STATUS_ICONS, STATUS_LABELS, tag_label
from reports.view.tags import tag_group

TAGS = active_lab().tags
TAG_LABELS = {t: tag_label(t) for t in TAGS}  # the lab's behaviour titles


def test_every_tag_of_the_spec_vocabulary_has_a_label_and_no_other():
    assert set(TAG_LABELS) == set(TAGS)
    assert len(set(TAG_LABELS.values())) == len(TAG_LABELS)  # two tags never read alike


def test_every_status_has_a_word_and_a_distinct_icon():
    assert set(STATUS_LABELS) == set(STATUSES) == set(STATUS_ICONS)
    assert len(set(STATUS_ICONS.values())) == len(STATUS_ICONS)


def test_every_group_a_tag_can_fall_in_has_a_title():
    groups = {tag_group(t, reading) for t in TAGS for reading in ("handout", "graphgrade")}
    assert groups | {tag_group("not-a-tag")} == set(GROUP_TITLES)


def test_an_unknown_tag_is_shown_as_it_is():
    assert tag_label("my-own-tag") == "my-own-tag"
    assert tag_label("padding") == "Batch padding"
