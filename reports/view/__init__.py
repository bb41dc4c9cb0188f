"""Pure helpers shared by the renderers: the reader's view of a :class:`grader.judging.results.Report`.

Everything here is a pure function of typed report objects, one job per module:

- :mod:`.text`: safe text (control characters, ANSI codes, one-line forms, slugs);
- :mod:`.formats`: points, percentages, durations, step numbers;
- :mod:`.labels`: the words for tags, statuses and tag groups;
- :mod:`.tags`: tag order and groups, and the points per tag;
- :mod:`.cases`: one case as a reader may see it; to a student a hidden case is one bit;
- :mod:`.specs`: the specs of a report with their cases;
- :mod:`.headline`: the sentence at the top of a student's report;
- :mod:`.causes`: one message per cause, a page's causes ranked by the points they stop and
  laid out per spec, and the cause to fix first;
- :mod:`.notation`: the short forms a report uses, explained once per page;
- :mod:`.plain`: one case as plain text (Gradescope, JUnit, PrairieLearn);
- :mod:`.chart`: the launch picture's geometry (SVG coordinates).

Renderers import what they need from here (``from reports import view as v``).
"""

from __future__ import annotations

from .cases import (
    HIDDEN_NOT_PASSED,
    HIDDEN_PASSED,
    CaseView,
    case_views,
    full_view,
    observed_text,
    one_bit,
    student_duration,
)
from .causes import FixFirst, class_cause, fix_first, page_causes
from .chart import Bar, LaunchChart, LaunchGroup, Tick, launch_chart, nice_top
from .formats import fmt_percent, fmt_points, fmt_seconds, percent, step_no
from .headline import Headline, headline
from .labels import GROUP_TITLES, STATUS_ICONS, STATUS_LABELS, tag_label
from .notation import case_notes, notation_notes, page_notes
from .plain import case_text
from .specs import SpecView, spec_titles, spec_views
from .tags import GroupView, TagView, stretch_tags, tag_group, tag_groups, tag_sort_key
from .text import clean_text, one_line, slug

__all__ = [
    "observed_text",
    "GROUP_TITLES",
    "HIDDEN_NOT_PASSED",
    "HIDDEN_PASSED",
    "STATUS_ICONS",
    "STATUS_LABELS",
    "Bar",
    "CaseView",
    "FixFirst",
    "GroupView",
    "Headline",
    "LaunchChart",
    "LaunchGroup",
    "SpecView",
    "TagView",
    "Tick",
    "case_notes",
    "case_text",
    "case_views",
    "clean_text",
    "class_cause",
    "fix_first",
    "fmt_percent",
    "fmt_points",
    "fmt_seconds",
    "full_view",
    "headline",
    "launch_chart",
    "nice_top",
    "notation_notes",
    "one_bit",
    "one_line",
    "page_causes",
    "page_notes",
    "percent",
    "slug",
    "stretch_tags",
    "spec_titles",
    "spec_views",
    "step_no",
    "student_duration",
    "tag_group",
    "tag_groups",
    "tag_label",
    "tag_sort_key",
]
