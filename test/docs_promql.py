#!/usr/bin/env python3
"""Every PromQL query the docs show parses, and the recording rules it
names are shipped (docs_check.py checks the infiniband_ families).

    docs_promql.py SOURCE_DIR              check (promtool check rules)
    docs_promql.py SOURCE_DIR --list       print the queries as JSON
                                           (file, line, query, says), for
                                           the dashboards and Slurm jobs
                                           tests, which run each against a
                                           real Prometheus

A query is an indented (4-space) code block line of README.md or
docs/*.md that reads as PromQL: it names an infiniband_ series or a
recording rule (`level:metric:operation`) and is neither a shell command
nor YAML. Lines indented deeper continue the query above; `#` starts a
comment, as in PromQL. The queries go into one rules file as recording
rules, and `promtool check rules` parses every expression: a typo, an
unbalanced bracket or a wrong keyword fails with the doc's file and line.

What a query `says` it returns is the doc's own sentence for it: the
comment on its line, else the comment line just above it in the block,
else the prose paragraph before the block. The integration tests key
their expectations on it, so a query whose sentence changes needs its
check looked at again.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

# Indented lines that are not PromQL: shell, YAML, HTTP, prose examples.
NOT_PROMQL = re.compile(r"^(\$|sudo |curl |wget |ibfabric_exporter|systemctl |[A-Za-z_][\w.-]*:\s|[-*] |GET |HTTP/|<|\{|\[|\")")
SERIES = re.compile(r"\binfiniband_\w+|\b[a-z_]+:[a-z_]+:[a-z0-9_]+\b")


def split_comment(line):
    """(the line without a trailing PromQL comment, the comment's text):
    `#` outside a string starts it."""
    quoted = None
    for i, c in enumerate(line):
        if quoted:
            if c == quoted and line[i - 1] != "\\":
                quoted = None
        elif c in "\"'`":
            quoted = c
        elif c == "#":
            return line[:i], line[i + 1:].strip()
    return line, ""


def queries(path):
    """(line number, query, says) of each PromQL query in the file's code
    blocks."""
    out = []
    fenced = False
    current = None  # [line, text, says]
    comment = ""  # the comment line just above, in this block
    paragraph = []  # the prose paragraph before the block
    prose = []  # the prose lines read since the last blank line
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.lstrip().startswith("```"):
                fenced = not fenced
                current = None
                continue
            if fenced:
                continue
            indented = line.startswith("    ") and not line.startswith("    -")
            if not indented:
                if current:
                    out.append(tuple(current))
                current = None
                comment = ""
                if line.strip():
                    prose.append(line.strip())
                elif prose:
                    paragraph, prose = prose, []
                continue
            if prose:  # a block right under its paragraph
                paragraph, prose = prose, []
            body, said = split_comment(line[4:])
            body = body.rstrip()
            if not body.strip():
                if said and not line.startswith("     "):
                    comment = said
                continue
            if line.startswith("     "):
                # Continues the line above: the query's, or what was not one.
                if current:
                    current[1] += " " + body.strip()
                continue
            if current:
                out.append(tuple(current))
                current = None
            if SERIES.search(body) and not NOT_PROMQL.match(body):
                current = [number, body.strip(), said or comment or " ".join(paragraph)]
            comment = ""
        if current:
            out.append(tuple(current))
    return out


def all_queries():
    files = [os.path.join(SRC, "README.md")]
    docs = os.path.join(SRC, "docs")
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    found = []
    for path in files:
        for number, query, says in queries(path):
            found.append({"file": os.path.relpath(path, SRC), "line": number, "query": query,
                          "says": says})
    return found


def check(found):
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "docs.rules.yml")
        with open(rules, "w", encoding="utf-8") as f:
            f.write("groups:\n")
            for i, q in enumerate(found):
                f.write("  - name: q%d\n    rules:\n      - record: docs:query:%d\n        expr: %s\n"
                        % (i, i, json.dumps(q["query"])))
        result = subprocess.run(["promtool", "check", "rules", rules], capture_output=True, text=True)
        if result.returncode == 0:
            return []
        # promtool names the group of each bad expression: q<index>.
        bad = set(int(m) for m in re.findall(r"group \"q(\d+)\"", result.stdout + result.stderr))
        errors = ["%s:%d: does not parse: %s" % (found[i]["file"], found[i]["line"], found[i]["query"])
                  for i in sorted(bad)]
        return errors or ["promtool check rules failed:\n" + result.stdout + result.stderr]


def unknown_rules(found):
    """Recording rules the queries use that the shipped rules file lacks."""
    with open(os.path.join(SRC, "dashboards/rules/ibfabric_exporter.rules.yaml"), encoding="utf-8") as f:
        shipped = set(re.findall(r"record:\s*(\S+)", f.read()))
    errors = []
    for q in found:
        for name in re.findall(r"\b[a-z_]+:[a-z_]+:[a-z0-9_]+\b", q["query"]):
            if name not in shipped:
                errors.append("%s:%d: no shipped recording rule %s" % (q["file"], q["line"], name))
    return errors


def main():
    found = all_queries()
    if "--list" in sys.argv:
        json.dump(found, sys.stdout, indent=1)
        return 0
    if not found:
        print("docs_promql: no query found in the docs: the extractor is broken")
        return 1
    errors = check(found) + unknown_rules(found)
    for e in errors:
        print(e)
    if errors:
        return 1
    print("docs_promql: %d PromQL queries in README.md and docs/ parse" % len(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
