#!/usr/bin/env python3
"""The user docs name only what the code has, and the code has nothing the
docs leave out.

    docs_check.py SOURCE_DIR

Reads README.md and docs/*.md against the code's own tables:
  flags        kFlags of config/command_line.cpp (and the old spellings)
  config keys  kKeys of config/config.cpp, and the keys the topology:,
               scores: and links: parsers accept (analysis/topology.cpp,
               analysis/scores.cpp, analysis/link_condition.cpp)
  endpoints    the paths daemon/web.cpp serves, and the telemetry path
  metrics      the infiniband_* names in the daemon's sources (histogram
               series _bucket/_sum/_count of a family count as it), and the
               aggregates render_scores.cpp builds per scope (render_scope)
and fails, naming the file, line and word, when a doc names a flag (in the
daemon's namespaces: --web.*, --ib.*, ...), config key, endpoint or metric
family the code does not have, or a tracker reference ("issue #15") a
reader cannot follow; when a flag is not in README.md; when a
config key is in no doc (dotted, `mad.timeout`, or bare in the doc of its
section, or in docs/configuration.md's table of sections); when a section
is not in README.md's table of sections; when an endpoint is not in
README.md; when the shipped config file lacks a key; or when a figure a doc
quotes of the shipped files is not theirs: "all N rules" (the alerts and
recording rules of dashboards/rules/ibfabric_exporter.rules.yaml, as the
vmalert and Prometheus tests count them) and "N Grafana dashboards" (the
JSON files of dashboards/); or when a page of docs/ is not linked from
docs/README.md, the index the README calls every document; or when a
file of the tree a doc names (`links/link_health_tracker.*`,
`test/integration/http_flood_test.cpp`) does not exist; or when
docs/architecture.md's layer table is not tools/layers: a row per layer,
in its order, each with its library, the folders it may include (`name*`
written "name (`.cpp` only: ...)", the daemon's "every layer") and the
libraries its CMakeLists.txt links, PUBLIC ones marked "(PUBLIC...)".

Under a heading about migrating from other exporters only the last column
of a table, this exporter's, is read: the rest names the other exporters'
metrics and flags on purpose.
"""

import glob
import os
import re
import sys

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

# Directories of the daemon's own code (not tests, benchmarks or fuzzers).
CODE_DIRS = ["analysis", "api", "base", "client", "config", "daemon", "discovery", "exposition", "fabric",
             "history", "http", "jobs", "links", "mad", "nodes", "receipts", "routing", "snapshot",
             "sweep", "views"]

# The flag namespaces of the daemon; other tools' flags (--preset, --test,
# benchmark options) are not its business.
FLAG_NAMESPACES = ("web.", "ib.", "sweep.", "state.", "log.", "config.")

# The doc that documents each section's keys bare, in its own YAML example.
SECTION_DOCS = {
    "topology": "docs/scores.md",
    "scores": "docs/scores.md",
    "links": "docs/links.md",
    "jobs": "docs/jobs.md",
    "history": "docs/status-page.md",
    "web": "docs/http.md",
}

# The table of every section with its keys.
SECTION_TABLE = "docs/configuration.md"

errors = []


def read(rel):
    with open(os.path.join(SRC, rel), encoding="utf-8") as f:
        return f.read()


def code_flags():
    text = read("config/command_line.cpp")
    table = text[text.index("kFlags{{"):text.index("}};", text.index("kFlags{{"))]
    flags = set()
    for entry in re.finditer(r'\{"([a-z][a-z0-9.-]*)",\s*"[A-Z]*",\s*"[a-z0-9_.]*",(.*?)\}(?=,\s*(?:\{|$))',
                             table, re.S):
        flags.add(entry.group(1))
        old = re.search(r'",\s*"([a-z][a-z0-9.-]*)"\s*$', entry.group(2).strip())
        if old:
            flags.add(old.group(1))
    if len(flags) < 15:
        sys.exit("docs_check: found only %d flags in config/command_line.cpp: update the parser" % len(flags))
    # The children the daemon starts (ps shows them).
    flags |= {"mad-worker", "discover-once"}
    return flags


def code_keys():
    text = read("config/config.cpp")
    table = text[text.index("kKeys{{"):]
    keys = set(re.findall(r'^\s*\{"([a-z_.]+)",', table, re.M))
    if len(keys) < 40:
        sys.exit("docs_check: found only %d keys in config/config.cpp: update the parser" % len(keys))
    for section, path in [("topology", "analysis/topology.cpp"), ("scores", "analysis/scores.cpp"),
                          ("links", "analysis/link_condition.cpp")]:
        found = set(re.findall(r'key == "([a-z_]+)"', read(path)))
        if len(found) < 3:
            sys.exit("docs_check: no keys of %s: in %s: update the parser" % (section, path))
        keys |= {section + "." + k for k in found}
    return keys


