"""Logs for the held-out search set: made here by real tools the tuned set never used.

cargo build and cargo test (a Rust panic with its backtrace), go build, go vet
and go test (a nil-map panic, a test timeout, and a 150,000-subtest run of about
25 MB with one corrupted shard), tsc, eslint and jest (installed from npm into
tests/bench/.work/node), two Node.js crashes, ruff, and a real Maven run that
stops offline. Tools that cannot run here (docker build, kubectl, terraform,
Playwright, a Maven test run) come as fixtures in tests/fixtures/logs, written
in each tool's real format. Logs are cached under the work directory; a tool
that is missing leaves its log out (the benchmark says which).

    python tests/bench/unseen_logs.py     # make the logs and list them
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures" / "logs"
NODE_DIR = HERE / ".work" / "node"   # shared by every work directory
NPM_PACKAGES = ("typescript@5", "eslint@9", "@eslint/js@9", "globals@15", "jest@29")

CARGO_BUILD = {
    "Cargo.toml": """\
        [package]
        name = "ledger"
        version = "0.1.0"
        edition = "2021"
        """,
    "src/main.rs": """\
        use std::collections::HashMap;
        use std::fmt::Write;

        #[derive(Debug)]
        struct Account {
            id: u32,
            owner: String,
            balance_cents: i64,
        }

        fn total(accounts: &[Account]) -> i64 {
            let mut sum = 0;
            for account in accounts {
                sum += account.balance_cents;
            }
            sum
        }

        fn find(accounts: &HashMap<u32, Account>, id: u32) -> Option<&Account> {
            accounts.get(&id)
        }

        fn describe(account: &Account) -> String {
            let label: String = account.id;
            format!("{} {}", label, account.owner)
        }

        fn main() {
            let mut accounts = HashMap::new();
            accounts.insert(1, Account { id: 1, owner: "ana".into(), balance_cents: 1200 });
            let list: Vec<Account> = Vec::new();
            println!("{}", total(&list));
            println!("{:?}", find(&accounts, 1));
            println!("{}", ballance_report(&accounts));
        }
        """,
}

CARGO_TEST = {
    "Cargo.toml": CARGO_BUILD["Cargo.toml"],
    "src/lib.rs": """\
        pub fn parse_amount(text: &str) -> Result<i64, std::num::ParseIntError> {
            let (whole, cents) = text.split_once('.').unwrap_or((text, "0"));
            Ok(whole.parse::<i64>()? * 100 + cents.parse::<i64>()?)
        }

        pub fn withdraw(balance: u32, amount: u32) -> u32 {
            balance - amount
        }

        pub fn nth_fee(fees: &[u32], n: usize) -> u32 {
            fees[n]
        }

        pub fn apply_batch(entries: &[&str]) -> i64 {
            entries.iter().map(|e| parse_amount(e).expect("batch entry must be a valid amount")).sum()
        }
        """,
    "tests/ledger_tests.rs": """\
        use ledger::*;

        #[test]
        fn parses_whole_amounts() { assert_eq!(parse_amount("12").unwrap(), 1200); }
        #[test]
        fn parses_cents() { assert_eq!(parse_amount("12.5").unwrap(), 1250); }
        #[test]
        fn withdraw_within_balance() { assert_eq!(withdraw(10, 3), 7); }
        #[test]
        fn withdraw_more_than_balance() { assert_eq!(withdraw(3, 10), 0); }
        #[test]
        fn fee_lookup_past_end() { assert_eq!(nth_fee(&[1, 2, 3], 5), 0); }
        #[test]
        fn batch_with_bad_entry() { assert_eq!(apply_batch(&["1.00", "x.50"]), 150); }
        #[test]
        fn batch_of_two() { assert_eq!(apply_batch(&["1.00", "2.00"]), 300); }
        """,
}

GO_INV = {
    "go.mod": "module example.com/inv\n\ngo 1.19\n",
    "store/store.go": """\
        package store

        import "fmt"

        type Store struct {
        \tstock    map[string]int
        \treserved map[string]int
        }

        func New() *Store { return &Store{stock: map[string]int{}} }

        func (s *Store) Add(sku string, n int) { s.stock[sku] += n }

        // Reserve takes up to n items of sku and returns how many it took.
        func (s *Store) Reserve(sku string, n int) int {
        \thave := s.stock[sku]
        \tif n > have {
        \t\tn = have - 1
        \t}
        \ts.stock[sku] -= n
        \ts.reserved[sku] += n
        \treturn n
        }

        func (s *Store) Label(sku string) string {
        \treturn fmt.Sprintf("%s:%d", sku, s.stock[sku])
        }
        """,
    "store/store_test.go": """\
        package store

        import "testing"

        func TestAdd(t *testing.T) {
        \ts := New()
        \ts.Add("apple", 3)
        \tif got := s.stock["apple"]; got != 3 {
        \t\tt.Fatalf("stock = %d, want 3", got)
        \t}
        }

        func TestLabel(t *testing.T) {
        \ts := New()
        \ts.Add("pear", 2)
        \tif got := s.Label("pear"); got != "pear:2" {
        \t\tt.Errorf("Label(pear) = %q, want %q", got, "pear:2")
        \t}
        }

        func TestReserveMoreThanStock(t *testing.T) {
        \ts := &Store{stock: map[string]int{"apple": 4}, reserved: map[string]int{}}
        \tif got := s.Reserve("apple", 9); got != 4 {
        \t\tt.Errorf("Reserve(apple, 9) = %d, want 4", got)
        \t}
        }

        func TestReserveFresh(t *testing.T) {
        \ts := New()
        \ts.Add("plum", 5)
        \ts.Reserve("plum", 2)
        }
        """,
    "sched/sched.go": """\
        package sched

        import "time"

        // WaitForSlot blocks until a slot is free; the channel is never written.
        func WaitForSlot(slots chan struct{}) {
        \t<-slots
        \ttime.Sleep(time.Millisecond)
        }
        """,
    "sched/sched_test.go": """\
        package sched

        import "testing"

        func TestQuick(t *testing.T) {
        \tt.Log("scheduler starts with no errors")
        }

        func TestWaitForSlot(t *testing.T) {
        \tWaitForSlot(make(chan struct{}))
        }
        """,
    "report/report.go": """\
        package report

        import (
        \t"fmt"
        \t"sync"
        )

        type Counter struct {
        \tmu sync.Mutex
        \tn  int
        }

        func Snapshot(c Counter) int { return c.n }

        func Line(name string, count int) string {
        \treturn fmt.Sprintf("%s has %d items", name, name)
        }

        func Check(x int) int {
        \tx = x
        \treturn x
        }

        func Done() {
        \treturn
        \tfmt.Println("done")
        }
        """,
}

GO_BILLING = {
    "go.mod": "module example.com/billing\n\ngo 1.19\n",
    "cmd/main.go": """\
        package main

        import (
        \t"fmt"
        \t"os"
        )

        type Invoice struct {
        \tID    int
        \tTotal float64
        }

        func sum(items []Invoice) float64 {
        \tvar total float64
        \tfor _, it := range items {
        \t\ttotal += it.Totl
        \t}
        \treturn total
        }

        func main() {
        \tcount := 0
        \tvar n int = "3"
        \tfmt.Println(sum(nil), n)
        \tfmt.Println(formatInvoice(Invoice{}))
        }
        """,
}

GO_REPLICA = {
    "go.mod": "module example.com/replica\n\ngo 1.19\n",
    "replica/replica.go": """\
        package replica

        import "hash/crc32"

        // Copy returns the bytes a shard holds after replication and their checksum.
        func Copy(shard int, data []byte) ([]byte, uint32) {
        \tout := append([]byte(nil), data...)
        \tif shard == 48213 {
        \t\tout[len(out)/2] ^= 0x40 // a flipped bit in transit
        \t}
        \treturn out, crc32.ChecksumIEEE(out)
        }
        """,
    "replica/replica_test.go": """\
        package replica

        import (
        \t"fmt"
        \t"hash/crc32"
        \t"testing"
        )

        func TestShardSync(t *testing.T) {
        \tfor shard := 0; shard < 150000; shard++ {
        \t\tshard := shard
        \t\tt.Run(fmt.Sprintf("shard_%05d", shard), func(t *testing.T) {
        \t\t\tdata := []byte(fmt.Sprintf("payload-%d-%d", shard, shard*7919))
        \t\t\tif shard%97 == 3 {
        \t\t\t\tt.Logf("shard %05d: peer slow, retrying after transient error (attempt 2 of 5)", shard)
        \t\t\t}
        \t\t\tgot, sum := Copy(shard, data)
        \t\t\twant := crc32.ChecksumIEEE(data)
        \t\t\tif sum != want {
        \t\t\t\tt.Errorf("shard %05d: crc32 of copied blocks is %08x, source has %08x", shard, sum, want)
        \t\t\t\treturn
        \t\t\t}
        \t\t\tt.Logf("shard %05d: %d bytes copied, 0 errors, crc32 %08x", shard, len(got), sum)
        \t\t})
        \t}
        }
        """,
}

TS_PROJECT = {
    "tsconfig.json": """\
        { "compilerOptions": { "strict": true, "target": "ES2020", "module": "commonjs",
                               "noEmit": true },
          "include": ["src"] }
        """,
    "src/user.ts": """\
        export interface User {
          id: number;
          email: string;
          roles: string[];
        }

        export function makeUser(id: number, email: string): User {
          return { id, email, roles: [] };
        }

        export function describe(user: User): string {
          return `${user.id} <${user.emial}>`;
        }

        export function promote(user: User, role) {
          user.roles.push(role);
        }
        """,
    "src/orders.ts": """\
        import { makeUser, User } from "./user";

        interface Order {
          id: string;
          owner: User;
          totalCents: number;
        }

        export function openOrder(id: string): Order {
          const owner = makeUser("42", "a@example.com");
          return { id, owner, totalCents: "0" };
        }

        export function addLine(order: Order, cents: number): Order {
          order.totalCents += cents;
          return order;
        }

        export function firstOrder(orders: Order[]): Order {
          return orders.find((o) => o.totalCents > 0);
        }

        export function shipping(order: Order): number {
          return calculateShipping(order.totalCents);
        }
        """,
}

ESLINT_PROJECT = {
    "eslint.config.js": """\
        const js = require("@eslint/js");
        const globals = require("globals");
        module.exports = [
          js.configs.recommended,
          { languageOptions: { sourceType: "commonjs", globals: globals.node },
            rules: { eqeqeq: "error", "no-console": "warn" } },
        ];
        """,
    "src/cart.js": """\
        const fs = require("fs");
        const path = require("path");

        function loadCart(file) {
          const raw = fs.readFileSync(file, "utf8");
          const cart = JSON.parse(raw);
          console.log("loaded", cart.items.length);
          return cart;
        }

        function total(cart) {
          let sum = 0;
          for (const item of cart.items) {
            if (item.qty == 0) continue;
            sum += item.price * item.qty;
          }
          return sum;
          console.log("total done");
        }

        function discount(cart) {
          const rates = { SAVE10: 0.1, SAVE20: 0.2, SAVE10: 0.15 };
          return total(cart) * (rates[cart.code] || 0) + taxRate;
        }

        module.exports = { loadCart, total, discount };
        """,
    "src/server.js": """\
        const http = require("http");

        function handler(req, res) {
          try {
            res.end("ok");
          } catch (err) {
          }
        }

        http.createServer(handler).listen(process.env.PORT || 8080);
        async function warm() {
          return new Promise(async (resolve) => resolve(1));
        }
        """,
}

JEST_PROJECT = {
    "package.json": '{"name": "pricing", "private": true}\n',
    "pricing.js": """\
        function priceWithTax(cents, region) {
          const rates = { eu: 0.2, us: 0.07 };
          return Math.round(cents * (1 + rates[region]));
        }

        function parseCoupon(code) {
          if (!/^[A-Z]{4}\\d{2}$/.test(code)) {
            throw new RangeError(`coupon ${code} is malformed`);
          }
          return { kind: code.slice(0, 4), percent: Number(code.slice(4)) };
        }

        function basketSummary(basket) {
          return { count: basket.lines.length, first: basket.lines[0].sku };
        }

        async function fetchRates(client) {
          return client.get("/rates");
        }

        module.exports = { priceWithTax, parseCoupon, basketSummary, fetchRates };
        """,
    "pricing.test.js": """\
        const { priceWithTax, parseCoupon, basketSummary, fetchRates } = require("./pricing");

        describe("priceWithTax", () => {
          test("adds EU VAT", () => {
            expect(priceWithTax(1000, "eu")).toBe(1200);
          });
          test("adds US sales tax", () => {
            expect(priceWithTax(1000, "us")).toBe(1070);
          });
          test("unknown region keeps the price", () => {
            expect(priceWithTax(1000, "mars")).toBe(1000);
          });
        });

        describe("parseCoupon", () => {
          test("reads kind and percent", () => {
            expect(parseCoupon("SAVE15")).toEqual({ kind: "SAVE", percent: 15, stackable: false });
          });
          test("rejects lowercase codes", () => {
            expect(() => parseCoupon("save15")).toThrow(RangeError);
          });
        });

        describe("basketSummary", () => {
          test("counts lines", () => {
            expect(basketSummary({ lines: [{ sku: "a" }, { sku: "b" }] }).count).toBe(2);
          });
          test("empty basket", () => {
            expect(basketSummary({ lines: [] })).toEqual({ count: 0, first: null });
          });
        });

        describe("fetchRates", () => {
          test("resolves with the rate table", async () => {
            const client = { get: () => new Promise(() => {}) };
            await expect(fetchRates(client)).resolves.toEqual({ eu: 0.2 });
          }, 300);
        });
        """,
}

NODE_PROJECT = {
    "worker.js": """\
        const fs = require("fs");

        function loadJobs() {
          const jobs = [];
          for (let i = 1; i <= 40; i++) {
            jobs.push({ id: i, payload: i === 37 ? undefined : { user: { id: 1000 + i } } });
          }
          return jobs;
        }

        function ownerOf(job) {
          return job.payload.user.id;
        }

        function processJob(job) {
          console.log(`[worker] job ${job.id}: owner ${ownerOf(job)} ok, 0 errors`);
        }

        function readSettings() {
          try {
            return JSON.parse(fs.readFileSync("config/settings.json", "utf8"));
          } catch (err) {
            console.error(`[worker] warning: using defaults, ${err.message}`);
            return { retries: 3 };
          }
        }

        console.log("[worker] starting with", readSettings());
        for (const job of loadJobs()) processJob(job);
        """,
    "client.js": """\
        const net = require("net");
        console.log("[client] connecting to billing at 127.0.0.1:9");
        const socket = net.connect({ host: "127.0.0.1", port: 9 });
        socket.on("connect", () => console.log("[client] connected"));
        """,
}

RUFF_PROJECT = {
    "app/billing.py": """\
        import os
        import json
        from typing import List


        def load(path, cache={}):
            if path in cache:
                return cache[path]
            with open(path) as handle:
                data = json.load(handle)
            cache[path] = data
            return reslt


        def total(items: List[dict]) -> float:
            count = len(items)
            s = 0
            for item in items:
                if item["price"] == None:
                    continue
                s += item["price"]
            return s


        def describe(invoice):
            try:
                return f"{invoice['id']}: {total(invoice['items'])}"
            except:
                return "?"
        """,
}

MAVEN_POM = """\
    <project xmlns="http://maven.apache.org/POM/4.0.0">
      <modelVersion>4.0.0</modelVersion>
      <groupId>com.example.shop</groupId>
      <artifactId>orders</artifactId>
      <version>1.4.0-SNAPSHOT</version>
      <properties>
        <maven.compiler.source>17</maven.compiler.source>
        <maven.compiler.target>17</maven.compiler.target>
      </properties>
    </project>
    """


def write_tree(root: Path, files: dict[str, str]) -> Path:
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def run_tool(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
             timeout: float = 600) -> bytes:
    """stdout then stderr of one real command (its exit status does not matter)."""
    full = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    proc = subprocess.run(argv, cwd=cwd, env=full, capture_output=True, timeout=timeout,
                          check=False)
    return proc.stdout + proc.stderr


def run_merged(argv: list[str], cwd: Path, env: dict[str, str] | None = None,
               timeout: float = 600) -> bytes:
    """Both streams as a terminal would interleave them (2>&1)."""
    full = {**os.environ, "NO_COLOR": "1", "TERM": "dumb", **(env or {})}
    proc = subprocess.run(argv, cwd=cwd, env=full, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout, check=False)
    return proc.stdout


def npm_tools() -> Path | None:
    """node_modules with typescript, eslint and jest (installed once from npm)."""
    node = NODE_DIR
    modules = node / "node_modules"
    if (modules / ".bin" / "tsc").exists() and (modules / "jest").exists():
        return modules
    if not shutil.which("npm"):
        return None
    node.mkdir(parents=True, exist_ok=True)
    (node / "package.json").write_text('{"name": "bench-node", "private": true}\n')
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", *NPM_PACKAGES],
                          cwd=node, capture_output=True, check=False, timeout=900)
    return modules if proc.returncode == 0 else None


def make_unseen_logs(work: Path) -> tuple[dict[str, Path], list[str]]:
    """name -> log file, and the names left out because their tool is missing."""
    logs = work / "held_out_logs"
    logs.mkdir(parents=True, exist_ok=True)
    src = work / "held_out_src"
    found: dict[str, Path] = {}
    missing: list[str] = []

    def make(name: str, tool: str, producer) -> None:
        path = logs / f"{name}.log"
        if not path.exists():
            if tool and not shutil.which(tool):
                missing.append(name)
                return
            data = producer()
            if data is None:
                missing.append(name)
                return
            path.write_bytes(data)
        found[name] = path

    make("cargo_build", "cargo", lambda: run_tool(
        ["cargo", "build", "--color", "never"], write_tree(src / "cargo_build", CARGO_BUILD)))
    make("cargo_test", "cargo", lambda: run_merged(
        ["cargo", "test", "--color", "never"], write_tree(src / "cargo_test", CARGO_TEST),
        env={"RUST_BACKTRACE": "1"}))
    go_env = {"GOFLAGS": "-mod=mod", "GOCACHE": str(work / "gocache"), "GO111MODULE": "on"}
    make("go_test", "go", lambda: run_merged(
        ["go", "test", "-v", "-count=1", "-timeout", "3s", "./store/...", "./sched/..."],
        write_tree(src / "go_inv", GO_INV), env=go_env))
    make("go_vet", "go", lambda: run_merged(
        ["go", "vet", "./..."], write_tree(src / "go_inv_vet", GO_INV), env=go_env))
    make("go_build", "go", lambda: run_merged(
        ["go", "build", "-o", os.devnull, "./..."], write_tree(src / "go_billing", GO_BILLING),
        env=go_env))
    make("go_test_big", "go", lambda: run_merged(
        ["go", "test", "-v", "-count=1", "./..."], write_tree(src / "go_replica", GO_REPLICA),
        env=go_env))
    modules = npm_tools() if shutil.which("node") else None
    node_env = {"NODE_PATH": str(modules)} if modules else {}
    if modules:
        make("tsc", "", lambda: run_tool(
            [str(modules / ".bin" / "tsc"), "-p", ".", "--pretty", "false"],
            write_tree(src / "tsc", TS_PROJECT)))
        make("eslint", "", lambda: run_tool(
            [str(modules / ".bin" / "eslint"), "src"], write_tree(src / "eslint", ESLINT_PROJECT),
            env=node_env))
        make("jest", "", lambda: run_merged(
            ["node", str(modules / "jest" / "bin" / "jest.js"), "--ci", "--colors=false"],
            write_tree(src / "jest", JEST_PROJECT), env=node_env))
    else:
        missing.extend(["tsc", "eslint", "jest"])
    node_dir = src / "node"
    make("node", "node", lambda: (
        run_merged(["node", "worker.js"], write_tree(node_dir, NODE_PROJECT))
        + run_merged(["node", "client.js"], node_dir)))
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    make("ruff", "", lambda: run_tool(
        [ruff, "check", "--no-cache", "--select", "E,F,B,UP", "--target-version", "py39",
         "app"], write_tree(src / "ruff", RUFF_PROJECT)) if Path(ruff).exists() else None)
    make("maven_offline", "mvn", lambda: run_tool(
        ["mvn", "-B", "-o", f"-Dmaven.repo.local={work / 'm2-empty'}", "compile"],
        write_tree(src / "maven", {"pom.xml": MAVEN_POM,
                                   "src/main/java/Orders.java": "class Orders {}\n"})))
    for fixture in sorted(FIXTURES.glob("*.log")):
        found[fixture.stem] = fixture
    return found, missing


def main() -> int:
    work = Path(os.environ.get("BENCH_WORK") or HERE / ".work" / "outputs")
    found, missing = make_unseen_logs(work)
    for name, path in sorted(found.items()):
        print(f"{name:<26} {path.stat().st_size:>12,} B  {path}")
    if missing:
        print("left out (tool missing):", ", ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
