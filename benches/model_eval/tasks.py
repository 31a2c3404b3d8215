"""The tasks of the model evaluation: small coding jobs with objective checks.

Each task has a prompt, the files of its fixture workspace (written fresh for every run), the
kinds of tool that can do it (`needs`: the run is a "wrong tool" miss when it called tools but
none of these), the files it may change (every other fixture file must be left as it was), and
a check of the answer and the workspace after the run. The facts asked for are in the fixtures
only, so a model that does not use a tool cannot know them. Every fixture is generated here.
"""

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Task:
    name: str
    prompt: str
    files: dict
    check: object  # check(ws: Path, answer: str) -> (ok: bool, why: str)
    needs: set
    changes: set = field(default_factory=set)  # fixture files the task may change or remove


def says(*patterns):
    """A check that the answer matches every regex (case-insensitive)."""

    def check(_ws, answer):
        missing = [p for p in patterns if not re.search(p, answer, re.I)]
        return (not missing, f"answer lacks {missing}" if missing else "answer right")

    return check


WORDS = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def number(value):
    """A check that the answer holds the number (digits, with or without thousands separators)."""
    plain = str(value)
    grouped = f"{value:,}"
    word = WORDS.get(value)

    def check(_ws, answer):
        found = re.findall(r"\d[\d,]*", answer)
        hits = [n for n in found if n in (plain, grouped) or n.replace(",", "") == plain]
        if word and re.search(rf"\b{word}\b", answer, re.I):
            hits.append(word)
        return (bool(hits), f"answer has {value}" if hits else f"answer lacks {value} (numbers: {found[:6]})")

    return check


def file_is(path, expected):
    def check(ws, _answer):
        p = ws / path
        if not p.exists():
            return False, f"{path} missing"
        text = p.read_text(errors="replace")
        return (text == expected, "file right" if text == expected else f"{path} is {text[:120]!r}")

    return check