def code_endpoints():
    paths = set(re.findall(r'request\.path == "(/[^"]*)"', read("daemon/web.cpp")))
    paths.add("/metrics")  # telemetry_path's default
    return paths


def code_metrics():
    names = set()
    for d in CODE_DIRS:
        for path in glob.glob(os.path.join(SRC, d, "*.[ch]*")):
            with open(path, encoding="utf-8") as f:
                names |= set(re.findall(r'"(infiniband_[a-z0-9_]*[a-z0-9])"', f.read()))
    # Aggregates named per scope: infiniband_<scope><suffix>.
    render = read("exposition/render_scores.cpp")
    scopes = re.findall(r'render_scope\(\s*"([a-z]+)"', render)
    suffixes = re.findall(r'prefix \+ "(_[a-z_]+)"', render)
    if not scopes or not suffixes:
        sys.exit("docs_check: no aggregates in exposition/render_scores.cpp: update the parser")
    names |= {"infiniband_" + s + x for s in scopes for x in suffixes}
    return names


def job_names():
    """Prometheus job names of the shipped scrape configurations (not metrics)."""
    names = set()
    for path in glob.glob(os.path.join(SRC, "dashboards", "provisioning", "*.y*ml")):
        with open(path, encoding="utf-8") as f:
            names |= set(re.findall(r"job_name:\s*'?([a-z_]+)", f.read()))
    return names


def doc_files():
    return ["README.md"] + sorted(os.path.relpath(p, SRC) for p in glob.glob(os.path.join(SRC, "docs", "*.md")))


def doc_lines(rel):
    """(line number, text) of a doc. In the migration section only the last
    cell of a table row, this exporter's column, is checked."""
    skipping = False
    level = 0
    for number, line in enumerate(read(rel).splitlines(), 1):
        heading = re.match(r"^(#+) ", line)
        if heading:
            if skipping and len(heading.group(1)) <= level:
                skipping = False
            if re.search(r"migrat", line, re.I):
                skipping, level = True, len(heading.group(1))
        if not skipping:
            yield number, line
        elif line.startswith("|"):
            cells = [c for c in line.strip().strip("|").split(" | ")]
            yield number, cells[-1]


def check_docs(flags, keys, endpoints, metrics):
    jobs = job_names()
    sections = {k.split(".")[0] for k in keys if "." in k}
    top_level = {k for k in keys if "." not in k}
    for rel in doc_files():
        for number, line in doc_lines(rel):
            where = "%s:%d" % (rel, number)
            for m in re.finditer(r"(?i)\bissues? #\d+|(?<![\w&])#\d+\b", line):
                errors.append("%s: %s: a tracker reference the reader cannot follow" % (where, m.group(0)))
            for m in re.finditer(r"(?<![\w-])--([a-z][a-z0-9.-]*[a-z0-9])", line):
                name = m.group(1)
                if (name.startswith(FLAG_NAMESPACES) or name in flags) and name not in flags:
                    errors.append("%s: flag --%s does not exist (config/command_line.cpp)" % (where, name))
            for m in re.finditer(r"(?<![\w:.$/-])`?([a-z][a-z_]*\.[a-z][a-z0-9_]*)`?(?![\w(/-])", line):
                name = m.group(1)
                section = name.split(".")[0]
                if section in sections and name not in keys and not line[m.end():].startswith((".", ":")):
                    # "scores.md" and the like are files, not keys.
                    if not re.search(r"\.(md|json|yaml|yml|cpp|h|png|sh|bin)$", name):
                        errors.append("%s: config key %s does not exist" % (where, name))
            for m in re.finditer(r"(?:`|:\d{2,5}|<host>(?::\d+)?)(/(?:-/)?[a-z][a-z0-9_.]*)(?=[`?'\s),]|$)", line):
                path = m.group(1)
                if path not in endpoints and not path.startswith(("/etc", "/var", "/usr", "/dev", "/sys",
                                                                   "/lib", "/run", "/tmp", "/proc", "/opt",
                                                                   "/bin", "/home", "/slurm")):
                    errors.append("%s: endpoint %s is not served (daemon/web.cpp)" % (where, path))
            for m in re.finditer(r"(?<![\w:./-])(infiniband_[a-z0-9_]*[a-z0-9])(?![\w:<{(*]|\.\.\.|_\{)", line):
                name = m.group(1)
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                if name not in metrics and base not in metrics and name not in jobs:
                    errors.append("%s: metric %s is exported nowhere in the code" % (where, name))
    return sections, top_level


