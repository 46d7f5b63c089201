"""Open the HTML report (make report's report.html) in headless Chromium as a reader would, at a
laptop's window size, and check what its first screen shows: the sentence that names the report's
scale ("This report: smoke scale ...") and the claims table's first row, both inside the window;
every row of the table has a verdict; every figure link of the table names a result the report
holds (a link to none blanks the page). Writes a screenshot of that first screen (--screenshot) to
look at. Exit status 2 with one line per failed check; Chromium missing is one of them.

The checks run in the page itself: a script added to a temporary copy of the report measures the
rendered elements once Snakemake's page has drawn itself (Chromium's --virtual-time-budget lets its
timers run) and writes what it found into the DOM, which --dump-dom prints."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from rlstudy.core.cli import parser, run
from rlstudy.core.errors import InputError

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars",
         "--virtual-time-budget=10000")
MARKER = "rlstudy-report-check"
SCALE_SENTENCE = re.compile(r"^This report: (paper|smoke|custom) scale\b")
# Measures the page once it has drawn itself; `results` is the report's own table of its results.
PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const height = window.innerHeight, width = window.innerWidth;
  const onScreen = (el) => {
    if (!el) return false;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0 && box.top >= 0 && box.bottom <= height && box.left >= 0 && box.right <= width;
  };
  const scale = [...document.querySelectorAll("strong")].find((el) => el.textContent.startsWith("This report:"));
  const table = document.querySelector("table.claims");
  const rows = table ? [...table.querySelectorAll("tbody tr")] : [];
  const links = table ? [...table.querySelectorAll("a[href^='javascript:app.showResultInfo']")] : [];
  const target = (a) => (a.getAttribute("href").match(/showResultInfo\\('(.*)'\\)/) || [])[1];
  const found = {
    window: [width, height],
    scale: scale ? scale.textContent : null,
    scale_on_screen: onScreen(scale),
    rows: rows.length,
    first_row_on_screen: onScreen(rows[0]),
    rows_without_verdict: rows.filter((row) => !/^(holds|fails|inconclusive)$/.test(
      (row.children[1] || {textContent: ""}).textContent.trim())).length,
    links: links.length,
    unknown_links: links.map(target).filter((path) => !(typeof results !== "undefined" && path in results)),
  };
  const out = document.createElement("pre");
  out.id = "MARKER";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
}, 1000));
</script>""".replace("MARKER", MARKER)


def browser(name: str | None) -> str:
    found = shutil.which(name) if name else next(filter(None, map(shutil.which, BROWSERS)), None)
    if not found:
        raise InputError(f"no headless browser: {name or ' / '.join(BROWSERS)} not on PATH "
                         "(Debian: apt-get install -y chromium)")
    return found


def measure(report: Path, chromium: str, size: tuple[int, int], timeout: float = 120) -> dict:
    """What PROBE finds in the report rendered in a window of `size`."""
    text = report.read_text(encoding="utf-8")
    end = text.rfind("</body>")  # the last: the page's own data may hold earlier ones
    if end < 0:
        raise InputError(f"{report}: not an HTML page (no </body>); rebuild it with make report")
    with tempfile.TemporaryDirectory() as folder:
        probed = Path(folder) / "report.html"
        probed.write_text(text[:end] + PROBE + text[end:], encoding="utf-8")
        dom = _chromium(chromium, size, ["--dump-dom", probed.as_uri()], timeout)
    match = re.search(rf'<pre id="{MARKER}">(.*?)</pre>', dom, re.DOTALL)
    if not match:
        raise InputError(f"{report}: the page did not draw itself in {chromium} (no measurement came back)")
    return json.loads(html.unescape(match.group(1)))


def _chromium(chromium: str, size: tuple[int, int], args: list[str], timeout: float) -> str:
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: nothing from an earlier run
        command = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}", *args]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as err:
            raise InputError(f"{chromium} did not finish in {timeout:g} s") from err
    if done.returncode != 0:
        raise InputError(f"{chromium} failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    return done.stdout


def problems(found: dict) -> list[str]:
    """Each check the measurement fails, in words."""
    failed = []
    if not found.get("scale") or not SCALE_SENTENCE.match(found["scale"]):
        failed.append(f"no sentence 'This report: <paper|smoke|custom> scale' on the front page (found {found.get('scale')!r})")
    elif not found.get("scale_on_screen"):
        failed.append("the sentence naming the scale is not on the first screen")
    if not found.get("rows"):
        failed.append("no claims table (table.claims) with rows on the front page")
    else:
        if not found.get("first_row_on_screen"):
            failed.append("the claims table's first row is not on the first screen")
        if found.get("rows_without_verdict"):
            failed.append(f"{found['rows_without_verdict']} rows of the claims table have no verdict")
    if found.get("unknown_links"):
        failed.append(f"figure links to results the report lacks: {found['unknown_links'][:3]}")
    return failed


def main() -> None:
    p = parser(__doc__)
    p.add_argument("report", nargs="?", default="report.html")
    p.add_argument("--screenshot", help="where to write the first screen as PNG (e.g. report-screen.png)")
    p.add_argument("--window", default="1280x900", help="the window's size, WIDTHxHEIGHT")
    p.add_argument("--browser", help=f"the browser's command (default: the first of {', '.join(BROWSERS)})")
    args = p.parse_args()
    report = Path(args.report)
    if not report.is_file():
        raise InputError(f"{report}: no such report; make it with make report")
    try:
        size = tuple(int(n) for n in args.window.lower().split("x"))
        assert len(size) == 2 and min(size) > 0
    except (ValueError, AssertionError):
        raise InputError(f"--window: expected WIDTHxHEIGHT, e.g. 1280x900; got {args.window!r}") from None
    chromium = browser(args.browser)
    found = measure(report, chromium, size)
    if args.screenshot:
        shot = Path(args.screenshot).resolve()
        _chromium(chromium, size, [f"--screenshot={shot}", report.resolve().as_uri()], 120)
        print(f"first screen: {shot}")
    failed = problems(found)
    print(f"{report}: {found.get('scale')!r}; {found.get('rows')} claims, {found.get('links')} figure links "
          f"(window {size[0]}x{size[1]})")
    if failed:
        raise InputError(f"{report}: " + "; ".join(failed))
    print("ok: the scale and the claims table are on the first screen")


if __name__ == "__main__":
    run(main)
