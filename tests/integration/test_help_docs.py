"""`profwrap --help` and docs/usage.md say the same, and say all of it:

- the options: every long option --help lists is a row of one of usage.md's tables, and every option a row
  there names is in --help (each with its short form where it has one);
- the commands: the usage lines of --help and of usage.md are the same;
- the domains: the ones profwrap knows (its own message for an unknown one lists them) are each in --help's
  --trace text and in usage.md's --trace row;
- the environment: every PROFWRAP_* variable the sources read or set is named in usage.md;
- the README's commands: every option the README's examples give profwrap is one --help lists;
- the JSON: every top-level key of a rank0.json and of a summary.json is named in docs/json.md."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pwtest import *  # noqa: E402,F401,F403

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def help_text():
    r = profwrap(["--help"])
    check_eq(r.rc, 0, "profwrap --help\n" + r.describe())
    check(r.out and not r.err, "profwrap --help prints on stdout only\n%s", r.describe())
    return r.out


def help_options(text):
    """The long options of --help's option lines (an option at the start of a line), with their short forms."""
    found = set()
    for line in text.splitlines():
        m = re.match(r"^\s+(-[a-zA-Z], )?(--[a-z][a-z-]*)", line)
        if m:
            found.add(m.group(2))
            if m.group(1):
                found.add(m.group(1)[:2])
    return found


def doc_options(text):
    """The options usage.md's table rows name in their first cell."""
    found = set()
    for line in text.splitlines():
        if not line.startswith("| `-"):
            continue
        for span in re.findall(r"`([^`]*)`", line.split(" | ")[0]):
            found.update(re.findall(r"(?<![\w-])(--?[a-zA-Z][a-z-]*)", span))
    return found


def usage_lines(text):
    return [" ".join(line.split()) for line in text.splitlines() if re.match(r"^\s*(usage: )?profwrap ", line)]


def test():
    text = help_text()
    usage = read(os.path.join("docs", "usage.md"))
    ours, docs = help_options(text), doc_options(usage)
    check(len(ours) >= 20, "options found in --help: %r", sorted(ours))
    check_eq(sorted(ours - docs), [], "options --help lists that docs/usage.md has no row for")
    check_eq(sorted(docs - ours), [], "options docs/usage.md has a row for that --help does not list")

    commands = [line.replace("usage: ", "") for line in usage_lines(text.split("\n\n")[0])]
    documented = usage_lines(usage.split("| option |")[0])
    check_eq(documented, commands, "the usage lines of docs/usage.md against --help")

    r = profwrap(["--trace=no-such-domain", "true"])
    m = re.search(r"\(known: ([a-z, ]+)\)", r.err)
    check(m, "the message for an unknown domain lists the known ones\n%s", r.describe())
    domains = [d for d in m.group(1).split(", ") if d != "all"]
    check(len(domains) >= 14, "domains: %r", domains)
    trace_help = text[text.index("--trace LIST"):text.index("--no-follow-fork")]
    trace_doc = [line for line in usage.splitlines() if line.startswith("| `--trace LIST`")]
    check_eq(len(trace_doc), 1, "docs/usage.md's --trace row")
    for d in domains:
        check(re.search(r"\b%s\b" % d, trace_help), "--help's --trace does not name the domain %s:\n%s", d,
              trace_help)
        check("`%s`" % d in trace_doc[0], "docs/usage.md's --trace row does not name the domain %s", d)

    variables = set()
    for top in ("common", "preload", "cli", "collector"):
        for base, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".c", ".h")):
                    with open(os.path.join(base, name)) as f:
                        variables.update(re.findall(r'"(PROFWRAP_[A-Z0-9_]+)', f.read()))
    check(len(variables) >= 20, "PROFWRAP_* variables in the sources: %r", sorted(variables))
    check_eq(sorted(v for v in variables if v not in usage), [],
             "PROFWRAP_* variables the sources use that docs/usage.md does not name")

    readme = read("README.md")
    options = set()
    for line in re.findall(r"(?:^|\s)profwrap (-[^\n]*)", readme):
        words = line.split()
        i = 0
        while i < len(words) and words[i].startswith("-"):  # profwrap's own options, up to the command
            options.add(words[i].split("=")[0])
            i += 2 if words[i] in ("-o", "--output", "--trace", "--ring-size") else 1
    check(options, "no option in the README's examples")
    check_eq(sorted(options - ours), [], "options the README's examples use that --help does not list")

    profile(["true"], "OUT")
    json_doc = read(os.path.join("docs", "json.md"))
    for name in ("rank0.json", "summary.json"):
        keys = list(load_json(os.path.join("OUT", name)))
        check(len(keys) >= 10, "%s's keys: %r", name, keys)
        check_eq([k for k in keys if '"%s"' % k not in json_doc and "`%s`" % k not in json_doc], [],
                 "keys of %s that docs/json.md does not name" % name)


if __name__ == "__main__":
    main(test)
