#!/usr/bin/env python3
"""The test files are compiled in unity batches (IBFX_UNITY_TESTS): a batch
is one translation unit, so two files of one test binary must not declare
the same name at file scope, in their anonymous namespaces included. Which
files share a batch depends on the file list (and differs between the
release and the sanitizer trees), so this check is stricter than any one
batch: a name declared at file scope in two files of test/unit (or of
test/integration) fails, unless both are using-declarations of the same
entity or aliases of the same type. Helpers two files need belong in
test/support/; a file's own constants are named after it.

Usage: unity_names_check.py SOURCE_DIR
"""
import collections
import glob
import os
import re
import sys

# File-scope declarations start at column 0 (clang-format indents nothing
# inside a namespace in this code base).
TYPE = re.compile(r'^(?:struct|class|enum class|enum|union)\s+(\w+)\b(?!;)')
ALIAS = re.compile(r'^using\s+(\w+)\s*=\s*(.+?);')
USING_DECL = re.compile(r'^using\s+((?:[\w]+::)+)(\w+);')
# A function or a variable: a type, then the name, then ( = { or [.
DECL = re.compile(
    r'^(?=[A-Za-z])(?!TEST_CASE|SCENARIO|TEMPLATE_TEST_CASE|namespace|using|return|template|'
    r'static_assert|typedef|extern "C")'
    r'(?:(?:inline|static|constexpr|const|extern)\s+)*[\w:<>,\*&\s]+?[\s\*&](\w+)\s*(?:\(|=|\{|\[)')


def declarations(path):
    """(name, kind, detail, line) for each file-scope declaration of path."""
    out = []
    in_comment = False
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, 1):
            if in_comment:
                in_comment = '*/' not in line
                continue
            if line.startswith('/*'):
                in_comment = '*/' not in line
                continue
            if line.startswith(('//', '#', ' ', '\t', '}')):
                continue
            m = USING_DECL.match(line)
            if m:
                out.append((m.group(2), 'using', m.group(1) + m.group(2), number))
                continue
            m = ALIAS.match(line)
            if m:
                out.append((m.group(1), 'alias', m.group(2).strip(), number))
                continue
            m = TYPE.match(line)
            if m:
                out.append((m.group(1), 'type', '', number))
                continue
            m = DECL.match(line)
            if m and m.group(1) != 'main':
                out.append((m.group(1), 'decl', '', number))
    return out


def clashes(files):
    seen = collections.defaultdict(list)  # name -> [(file, kind, detail, line)]
    for path in files:
        for name, kind, detail, line in declarations(path):
            seen[name].append((path, kind, detail, line))
    problems = []
    for name, where in sorted(seen.items()):
        if len({w[0] for w in where}) < 2:
            continue
        kinds = {(w[1], w[2]) for w in where}
        # The same entity brought in twice, or the same alias: one meaning.
        if len(kinds) == 1 and next(iter(kinds))[0] in ('using', 'alias'):
            continue
        problems.append((name, where))
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else '.'
    status = 0
    for target in ('unit', 'integration'):
        files = sorted(glob.glob(os.path.join(root, 'test', target, '*.cpp')))
        for name, where in clashes(files):
            status = 1
            print(f'test/{target}: "{name}" is declared at file scope in '
                  f'{len({w[0] for w in where})} files, which a unity batch would compile as one:')
            for path, kind, detail, line in where:
                print(f'  {os.path.relpath(path, root)}:{line}: {kind} {detail}'.rstrip())
    if status:
        print('Name it after its file, or move a shared helper into test/support/ '
              '(test/CMakeLists.txt, IBFX_UNITY_TESTS).')
    return status


if __name__ == '__main__':
    sys.exit(main())
