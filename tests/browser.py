"""Headless Chromium for the tests: screenshots, the rendered DOM, and axe-core audits.

axe-core runs without puppeteer: a copy of the page gets axe.min.js inlined
and a script that runs ``axe.run()`` and writes the JSON result into the DOM;
``chromium --dump-dom`` with a virtual time budget lets it finish, and the
result is read back from the dumped DOM.

Where axe-core lives: ``$AXE_CORE_JS`` (a path to axe.min.js), else
``.ci/node/node_modules/axe-core/axe.min.js`` (where ``.ci/run`` installs it),
else the global npm root.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]
# Blink's preferredColorScheme: 0 dark, 1 light. --force-dark-mode alone also darkens the page's
# own rendering (auto dark mode), which is not what a student with a dark OS theme sees.
SCHEMES = {"light": ["--blink-settings=preferredColorScheme=1"], "dark": ["--blink-settings=preferredColorScheme=0"]}
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_core_js() -> Path | None:
    candidates = []
    if os.environ.get("AXE_CORE_JS"):
        candidates.append(Path(os.environ["AXE_CORE_JS"]))
    candidates.append(REPO / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js")
    npm = shutil.which("npm")
    if npm:
        try:
            root = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            root = ""
        if root:
            candidates.append(Path(root) / "axe-core" / "axe.min.js")
    return next((p for p in candidates if p.is_file()), None)


def chromium(workdir: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    profile = workdir / "chromium-profile"
    profile.mkdir(parents=True, exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=workdir,
    )


def screenshot(workdir: Path, page: Path, size: str, shot: Path, scheme: str = "light") -> Path:
    proc = chromium(workdir, *SCHEMES[scheme], f"--screenshot={shot}", f"--window-size={size}", page.as_uri())
    assert shot.is_file(), f"no screenshot; chromium said:\n{proc.stderr[-2000:]}"
    return shot


_RUNNER = """
<script>
(function () {
  function put(obj) {
    var pre = document.createElement("pre");
    pre.id = "axe-results-json";
    pre.setAttribute("aria-hidden", "true");
    pre.textContent = JSON.stringify(obj);
    document.body.appendChild(pre);
  }
  var dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
  axe.run(document, {runOnly: {type: "tag", values: %(tags)s}, resultTypes: ["violations"]})
    .then(function (r) {
      put({dark: dark, violations: r.violations.map(function (v) {
        return {id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.map(function (n) { return {target: n.target, summary: n.failureSummary}; })};
      })});
    })
    .catch(function (e) { put({dark: dark, error: String(e)}); });
})();
</script>
"""


def axe_audit(workdir: Path, page: Path, axe_js: Path, scheme: str) -> dict:
    """Run axe-core's WCAG 2.1 A/AA rules on ``page`` in ``scheme``; returns
    ``{"dark": bool, "violations": [...]}`` (``dark``: what the page's media query saw)."""
    text = page.read_text(encoding="utf-8")
    script = "<script>" + axe_js.read_text(encoding="utf-8").replace("</script", "<\\/script") + "</script>"
    runner = _RUNNER % {"tags": json.dumps(WCAG_TAGS)}
    copy = page.with_name(f".axe-{scheme}-{page.name}")
    copy.write_text(text.replace("</body>", script + runner + "</body>", 1), encoding="utf-8")
    try:
        proc = chromium(workdir, *SCHEMES[scheme], "--virtual-time-budget=60000", "--dump-dom", copy.as_uri())
    finally:
        copy.unlink(missing_ok=True)
    match = re.search(r'<pre id="axe-results-json"[^>]*>(.*?)</pre>', proc.stdout, re.S)
    assert match, f"axe did not report; chromium said:\n{proc.stderr[-2000:]}"
    result = json.loads(html.unescape(match.group(1)))
    assert "error" not in result, result.get("error")
    return result


def describe(violations: list) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']}")
        for n in v["nodes"][:5]:
            lines.append(f"    {n['target']}: {n['summary'].splitlines()[-1] if n['summary'] else ''}")
    return "\n".join(lines)
