#!/usr/bin/env python3
"""README.md stays true (TAP).

  - The sample of what main.sh prints (the code block under the README's
    "What `main.sh` prints" heading) has the shape of a real run of the
    command main.sh runs by default: the same section headers and row
    labels in the same order, numbers where numbers are (a row's note too,
    where both counts are zero or both are not), console lines shaped as
    the run's, and a summary line with the same keys in the same order,
    numbers where numbers are.
  - Every relative link in README.md and docs/*.md names an existing file,
    and every #anchor a heading of it (GitHub's anchor rules).

Usage: test_readme.py SOURCE_ROOT [--readme FILE] [--run-output FILE]
--readme checks another copy of the README (its links resolved as if it
were SOURCE_ROOT/README.md); --run-output compares with a saved run's
output instead of booting a guest.  RINGSIDE_BIN is the ringside program.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import tap  # noqa: E402



# --- the sample block against a real run -----------------------------------

CONSOLE = re.compile(r"^\s*\d+\.\d{6} cpu-?\d+\+?\s+\| ")
# Lines listed under a table (damaged lines, missing records), not rows.
DETAIL = re.compile(r"^  (\S+ line, bytes |\S+ record seq |\(|\s)")
ROW = re.compile(r"^(.+?)\s+(-?\d+)(?:\s\s+(.*))?$")
NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)*")
VALUE_NUMBER = re.compile(r"-?\d+(?:\.\d+)?([a-z%]*)")


def default_command(root):
    """The arguments main.sh gives ringside before the user's."""
    text = open(os.path.join(root, "scripts", "main.sh")).read()
    m = re.search(r'^exec\s+"\$RINGSIDE_ROOT/build/collector/ringside"'
                  r'\s+(.*?)\s*"\$@"\s*$', text, re.M)
    return shlex.split(m.group(1)) if m else None


def readme_sample(text):
    """The first code block under the 'What `main.sh` prints' heading."""
    m = re.search(r"^#+ What `main\.sh` prints\s*\n(.*?)^```[^\n]*\n(.*?)^```",
                  text, re.M | re.S)
    if not m or re.search(r"^#", m.group(1), re.M):
        return None
    return m.group(2).splitlines()


def note_shape(note):
    return " ".join(NUMBER.sub("N", note or "").split())


def shape(line):
    """(kind, label, count or None, note) of one line of the tables."""
    if line.startswith("  "):
        m = ROW.match(line[2:])
        if m:
            return ("row", m.group(1).strip(), int(m.group(2)), m.group(3))
        return ("row", line.strip(), None, None)
    m = ROW.match(line)
    if m and ":" not in m.group(1):
        return ("header", m.group(1).strip(), int(m.group(2)), m.group(3))
    if ":" in line:
        return ("header", line[:line.index(":") + 1], None, None)
    return ("header", line.strip(), None, None)


def split_output(lines):
    """Console lines, table lines, the summary line (or None)."""
    console, table, summary = [], [], None
    in_table = False
    for line in lines:
        if line.startswith("ringside: "):
            summary = line
            break
        if line.startswith("ring: "):
            in_table = True
        if not in_table:
            console.append(line)
        elif line.strip() and not DETAIL.match(line):
            table.append(line)
    return console, table, summary


def compare_tables(want, got):
    """The first difference between README's table lines and the run's."""
    for i in range(max(len(want), len(got))):
        if i >= len(want):
            return "the run has a line the README does not: %r" % got[i]
        if i >= len(got):
            return "the README has a line the run does not: %r" % want[i]
        a, b = shape(want[i]), shape(got[i])
        if a[:2] != b[:2]:
            return ("line %d: the README has %s %r, the run %s %r\n"
                    "README: %s\nrun:    %s" %
                    (i + 1, a[0], a[1], b[0], b[1], want[i], got[i]))
        if (a[2] is None) != (b[2] is None):
            return ("line %d: a number on one side only\nREADME: %s\n"
                    "run:    %s" % (i + 1, want[i], got[i]))
        if a[2] is not None and (a[2] == 0) == (b[2] == 0) and \
                note_shape(a[3]) != note_shape(b[3]):
            return ("line %d: the notes differ in shape\nREADME: %s\n"
                    "run:    %s" % (i + 1, want[i], got[i]))
    return None


