"""L4 skeletons, exact source ranges and the token arithmetic of the context section.

These run on the fixture files directly (real tree-sitter, real tiktoken);
tests/test_context.py runs the whole `ctxkit context` command on indexed repos.
"""

from __future__ import annotations

import random

import pytest

import ctxkit
from conftest import FIXTURES


def skeleton(rel: str, first: int, last: int) -> str:
    data = (FIXTURES / rel).read_bytes()
    return ctxkit.skeleton_text(data, rel.split("/", 1)[1], first, last)


def test_python_method_skeleton_is_exact():
    assert skeleton("context_py/app/service.py", 12, 33) == '''\
    def place(self, order: Order, retries: int = 3) -> bool:
        ... (5 lines)
        total = order.total()
        if total <= 0:
            raise ValueError("empty order")
        for attempt in range(retries):
            ... (2 lines)
            try:
                save_order(order)
            except ConflictError:
                log_conflict(order, attempt)
                continue
            finally:
                ... (1 line)
                note = note.upper()
            return True
        return False
'''


def test_python_class_keeps_members_and_skeletonizes_methods():
    text = skeleton("context_py/app/service.py", 6, 40)
    assert text.startswith('class OrderService:\n    """Creates and ships orders."""\n'
                           '    def __init__(self, name: str) -> None:\n        ... (1 line)\n')
    assert "    def place_all(self, orders: list) -> int:\n        ... (1 line)\n" in text
    assert "            if self.place(order):\n                ... (1 line)\n" in text


def test_typescript_method_skeleton_is_exact():
    assert skeleton("context_ts/src/service.ts", 8, 28) == '''\
  async place(order: Order, retries: number = 3): Promise<boolean> {
    ... (1 line)
    const total = order.lines.reduce((a, b) => a + b, 0);
    if (total <= 0) {
      throw new Error("empty order");
    }
    for (let attempt = 0; attempt < retries; attempt++) {
      ... (2 lines)
      try {
        await saveOrder(order);
      } catch (error) {
        logConflict(order, attempt);
        continue;
      } finally {
        ... (1 line)
      }
      return true;
    }
    return false;
  }
'''


def test_javascript_function_skeleton_is_exact():
    assert skeleton("context_js/lib/service.js", 3, 21) == '''\
function place(order, retries = 3) {
  ... (2 lines)
  if (total <= 0) {
    throw new Error("empty order");
  }
  for (let attempt = 0; attempt < retries; attempt++) {
    ... (2 lines)
    try {
      saveOrder(order);
    } catch (error) {
      logConflict(order, attempt);
      continue;
    }
    return true;
  }
  return false;
}
'''


def test_go_method_skeleton_is_exact():
    assert skeleton("context_go/service.go", 11, 28) == '''\
func (s *Service) Place(o *Order, retries int) (bool, error) {
\t... (1 line)
\ttotal := len(o.Lines)
\tif total <= 0 {
\t\treturn false, errors.New("empty order")
\t}
\tfor attempt := 0; attempt < retries; attempt++ {
\t\t... (2 lines)
\t\tif err := SaveOrder(o); err != nil {
\t\t\tlogConflict(o, attempt)
\t\t\tcontinue
\t\t}
\t\t... (1 line)
\t\treturn true, nil
\t}
\treturn false, nil
}
'''


def test_rust_method_skeleton_is_exact():
    assert skeleton("context_rs/src/service.rs", 8, 26) == '''\
    pub fn place(&self, order: &Order, retries: u32) -> Result<bool, String> {
        ... (1 line)
        let total: i64 = order.lines.iter().sum();
        if total <= 0 {
            return Err("empty order".to_string());
        }
        for attempt in 0..retries {
            ... (2 lines)
            match save_order(order) {
                Ok(_) => return Ok(true),
                Err(_) => {
                    log_conflict(order, attempt);
                    continue;
                }
            }
        }
        Ok(false)
    }
'''


def test_java_method_skeleton_is_exact():
    assert skeleton("context_java/src/main/java/shop/OrderService.java", 10, 30) == '''\
    public boolean place(Order order, int retries) {
        ... (2 lines)
        if (total <= 0) {
            throw new IllegalArgumentException("empty order");
        }
        for (int attempt = 0; attempt < retries; attempt++) {
            ... (2 lines)
            try {
                Store.saveOrder(order);
            } catch (IllegalStateException e) {
                Store.logConflict(order, attempt);
                continue;
            } finally {
                ... (1 line)
            }
            return true;
        }
        return false;
    }
'''