def runs(cmd, expect_in_stdout=None):
    """A check that a command passes in the workspace after the run (a test, a script)."""

    def check(ws, _answer):
        try:
            proc = subprocess.run(cmd, cwd=ws, shell=True, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            return False, f"`{cmd}` timed out"
        if proc.returncode != 0:
            return False, f"`{cmd}` exit {proc.returncode}: {(proc.stderr or proc.stdout)[-160:]!r}"
        if expect_in_stdout and expect_in_stdout not in proc.stdout:
            return False, f"`{cmd}` printed {proc.stdout[:120]!r}"
        return True, f"`{cmd}` passes"

    return check


def both(*checks):
    def check(ws, answer):
        for c in checks:
            ok, why = c(ws, answer)
            if not ok:
                return False, why
        return True, "all checks pass"

    return check


FILLER = "".join(f"Line {i}: nothing to see here.\n" for i in range(1, 6))

LOG = "".join(
    f"2026-11-0{1 + i % 9} 10:{i:02d}:00 {'ERROR code=E' + str(4000 + i * 7) if i % 5 == 0 else 'INFO ok'}\n"
    for i in range(1, 38)
) + "2026-11-09 11:00:00 ERROR code=E4821 disk full\n2026-11-09 11:01:00 INFO shutting down\n"

STATS_PY = """def mean(values):
    cnt = 0
    total = 0
    for v in values:
        total += v
        cnt += 1
    return total / cnt


if __name__ == "__main__":
    print(mean([1, 2, 3]))
"""

RANGE_PY = """def numbers_up_to(n):
    \"\"\"Returns the list 1, 2, ..., n (n included).\"\"\"
    return list(range(1, n))
"""

RANGE_TEST = """import unittest
from counting import numbers_up_to


class NumbersTest(unittest.TestCase):
    def test_includes_n(self):
        self.assertEqual(numbers_up_to(4), [1, 2, 3, 4])

    def test_one(self):
        self.assertEqual(numbers_up_to(1), [1])


if __name__ == "__main__":
    unittest.main()
"""

SIX_TESTS = "import unittest\n\n\nclass T(unittest.TestCase):\n" + "".join(
    f"    def test_{n}(self):\n        self.assertTrue({n} >= 0)\n\n" for n in range(6)
) + 'if __name__ == "__main__":\n    unittest.main()\n'

ADD_TEST = """from add import add

assert add(2, 3) == 5
assert add(-1, 1) == 0
print("add ok")
"""

GREETER = """def greet(name):
    return "Hi, " + name


def farewell(name):
    return "Bye, " + name
"""

BIG = "".join(f"record {i:04d}\n" for i in range(1, 1235))

TASKS = [
    # --- Read: a fact in a named file ------------------------------------------------------
    Task("read_value", "What port does config/app.ini set for the server?",
         {"config/app.ini": "[database]\nport = 5432\n\n[server]\nhost = 0.0.0.0\nport = 8437\n",
          "README.md": "# Demo app\n"},
         number(8437), {"read", "bash", "grep"}),
    Task("read_nested", "What total revenue does data/2024/q3/report.txt give?",
         {"data/2024/q3/report.txt": "Q3 report\nunits sold: 1204\ntotal revenue: 91337 EUR\n",
          "data/2024/q2/report.txt": "Q2 report\nunits sold: 990\ntotal revenue: 70111 EUR\n"},
         number(91337), {"read", "bash", "grep"}),
    Task("read_count_items", "How many items does shopping.txt list?",
         {"shopping.txt": "Shopping list\n- eggs\n- flour\n- butter\n- apples\n- rice\n- tea\n- soap\n"},
         number(7), {"read", "bash", "grep"}),
    Task("read_json", "Which version does package.json give?",
         {"package.json": json.dumps({"name": "widget", "version": "3.14.2", "private": True}, indent=2) + "\n"},
         says(r"3\.14\.2"), {"read", "bash", "grep"}),
    Task("read_last_error", "What is the code of the last ERROR in logs/server.log?",
         {"logs/server.log": LOG}, says(r"E4821"), {"read", "bash", "grep"}),
    Task("read_owner", "Who is the owner named in docs/team/OWNERS.md?",
         {"docs/team/OWNERS.md": "# Owners\n\nowner: Mirela Vasquez-Thorn\nbackup: none\n",
          "docs/index.md": "# Docs\n"},
         says(r"Mirela"), {"read", "bash", "grep"}),
    # --- Grep: text somewhere in the tree -------------------------------------------------
    Task("grep_define", "Which file defines the function compute_tax?",
         {"src/billing/invoice.py": "from billing.tax_rules import compute_tax\n\n\ndef total(x):\n    return x + compute_tax(x)\n",
          "src/billing/tax_rules.py": "def compute_tax(amount):\n    return amount * 0.2\n",
          "src/app.py": "print('app')\n"},
         says(r"tax_rules"), {"grep", "bash", "read"}),
    Task("grep_count_todo", "How many lines under src/ contain the word TODO?",
         {"src/a.py": "x = 1  # TODO rename\ny = 2\n# TODO tests\n",
          "src/lib/b.py": "def f():\n    pass  # TODO implement\n",
          "src/lib/c.py": "# TODO docs\n# TODO types\nz = 3\n",
          "notes.txt": "TODO not in src\n"},
         number(5), {"grep", "bash"}),
    Task("grep_constant", "What value is MAX_RETRIES set to in this project?",
         {"src/net/client.py": "import time\n\nMAX_RETRIES = 7\n\n\ndef fetch():\n    for _ in range(MAX_RETRIES):\n        time.sleep(0)\n",
          "src/net/server.py": "from net.client import MAX_RETRIES\n\nprint(MAX_RETRIES)\n",
          "src/main.py": "print('main')\n"},
         number(7), {"grep", "bash", "read"}),
    Task("grep_hidden", "Which file runs the command cargo test --locked?",
         {".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  test:\n    steps:\n      - run: cargo test --locked\n",
          "Cargo.toml": "[package]\nname = \"demo\"\n", "src/main.rs": "fn main() {}\n"},
         says(r"ci\.yml"), {"grep", "bash"}),
    Task("grep_importers", "Which files import the module requests? Name them all.",
         {"tools/fetch.py": "import requests\n\nrequests.get('http://x')\n",
          "tools/parse.py": "import json\n",
          "app/sync.py": "import os\nimport requests\n",
          "app/util.py": "def f():\n    return 1\n"},
         says(r"fetch\.py", r"sync\.py"), {"grep", "bash"}),
    Task("grep_error_message", "Which file contains the error message 'quota exceeded for tenant'?",
         {"server/limits.go": "package server\n\nvar ErrQuota = \"quota exceeded for tenant\"\n",
          "server/http.go": "package server\n\nfunc Serve() {}\n",
          "client/main.go": "package main\n\nfunc main() {}\n"},
         says(r"limits\.go"), {"grep", "bash"}),
    # --- Glob and ListDir: which files are there ------------------------------------------
    Task("glob_count_md", "How many .md files are in the docs folder, subfolders included?",
         {"docs/intro.md": "# Intro\n", "docs/guide/setup.md": "# Setup\n", "docs/guide/usage.md": "# Use\n",
          "docs/api/ref.md": "# Ref\n", "docs/api/ref.txt": "ref\n", "README.md": "# top\n"},
         number(4), {"glob", "bash", "ls"}),
    Task("glob_find_file", "Where is the file schema.sql? Give its path.",
         {"db/migrations/001_init/schema.sql": "CREATE TABLE t (id int);\n", "db/README.md": "db\n",
          "src/main.py": "print(1)\n"},
         says(r"db/migrations/001_init/schema\.sql"), {"glob", "bash", "ls", "grep"}),
    Task("glob_list_yaml", "List every YAML file (.yaml or .yml) in this project.",
         {"deploy/app.yaml": "a: 1\n", "deploy/db.yml": "b: 2\n", "ci/pipeline.yaml": "c: 3\n",
          "deploy/notes.txt": "no\n", "src/x.json": "{}\n"},
         says(r"app\.yaml", r"db\.yml", r"pipeline\.yaml"), {"glob", "bash", "ls"}),
    Task("ls_count", "How many files are in the folder assets/icons?",
         {"assets/icons/home.svg": "<svg/>\n", "assets/icons/user.svg": "<svg/>\n", "assets/icons/gear.png": "png\n",
          "assets/logo.svg": "<svg/>\n"},
         number(3), {"ls", "glob", "bash"}),
    Task("glob_newest_test", "Which Python test file is in the tests folder? Give its name.",
         {"tests/test_parser_roundtrip.py": "def test_x():\n    assert True\n", "tests/conftest.txt": "x\n",
          "src/parser.py": "def parse():\n    pass\n"},
         says(r"test_parser_roundtrip"), {"glob", "ls", "bash", "grep"}),
    # --- Edit: change a file in place ----------------------------------------------------
    Task("edit_word", "In greeting.txt replace the word Hello with Goodbye.",
         {"greeting.txt": "Hello, world!\nHave a nice day.\n"},
         file_is("greeting.txt", "Goodbye, world!\nHave a nice day.\n"), {"edit", "write", "bash"}, {"greeting.txt"}),
    Task("edit_value", "In settings.toml change the timeout from 30 to 60.",
         {"settings.toml": "[net]\nretries = 3\ntimeout = 30\nverbose = false\n"},
         file_is("settings.toml", "[net]\nretries = 3\ntimeout = 60\nverbose = false\n"), {"edit", "write", "bash"},
         {"settings.toml"}),
    Task("edit_rename_var", "In stats.py rename the variable cnt to count everywhere.",
         {"stats.py": STATS_PY},
         both(file_is("stats.py", STATS_PY.replace("cnt", "count")), runs("python3 stats.py", "2.0")),
         {"edit", "write", "bash"}, {"stats.py"}),
    Task("edit_fix_test", "The test in test_counting.py fails. Fix the bug in counting.py so that `python3 test_counting.py` passes.",
         {"counting.py": RANGE_PY, "test_counting.py": RANGE_TEST},
         runs("python3 test_counting.py"), {"edit", "write", "bash"}, {"counting.py"}),
    Task("edit_heading", "In notes.md change the heading '# Draft' to '# Final'.",
         {"notes.md": "# Draft\n\nFirst point.\nSecond point.\n"},
         file_is("notes.md", "# Final\n\nFirst point.\nSecond point.\n"), {"edit", "write", "bash"}, {"notes.md"}),
    Task("edit_remove_line", "Remove the line DEBUG=true from app.env and keep the other lines.",
         {"app.env": "NAME=demo\nDEBUG=true\nPORT=80\n"},
         file_is("app.env", "NAME=demo\nPORT=80\n"), {"edit", "write", "bash"}, {"app.env"}),
    # --- Write: new files, or a whole file ------------------------------------------------
    Task("write_hello", "Create a file hello.py that prints Hello, World!",
         {"README.md": "# Scripts\n"}, runs("python3 hello.py", "Hello, World!"), {"write", "bash", "edit"}),
    Task("write_json", "Create config.json holding a JSON object whose key name has the value demo.",
         {"README.md": "# Config\n"},
         lambda ws, _a: _json_name(ws), {"write", "bash", "edit"}),
    Task("append_line", "Add the line 'milk' at the end of groceries.txt, keeping what is there.",
         {"groceries.txt": "bread\ncheese\ncoffee\n"},
         lambda ws, _a: _lines_are(ws / "groceries.txt", ["bread", "cheese", "coffee", "milk"]),
         {"edit", "write", "bash"}, {"groceries.txt"}),
    Task("write_copy", "Create backup.txt with exactly the same content as original.txt.",
         {"original.txt": "alpha 17\nbeta 29\ngamma 31\n"},
         file_is("backup.txt", "alpha 17\nbeta 29\ngamma 31\n"), {"write", "bash", "read"}),
    # --- Bash: run something -------------------------------------------------------------
    Task("bash_script_output", "Run the script compute.sh and tell me the number it prints.",
         {"compute.sh": "#!/bin/sh\na=0; b=1; i=0\nwhile [ $i -lt 19 ]; do t=$((a+b)); a=$b; b=$t; i=$((i+1)); done\necho $b\n"},
         number(6765), {"bash"}),
    Task("bash_test_count", "Run `python3 -m unittest -v test_things` and tell me how many tests ran.",
         {"test_things.py": SIX_TESTS}, number(6), {"bash"}),
    Task("bash_line_count", "How many lines does records.txt have?",
         {"records.txt": BIG}, number(1234), {"bash", "read", "grep"}),
    Task("bash_python_version", "What does `python3 tool.py --version` print?",
         {"tool.py": "import sys\nif '--version' in sys.argv:\n    print('tool ' + '.'.join(['2', str(7 * 3), '9']))\n"},
         says(r"2\.21\.9"), {"bash"}),
    # --- Several steps -------------------------------------------------------------------
    Task("multi_find_read", "The file that defines class Invoice also sets a constant TAX_RATE. What is its value?",
         {"shop/models/invoice.py": "TAX_RATE = 0.19\n\n\nclass Invoice:\n    pass\n",
          "shop/models/cart.py": "class Cart:\n    pass\n", "shop/views.py": "from models.invoice import Invoice\n"},
         says(r"0\.19"), {"grep", "read", "bash"}),
    Task("multi_grep_edit", "The function greet is defined in one file under src/. Make it return 'Hello, ' instead of 'Hi, '.",
         {"src/people/greeter.py": GREETER, "src/main.py": "from people.greeter import greet\n\nprint(greet('Ann'))\n"},
         file_is("src/people/greeter.py", GREETER.replace('"Hi, "', '"Hello, "')), {"edit", "write", "bash"},
         {"src/people/greeter.py"}),
    Task("multi_sum_write", "Read numbers.txt, add the numbers up, and write the sum to sum.txt.",
         {"numbers.txt": "12\n30\n7\n51\n"},
         lambda ws, _a: _holds_number(ws / "sum.txt", 100), {"write", "bash"}),
    Task("multi_create_run", "Create add.py with a function add(a, b) that returns a + b, then run `python3 test_add.py`.",
         {"test_add.py": ADD_TEST}, runs("python3 test_add.py", "add ok"), {"write", "bash", "edit"}),
]


def _json_name(ws):
    p = ws / "config.json"
    if not p.exists():
        return False, "config.json missing"
    try:
        value = json.loads(p.read_text())
    except ValueError as err:
        return False, f"config.json is not JSON: {err}"
    ok = isinstance(value, dict) and value.get("name") == "demo"
    return ok, "config.json right" if ok else f"config.json is {value!r:.100}"


def _lines_are(path, lines):
    if not path.exists():
        return False, f"{path.name} missing"
    got = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    return got == lines, "file right" if got == lines else f"{path.name} lines are {got}"


def _holds_number(path, value):
    if not path.exists():
        return False, f"{path.name} missing"
    text = path.read_text()
    ok = re.findall(r"\d+(?:\.\d+)?", text) in ([str(value)], [f"{value}.0"])
    return ok, "file right" if ok else f"{path.name} is {text[:60]!r}"


EXECUTABLE = {"compute.sh"}


def write_fixture(task, ws: Path):
    for rel, content in task.files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
        if Path(rel).name in EXECUTABLE:
            p.chmod(0o755)


def by_name(names):
    known = {t.name: t for t in TASKS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown task(s) {unknown}; the tasks are: {', '.join(known)}")
    return [known[n] for n in names]
