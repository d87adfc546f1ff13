#!/usr/bin/env python3
"""check_sizes.py: files and functions short enough to read at once (the style rules of docs/architecture.md).

  python3 tests/tools/check_sizes.py [--max-file-lines N] [--max-function-lines N] [--list] [ROOT] [PATH...]

Checks every C++ source (.hpp, .cpp, .cu) under kernels/, comm/, src/ and io/ of ROOT (default: the repository),
or the PATHs given:
  - a file has at most 600 lines (--max-file-lines);
  - a function body, from the line of its opening brace to the line of its closing brace, spans at most 80 lines
    (--max-function-lines). Lambdas and local classes count as part of the function that holds them.
--list prints every function with its length, longest first (to see what is close to the limit).
How functions are found (no compiler needed, so it runs in a second): comments, string and character literals and
preprocessor lines are blanked; every '{' is classified by the text before it since the last ';', '{' or '}' of
the same scope: "namespace ..." / "class|struct|union|enum ..." / 'extern "C"' open a scope; text ending in a
parameter list ')' (then const, noexcept, override, final, '&', '&&', '-> type'), or a constructor's initializer
list, opens a function unless the word before the '(' is a control keyword (if, for, while, switch, catch); every
other brace (initialisers, blocks inside functions) opens a plain block.
Exit 0 when every rule holds; 1 with one line per violation ("file:line: ...") otherwise.
"""
import argparse
import pathlib
import re
import sys

SOURCES = ("kernels", "comm", "src", "io")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "static_assert"}
TAIL = re.compile(r"\)\s*(?:const\b\s*|noexcept\b\s*(?:\([^()]*\))?\s*|override\b\s*|final\b\s*|mutable\b\s*|&&?\s*)*"
                  r"(?:->[^;{}]*)?$")
CTOR_INIT = re.compile(r"\)\s*(?:noexcept\b\s*)?:\s*[A-Za-z_][\w:<>, ]*\s*[({]")
SCOPE = re.compile(r"(?:^|\s)(?:namespace|class|struct|union|enum)\b|extern\s*$")


def blank(text):
    """Comments, literals and preprocessor lines replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            while i < n and text[i] != "\n":  # a directive, with its continuation lines
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if c == "R" and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append(re.sub(r"[^\n]", " ", text[i:end]))
                i = end
                continue
        if c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):  # not a digit separator 1'000
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) + 1 - i))
            i = j + 1
            continue
        out.append(c)
        line_start = c == "\n" or (line_start and c in " \t")
        i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of every function body in text."""
    found = []
    stack = []  # (kind, line of '{', head of this scope at the time)
    head = []  # text of the current statement at this depth (nested plain blocks included)
    line = 1
    for c in blank(text):
        if c == "\n":
            line += 1
        if c == "{":
            in_function = any(kind == "function" for kind, _, _, _ in stack)
            h = "".join(head)
            flat = re.sub(r"\{[^{}]*\}", "", h)  # braces of initialiser lists in a constructor's head
            kind = "block"
            if not in_function:
                if SCOPE.search(flat) and "(" not in flat.split("=")[0]:
                    kind = "scope"
                elif TAIL.search(flat.rstrip()) or CTOR_INIT.search(h):
                    before = flat[:flat.find("(")] if "(" in flat else flat
                    words = re.findall(r"[A-Za-z_]\w*|operator\S*", before)
                    if words and words[-1] not in CONTROL and "=" not in before.replace("operator", ""):
                        kind = "function"
                    elif "=" in before and "[" in flat:  # a lambda defined at namespace or class scope
                        kind = "function"
            name = re.sub(r"\s+", " ", flat.strip())[-100:]
            stack.append((kind, line, head, name))
            head = []
            continue
        if c == "}":
            if not stack:
                head = []
                continue
            kind, start, outer_head, name = stack.pop()
            if kind == "function":
                found.append((name, start, line))
            if kind == "block":  # a plain block stays part of the statement around it
                head = outer_head + ["{}"]
            else:
                head = []
            continue
        if c == ";":
            head = []
            continue
        head.append(c)
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-file-lines", type=int, default=600)
    ap.add_argument("--max-function-lines", type=int, default=80)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("root", nargs="?", default=str(pathlib.Path(__file__).resolve().parents[2]))
    ap.add_argument("paths", nargs="*")
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    if args.paths:
        files = [pathlib.Path(p) for p in args.paths]
    else:
        files = sorted(p for d in SOURCES for p in (root / d).rglob("*")
                       if p.suffix in (".hpp", ".cpp", ".cu", ".h") and p.is_file())
    problems, listing = [], []
    for path in files:
        text = path.read_text(errors="replace")
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines > args.max_file_lines:
            problems.append(f"{rel}:1: {lines} lines (at most {args.max_file_lines})")
        for name, first, last in functions(text):
            length = last - first + 1
            listing.append((length, f"{rel}:{first}: {name}"))
            if length > args.max_function_lines:
                problems.append(f"{rel}:{first}: function of {length} lines (at most {args.max_function_lines}): {name}")
    if args.list:
        for length, where in sorted(listing, reverse=True):
            print(f"{length:5d}  {where}")
    for p in problems:
        print(p)
    print(f"check_sizes: {len(files)} files, {len(listing)} functions, {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