def summary_shape(line):
    pairs = []
    for tok in line[len("ringside: "):].split():
        key, eq, value = tok.partition("=")
        if not eq:
            return None
        m = VALUE_NUMBER.fullmatch(value)
        pairs.append((key, ("number", m.group(1)) if m else ("word",)))
    return pairs


def check_sample(root, readme_text, run_output):
    sample = readme_sample(readme_text)
    if not tap.check(sample is not None,
                     "README has a code block under 'What `main.sh` prints'"):
        return
    if run_output:
        out = open(run_output).read()
    else:
        args = default_command(root)
        if not tap.check(args is not None,
                         "scripts/main.sh's default ringside command found"):
            return
        tmp = tempfile.mkdtemp(prefix="ringside-readme-")
        r = subprocess.run([os.environ["RINGSIDE_BIN"]] + args +
                           ["--out", tmp], capture_output=True, text=True,
                           timeout=600)
        if not tap.check(r.returncode == 0,
                         "ringside %s ran (exit %d)" % (" ".join(args),
                                                    r.returncode),
                         r.stdout[-2000:] + r.stderr + "\nkept: " + tmp):
            return
        shutil.rmtree(tmp)  # guest.ram alone is the guest's RAM
        out = r.stdout
    w_console, w_table, w_summary = split_output(sample)
    g_console, g_table, g_summary = split_output(out.splitlines())

    shown = [l for l in w_console if l.strip() not in ("", "...")]
    bad = [l for l in shown if not CONSOLE.match(l)]
    tap.check(shown and not bad and g_console and
              all(CONSOLE.match(l) for l in g_console),
              "console lines are shaped as the run's (virtual time, vCPU, |)",
              "\n".join(bad or g_console[:3]))

    diff = compare_tables(w_table, g_table)
    tap.check(w_table and not diff,
              "the verdict tables: same headers and rows in the same order, "
              "numbers where numbers are", diff or "no table in the README")

    a = summary_shape(w_summary) if w_summary else None
    b = summary_shape(g_summary) if g_summary else None
    detail = "README: %s\nrun:    %s" % (w_summary, g_summary)
    tap.check(a and b and [k for k, _ in a] == [k for k, _ in b],
              "the summary line has the run's keys in the run's order", detail)
    tap.check(a and b and a == b,
              "the summary line has numbers where the run has numbers", detail)


# --- relative links ----------------------------------------------------------

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE = re.compile(r"`[^`]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def github_anchors(text):
    """The anchors GitHub gives the headings of a Markdown file."""
    seen, anchors = {}, set()
    for h in HEADING.findall(FENCE.sub("", text)):
        h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", h)
        h = h.replace("`", "").replace("*", "")
        slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        k = seen.get(slug, 0)
        seen[slug] = k + 1
        anchors.add(slug if k == 0 else "%s-%d" % (slug, k))
    return anchors


def links(text):
    body = CODE.sub("", FENCE.sub("", text))
    return LINK.findall(body) + REFDEF.findall(body)


def check_links(name, text, base):
    bad, count = [], 0
    for target in links(text):
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
            continue  # https:, mailto: ...
        count += 1
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(base, path)) if path else None
        if full and not os.path.exists(full):
            bad.append("%s: no such file" % target)
            continue
        if not anchor:
            continue
        if full and not full.endswith(".md"):
            bad.append("%s: an anchor into a file that is not Markdown"
                       % target)
            continue
        doc = open(full).read() if full else text
        if anchor not in github_anchors(doc):
            bad.append("%s: no such heading" % target)
    tap.check(count and not bad,
              "%s: its %d relative links resolve" % (name, count),
              "\n".join(bad) or "no relative links at all")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--readme")
    ap.add_argument("--run-output")
    o = ap.parse_args()
    root = os.path.abspath(o.root)
    readme = open(o.readme or os.path.join(root, "README.md")).read()
    check_sample(root, readme, o.run_output)
    check_links("README.md", readme, root)
    docs = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    tap.check(docs, "docs/*.md exist")
    for path in docs:
        check_links(os.path.relpath(path, root), open(path).read(),
                    os.path.dirname(path))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