def test_switch_and_match_keep_their_cases():
    data = b"""function f(n) {
  switch (n) {
    case 1:
      a = 1;
      b = 2;
      break;
    default:
      c = 3;
  }
}
"""
    assert ctxkit.skeleton_text(data, "x.js", 1, 10) == """function f(n) {
  switch (n) {
    case 1:
      ... (2 lines)
      break;
    default:
      ... (1 line)
  }
}
"""
    data = (b"def f(x):\n    match x:\n        case 1:\n            y = 2\n"
            b"        case _:\n            pass\n")
    assert ctxkit.skeleton_text(data, "x.py", 1, 6) == (
        "def f(x):\n    match x:\n        case 1:\n            ... (1 line)\n"
        "        case _:\n            ... (1 line)\n")


def test_with_yield_and_one_liners_stay():
    data = (b"def g(p):\n    with open(p) as f:\n        x = 1\n        yield f.read()\n"
            b"    if p: y = 2\n")
    assert ctxkit.skeleton_text(data, "g.py", 1, 5) == (
        "def g(p):\n    with open(p) as f:\n        ... (1 line)\n        yield f.read()\n"
        "    if p: y = 2\n")


def test_languages_without_rules_get_a_line_skeleton_with_real_lines():
    data = b"""int place(int n) {
    int a = 0;
    int b = 1;
    if (n > 0) {
        a = n;
    }
    save(a);
    return a + b;
}
"""
    assert ctxkit.skeleton_text(data, "shop.pseudo", 1, 9) == """int place(int n) {
    ... (2 lines)
    if (n > 0) {
        ... (1 line)
    }
    save(a);
    return a + b;
}
"""


def test_line_skeleton_keeps_definition_headers():
    data = (b"public class A {\n  void m() {\n    int a = 1;\n    foo();\n  }\n"
            b"  public static int Sum(int[] xs) {\n    var t = 0;\n"
            b"    foreach (var x in xs) { t += x; }\n    return t;\n  }\n}\n")
    assert ctxkit.skeleton_text(data, "A.pseudo", 1, 11) == """public class A {
  void m() {
    ... (1 line)
    foo();
  }
  public static int Sum(int[] xs) {
    ... (1 line)
    foreach (var x in xs) { t += x; }
    return t;
  }
}
"""


# The seven languages that became full languages: tree-sitter skeletons.
NEW_LANGUAGE_SKELETONS = {
    "c": ("""\
int place(int n) {
    int a = 0;
    int b = 1;
    if (n > 0) {
        a = n;
    }
    switch (n) {
    case 1:
        b = 2;
        save(b);
        break;
    default:
        b = 3;
    }
    int c = compute(a);
    return a + b + c;
}
""", """\
int place(int n) {
    ... (2 lines)
    if (n > 0) {
        ... (1 line)
    }
    switch (n) {
    case 1:
        ... (1 line)
        save(b);
        break;
    default:
        ... (1 line)
    }
    int c = compute(a);
    return a + b + c;
}
"""),
    "cpp": ("""\
double Shop::place(const Order& order) {
    double total = 0;
    int count = 0;
    for (const auto& line : order.lines) {
        total += line.price;
        log(line);
    }
    try {
        auto saved = store_->save(order);
    } catch (const std::exception& e) {
        count = -1;
        throw;
    }
    return total;
}
""", """\
double Shop::place(const Order& order) {
    ... (2 lines)
    for (const auto& line : order.lines) {
        ... (1 line)
        log(line);
    }
    try {
        auto saved = store_->save(order);
    } catch (const std::exception& e) {
        ... (1 line)
        throw;
    }
    return total;
}
"""),
    "cs": ("""\
public class Shop {
    public int Place(Order order) {
        var total = 0;
        var count = 1;
        foreach (var line in order.Lines) {
            total += line.Price;
            Log(line);
        }
        using (var tx = db.Begin()) {
            count = 2;
            tx.Commit();
        }
        return total;
    }
}
""", """\
public class Shop {
    public int Place(Order order) {
        ... (2 lines)
        foreach (var line in order.Lines) {
            ... (1 line)
            Log(line);
        }
        using (var tx = db.Begin()) {
            ... (1 line)
            tx.Commit();
        }
        return total;
    }
}
"""),
    "rb": ("""\
class Shop
  def place(order)
    total = 0
    count = 1
    order.lines.each do |line|
      total += line.price
      log(line)
    end
    if total > 100
      count = 2
      notify(order)
    end
    total
  end
end
""", """\
class Shop
  def place(order)
    ... (2 lines)
    order.lines.each do |line|
      total += line.price
      log(line)
    end
    if total > 100
      ... (1 line)
      notify(order)
    end
    ... (1 line)
  end
end
"""),
    "php": ("""\
<?php
class Shop {
    public function place($order) {
        $total = 0;
        $count = 1;
        foreach ($order->lines as $line) {
            $total += $line->price;
            $this->log($line);
        }
        if ($total > 100) {
            $count = 2;
        }
        return $total;
    }
}
""", """\
<?php
class Shop {
    public function place($order) {
        ... (2 lines)
        foreach ($order->lines as $line) {
            ... (1 line)
            $this->log($line);
        }
        if ($total > 100) {
            ... (1 line)
        }
        return $total;
    }
}
"""),
    "kt": ("""\
class A {
    fun f(x: Int): Int {
        val a = 1
        val b = 2
        if (x > 0) {
            val c = 3
            log(c)
        } else {
            return 0
        }
        when (x) {
            1 -> println("one")
            else -> {
                val d = 4
            }
        }
        for (i in 0..x) {
            total += i
        }
        return a + b
    }
}
""", """\
class A {
    fun f(x: Int): Int {
        ... (2 lines)
        if (x > 0) {
            ... (1 line)
            log(c)
        } else {
            return 0
        }
        when (x) {
            1 -> println("one")
            else -> {
                ... (1 line)
            }
        }
        for (i in 0..x) {
            ... (1 line)
        }
        return a + b
    }
}
"""),
    "swift": ("""\
class A {
    func f(x: Int) -> Int {
        let a = 1
        let b = 2
        guard x > 0 else {
            return 0
        }
        if x > 1 {
            let c = 3
            log(c)
        }
        switch x {
        case 1:
            print("one")
        default:
            let d = 4
        }
        for i in 0..<x {
            total += i
        }
        return a + b
    }
}
""", """\
class A {
    func f(x: Int) -> Int {
        ... (2 lines)
        guard x > 0 else {
            return 0
        }
        if x > 1 {
            ... (1 line)
            log(c)
        }
        switch x {
        case 1:
            print("one")
        default:
            ... (1 line)
        }
        for i in 0..<x {
            ... (1 line)
        }
        return a + b
    }
}
"""),
}