def check_documented(flags, keys, endpoints, sections):
    readme = read("README.md")
    docs = {rel: read(rel) for rel in doc_files()}
    everything = "\n".join(docs.values())
    for path in sorted(endpoints):
        if not re.search(r"`" + re.escape(path) + r"[`?]", readme):
            errors.append("README.md: endpoint %s (daemon/web.cpp) is not in the table of endpoints" % path)
    for flag in sorted(flags - {"mad-worker", "discover-once"}):
        if not re.search(r"(?<![\w-])--" + re.escape(flag) + r"(?![\w.-])", readme):
            errors.append("README.md: flag --%s (config/command_line.cpp) is not documented" % flag)
    # The table of sections with their keys, in docs/configuration.md:
    # | `mad:` | `global_inflight`, ... | ... |. (README.md's table of
    # sections says what each defaults to, without the keys.)
    table = set()
    for row in re.finditer(r"^\| `([a-z_]+):` \| ([^|]*)\|", docs[SECTION_TABLE], re.M):
        named = {row.group(1) + "." + k for k in re.findall(r"`([a-z_]+)`", row.group(2))}
        for key in sorted(named - keys):
            errors.append("%s: the table of sections names %s, which is no config key" % (SECTION_TABLE, key))
        table |= named
    for section in sorted(sections):
        if not re.search(r"^\| `%s:` \|" % re.escape(section), readme, re.M):
            errors.append("README.md: section %s: is not in the table of sections" % section)
    for key in sorted(keys):
        if key in table or re.search(r"(?<![\w.])" + re.escape(key) + r"(?![\w])", everything):
            continue
        if "." in key:
            section, bare = key.split(".", 1)
            home = SECTION_DOCS.get(section)
            if home and re.search(r"(`%s`|^\s*%s:)" % (re.escape(bare), re.escape(bare)), docs[home], re.M):
                continue
            errors.append("README.md: config key %s is not documented (not in %s's table of sections, nowhere as %s%s)"
                          % (key, SECTION_TABLE, key, ", nor as `%s` in %s" % (bare, home) if home else ""))
        else:
            errors.append("README.md: config key %s is not documented" % key)


def check_shipped_config(keys):
    rel = "config/ibfabric_exporter.yaml"
    text = read(rel)
    # The key under its section (indented) or at the top level; a commented
    # line counts for keys with no default value (scores.tick_seconds).
    for key in sorted(keys):
        parts = key.split(".")
        if len(parts) == 1:
            if not re.search(r"^%s:" % re.escape(key), text, re.M):
                errors.append("%s: lacks the key %s" % (rel, key))
            continue
        section = re.search(r"^%s:\n((?:[ #].*\n|\n)*)" % re.escape(parts[0]), text, re.M)
        if not section or not re.search(r"^\s+#?\s*%s:" % re.escape(parts[1]), section.group(1), re.M):
            errors.append("%s: lacks the key %s" % (rel, key))


NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve"]


def check_figures():
    rules = read("dashboards/rules/ibfabric_exporter.rules.yaml")
    rule_count = len(re.findall(r"^\s*- (?:alert|record):", rules, re.M))
    dashboard_count = len(glob.glob(os.path.join(SRC, "dashboards", "*.json")))
    if rule_count < 10 or dashboard_count < 1:
        sys.exit("docs_check: found %d rules and %d dashboards: update the parser" % (rule_count, dashboard_count))
    number = r"(\d+|%s)" % "|".join(NUMBER_WORDS)
    figures = [(r"\ball\s+%s\s+(?:shipped\s+|bundled\s+)?rules\b" % number, rule_count,
                "alerts and recording rules in dashboards/rules/ibfabric_exporter.rules.yaml"),
               (r"\b%s\s+Grafana\s+dashboards\b" % number, dashboard_count, "dashboards in dashboards/")]
    for rel in doc_files():
        text = read(rel)
        for pattern, actual, what in figures:
            for m in re.finditer(pattern, text, re.I):
                said = m.group(1).lower()
                value = int(said) if said.isdigit() else NUMBER_WORDS.index(said)
                if value != actual:
                    line = text.count("\n", 0, m.start()) + 1
                    errors.append("%s:%d: says \"%s\", there are %d %s"
                                  % (rel, line, " ".join(m.group(0).split()), actual, what))

    index = read("docs/README.md")
    for rel in doc_files():
        page = os.path.basename(rel)
        if rel.startswith("docs/") and page != "README.md" and "](%s)" % page not in index:
            errors.append("docs/README.md: no link to %s (the index of every document)" % page)


# How docs/architecture.md names what a layer's CMakeLists.txt links.
LINKED_AS = {"Threads::Threads": "Threads", "yaml-cpp": "yaml-cpp", "PkgConfig::IBUMAD": "libibumad",
             "PkgConfig::IBMAD": "libibmad", "PkgConfig::IBNETDISC": "libibnetdisc",
             "nlohmann_json::nlohmann_json": "nlohmann-json", "Boost::headers": "Boost",
             "OpenSSL::SSL": "OpenSSL", "ZLIB::ZLIB": "zlib", "crypt": "libcrypt",
             "PkgConfig::XXHASH": "libxxhash", "prometheus-cpp::core": "prometheus-cpp"}


