"""Unit tests of ``reports.view.tags``: tags in the spec vocabulary's order, grouped core /
stretch / other, with the points and cases of each tag added up."""

from __future__ import annotations

from dataclasses import replace

from test_reports_samples import REPLAY_FAIL, failing_report, passing_report

from grader.lab import active as active_lab
from reports.view.tags import stretch_tags, tag_group, tag_groups, tag_sort_key

TAGS, CORE_TAGS = active_lab().tags, active_lab().core_tags
STRETCH_TAGS = stretch_tags()


def test_core_and_stretch_split_the_vocabulary():
    assert set(CORE_TAGS) | set(STRETCH_TAGS) == set(TAGS) and not set(CORE_TAGS) & set(STRETCH_TAGS)
    assert [tag_group(t) for t in ("launch-counter", "padding", "whatever")] == ["core", "stretch", "other"]


def test_unknown_tags_sort_after_the_vocabulary_by_name():
    assert sorted(["zeta", "padding", "alpha", "eager"], key=tag_sort_key) == ["eager", "padding", "alpha", "zeta"]


def test_points_per_tag_add_up_to_the_report():
    report = failing_report()
    groups = tag_groups(report.specs, report.cases)
    assert [g.name for g in groups] == ["core", "stretch"]
    assert sum(g.score for g in groups) == report.score and sum(g.max_score for g in groups) == report.max_score
    for g in groups:
        assert [t.tag for t in g.tags] == sorted((t.tag for t in g.tags), key=tag_sort_key)
        assert all(t.group == g.name for t in g.tags)
    every = {t.tag: t for g in groups for t in g.tags}
    replay = every["single-launch-replay"]
    mine = [c for c in report.cases if c.tag == "single-launch-replay"]
    assert (replay.n_cases, replay.n_passed) == (len(mine), sum(c.status == "passed" for c in mine))
    assert replay.n_passed < replay.n_cases


def test_a_tag_outside_the_vocabulary_gets_a_group_of_its_own():
    report = passing_report()
    odd = replace(report.specs[0], id="extra", tag="my-own-tag", score=1.0, max_score=2.0)
    groups = tag_groups((*report.specs, odd))
    assert groups[-1].name == "other" and groups[-1].title == "Other"
    (tag,) = groups[-1].tags
    assert (tag.label, tag.score, tag.max_score, tag.percent) == ("my-own-tag", 1.0, 2.0, 50.0)


def test_no_specs_no_groups():
    assert tag_groups(()) == ()
    assert tag_groups((), (REPLAY_FAIL,))[0].tags[0].n_specs == 0  # cases alone still count


def test_a_core_tags_stricter_reading_is_a_group_of_its_own_so_the_core_total_is_the_handouts():
    report = passing_report()
    core = next(s for s in report.specs if s.tag in CORE_TAGS)
    stricter = replace(core, id="strict-reading", reading="graphgrade", score=0.0, max_score=2.0)
    groups = {g.name: g for g in tag_groups((*report.specs, stricter))}
    assert groups["stricter"].max_score == 2.0 and [t.tag for t in groups["stricter"].tags] == [core.tag]
    assert groups["core"].max_score == sum(s.max_score for s in report.specs if s.tag in CORE_TAGS)
    assert "graphgrade" in groups["stricter"].title
    assert tag_group("padding", "graphgrade") == "stretch"  # a stretch reading stays a stretch point