@pytest.mark.parametrize("ext", sorted(NEW_LANGUAGE_SKELETONS))
def test_new_languages_skeletons_keep_control_flow_and_calls(ext):
    source, expected = NEW_LANGUAGE_SKELETONS[ext]
    assert ctxkit.source_language(f"shop.{ext}") is not None
    assert ctxkit.skeleton_text(source.encode(), f"shop.{ext}", 1, source.count("\n")) == expected


@pytest.mark.parametrize("rel,first,last", [
    ("context_py/app/service.py", 12, 33), ("context_go/service.go", 11, 28),
    ("context_java/src/main/java/shop/OrderService.java", 10, 30),
])
def test_source_lines_are_the_files_bytes(rel, first, last):
    data = (FIXTURES / rel).read_bytes()
    expected = b"".join(data.split(b"\n")[i] + b"\n" for i in range(first - 1, last))
    assert ctxkit.source_lines(data, first, last) == expected


def test_source_lines_keep_crlf_and_a_last_line_without_newline():
    data = b"a\r\nb\r\nc"
    assert ctxkit.source_lines(data, 2, 3) == b"b\r\nc"
    assert ctxkit.source_lines(data, 1, 1) == b"a\r\n"


def test_pieces_ending_in_a_newline_add_up_exactly():
    # The budget relies on this: each piece starts with a non-blank character
    # and ends with a newline, so counts add up without recounting the text.
    rng = random.Random(7)
    alphabet = ["x", "9", "é", " ", "`", "#", "-", "\t", "'s", "(", "\u4e2d", "\n", "\r\n", "  "]
    for _ in range(300):
        pieces = []
        for _ in range(rng.randint(2, 6)):
            body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            head = rng.choice(["#", "-", "a", "`", "9", "(", "é"])
            pieces.append(head + body.rstrip() + "\n" * rng.randint(1, 2))
        whole = ctxkit.count_tokens("".join(pieces))
        assert whole == sum(ctxkit.count_tokens(p) for p in pieces), pieces


def test_fence_is_longer_than_backticks_inside():
    fenced = ctxkit._code_fence("x = '```'\n", "python")
    assert fenced.startswith("````python\n") and fenced.endswith("\n````")


@pytest.mark.parametrize("path,is_test", [
    ("tests/test_a.py", True), ("pkg/test_a.py", True), ("a_test.go", True),
    ("src/a.spec.ts", True), ("web/__tests__/x.js", True), ("src/test/java/shop/AT.java", True),
    ("src/main/java/shop/OrderTest.java", True), ("app/service.py", False),
    ("src/contest.py", False), ("lib/testing_utils_helpers.py", False),
])
def test_test_paths(path, is_test):
    assert ctxkit.is_test_path(path) is is_test