def top_level_split(text):
    """`text` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in parts + [text[start:]] if p.strip()]


def check_layers():
    """docs/architecture.md's layer table against tools/layers and the
    layers' CMakeLists.txt."""
    layers = []  # (folder, [may include])
    for line in read("tools/layers").splitlines():
        words = line.split("#")[0].split()
        if words and words[0] != "outside":
            layers.append((words[0], words[1:]))
    rows = []
    for number, line in enumerate(read("docs/architecture.md").splitlines(), 1):
        m = re.match(r"^\| `(\w+)/` \| `(\w+)` \|.*\| ([^|]*) \| ([^|]*) \|$", line)
        if m:
            rows.append((number, m.group(1), m.group(2), m.group(3).strip(), m.group(4).strip()))
    where = "docs/architecture.md"
    if [r[1] for r in rows] != [f for f, _ in layers]:
        errors.append("%s: the layer table's rows are %s, tools/layers has %s (in that order)"
                      % (where, " ".join(r[1] for r in rows), " ".join(f for f, _ in layers)))
    may = dict(layers)
    below = []
    for folder, _ in layers:
        below.append(folder)
        may.setdefault(folder, [])
    for number, folder, library, includes, links in rows:
        if folder not in may:
            continue
        if library != "ibfx_" + folder:
            errors.append("%s:%d: %s/ builds ibfx_%s, not %s" % (where, number, folder, folder, library))
        if includes == "every layer":
            said = [f for f, _ in layers[:[f for f, _ in layers].index(folder)]]
            want = [n.rstrip("*") for n in may[folder]]
        else:
            said = []
            for part in top_level_split(includes.replace("—", "")):
                head = part.split("(")[0].split()
                said += [h + "*" for h in head] if "(" in part else head
            want = may[folder]
        if sorted(said) != sorted(want):
            errors.append("%s:%d: %s/ may include \"%s\", tools/layers says \"%s\""
                          % (where, number, folder, includes, " ".join(may[folder]) or "nothing"))
        cmake = read(os.path.join(folder, "CMakeLists.txt"))
        linked = set()
        for m in re.finditer(r"target_link_libraries\(\s*ibfx_%s\s+([^)]*)\)" % folder, cmake):
            visibility = "PRIVATE"
            for word in m.group(1).split():
                if word in ("PUBLIC", "PRIVATE", "INTERFACE"):
                    visibility = word
                elif not word.startswith("ibfx_"):
                    linked.add((LINKED_AS.get(word, word), visibility == "PUBLIC"))
        documented = set()
        for part in top_level_split("" if links == "(none)" else links):
            documented.add((part.split("(")[0].strip(), "(PUBLIC" in part))
        if documented != linked:
            errors.append("%s:%d: %s/ links \"%s\", its CMakeLists.txt links %s" % (
                where, number, folder, links,
                ", ".join(n + (" (PUBLIC)" if public else "") for n, public in sorted(linked)) or "(none)"))


def check_paths():
    """Every file of the source tree a doc names (a path under one of the
    tree's directories with a file extension, or `name.*`) exists."""
    dirs = CODE_DIRS + ["bench", "dashboards", "docs", "fuzz", "packaging", "test", "tools"]
    path = re.compile(r"(?<![\w/.-])((?:%s)/[\w./@*-]+)" % "|".join(dirs))
    extension = re.compile(r"\.(\*|cpp|h|py|sh|yaml|yml|json|md|service|cmake|rules|example)$")
    for rel in doc_files():
        for number, line in enumerate(read(rel).splitlines(), 1):
            for m in path.finditer(line):
                named = m.group(1).rstrip(".")
                if not extension.search(named):
                    continue
                found = glob.glob(os.path.join(SRC, named)) if "*" in named else os.path.exists(os.path.join(SRC, named))
                if not found:
                    errors.append("%s:%d: names %s, which the tree does not have" % (rel, number, named))


def main():
    flags, keys, endpoints, metrics = code_flags(), code_keys(), code_endpoints(), code_metrics()
    sections, _ = check_docs(flags, keys, endpoints, metrics)
    check_documented(flags, keys, endpoints, sections)
    check_shipped_config(keys)
    check_figures()
    check_paths()
    check_layers()
    for e in errors:
        print(e)
    if errors:
        print("docs_check: %d problem(s): fix the doc, or the code, or test/docs_check.py" % len(errors))
        return 1
    print("docs_check: %d flags, %d config keys, %d endpoints, %d metric families: README.md and docs/ agree"
          % (len(flags), len(keys), len(endpoints), len(metrics)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
