"""Held-out golden questions for output search (never tuned on; never edited after the first run).

Each entry: (log name from unseen_logs.make_unseen_logs, the question as an agent
would ask it in its own words, the regex of a line that answers it). Written and
committed before any ranking change was made against them. A question is
answered at k when one of the first k hits of `ctxkit search QUESTION --handle H`
covers a line of that log matching the regex.
"""

HELD_OUT = [
    # cargo build: two rustc errors and a warning
    ("cargo_build", "type mismatch where the account id is assigned to a String",
     r"error\[E0308\]: mismatched types|expected `String`, found `u32`"),
    ("cargo_build", "which function does main call that was never defined",
     r"cannot find function `ballance_report`"),
    ("cargo_build", "unused import warning in the ledger crate",
     r"warning: unused import: `std::fmt::Write`"),
    # cargo test with RUST_BACKTRACE=1
    ("cargo_test", "what value did parses_cents actually get instead of 1250",
     r"^\s*left: 1205"),
    ("cargo_test", "why does withdrawing more than the balance crash",
     r"attempt to subtract with overflow"),
    ("cargo_test", "out of range index in the fee lookup",
     r"index out of bounds: the len is 3 but the index is 5"),
    ("cargo_test", "where in the library does apply_batch blow up on the invalid amount",
     r"panicked at src/lib\.rs:15:44|ParseIntError \{ kind: InvalidDigit \}"),
    ("cargo_test", "parses_cents failure details",
     r"assertion `left == right` failed|^\s*left: 1205|panicked at tests/ledger_tests\.rs:6:21"),
    # go test: a failed check, a nil map panic, a test timeout
    ("go_test", "what did Reserve return when asked for more items than in stock",
     r"Reserve\(apple, 9\) = 3, want 4"),
    ("go_test", "nil map write crash in the store package",
     r"panic: assignment to entry in nil map"),
    ("go_test", "which go test hung until the deadline killed it",
     r"panic: test timed out after 3s"),
    ("go_test", "source line in store.go where the nil map gets written",
     r"store/store\.go:21$"),
    ("go_test", "TestReserveMoreThanStock",
     r"Reserve\(apple, 9\) = 3, want 4"),
    # go vet
    ("go_vet", "printf verb does not match the argument type",
     r"Sprintf format %d has arg name of wrong type string"),
    ("go_vet", "mutex copied by value", r"passes lock by value"),
    ("go_vet", "dead code after a return statement", r"unreachable code"),
    ("go_vet", "variable assigned to itself", r"self-assignment of x to x"),
    # go build
    ("go_build", "misspelled struct field in the billing command", r"it\.Totl undefined"),
    ("go_build", "string literal assigned to an integer variable",
     r'cannot use "3" \(untyped string constant\) as int value'),
    ("go_build", "helper function that does not exist in the billing package",
     r"undefined: formatInvoice"),
    # tsc
    ("tsc", "typo in the email property name", r"Property 'emial' does not exist"),
    ("tsc", "function called in orders.ts that is not declared anywhere",
     r"Cannot find name 'calculateShipping'"),
    ("tsc", "find can return undefined but firstOrder promises an Order",
     r"Type 'Order \| undefined' is not assignable"),
    ("tsc", "parameter missing a type annotation", r"implicitly has an 'any' type"),
    # eslint
    ("eslint", "undeclared variable used in the discount calculation",
     r"'taxRate' is not defined"),
    ("eslint", "object literal that repeats the same key", r"Duplicate key 'SAVE10'"),
    ("eslint", "loose equality comparison flagged by the linter",
     r"Expected '===' and instead saw '=='"),
    ("eslint", "async function passed to new Promise",
     r"Promise executor functions should not be async"),
    # jest
    ("jest", "what did priceWithTax return for an unknown region", r"Received: NaN"),
    ("jest", "why did the empty basket test crash",
     r"TypeError: Cannot read properties of undefined \(reading 'sku'\)"),
    ("jest", "which jest test ran out of time",
     r"Exceeded timeout of 300 ms|● fetchRates › resolves with the rate table"),
    ("jest", "how many jest tests failed", r"^Tests:\s+4 failed"),
    ("jest", "parseCoupon reads kind and percent",
     r'^\s*-\s+"stackable": false|toEqual\(expected\) // deep equality'),
    # two Node.js crashes
    ("node", "why did the worker process crash",
     r"TypeError: Cannot read properties of undefined \(reading 'user'\)"),
    ("node", "settings file missing when the worker started",
     r"ENOENT: no such file or directory, open 'config/settings\.json'"),
    ("node", "client could not reach the billing service", r"connect ECONNREFUSED 127\.0\.0\.1:9"),
    ("node", "stack frame in worker.js where the undefined property was read",
     r"at ownerOf \(.*worker\.js:12:22\)"),
    # ruff
    ("ruff", "name used in billing.py that was never assigned", r"F821 Undefined name `reslt`"),
    ("ruff", "mutable default argument", r"^B006 "),
    ("ruff", "bare except clause", r"^E722 "),
    ("ruff", "comparing to None with ==", r"^E711 "),
    # Maven, really run offline with an empty local repository
    ("maven_offline", "why did the maven build stop before compiling anything",
     r"Cannot access central \(https://repo\.maven\.apache\.org/maven2\) in offline mode"),
    # Maven test run (fixture)
    ("maven_test", "assertion that failed in the refund test", r"expected: <12> but was: <11>"),
    ("maven_test", "null pointer when cancelling an order",
     r"NullPointerException: Cannot invoke|NullPointer Cannot invoke"),
    ("maven_test", "total number of tests run and how many failed in the orders module",
     r"Tests run: 31, Failures: 1, Errors: 1, Skipped: 1$"),
    ("maven_test", "OrderServiceTest.cancelUnknownOrder",
     r'NullPointerException: Cannot invoke "com\.example\.shop\.orders\.Order\.getStatus\(\)"'
     r"|OrderService\.cancel\(OrderService\.java:57\)"),
    # docker build (fixture)
    ("docker_build", "which Dockerfile step broke the image build",
     r'ERROR: process "/bin/sh -c pip install|>>> RUN pip install'),
    ("docker_build", "why could psycopg2 not be built inside the container",
     r"Error: pg_config executable not found"),
    # kubectl (fixtures)
    ("kubectl_events", "why can the worker pod not be placed on any node", r"Insufficient memory"),
    ("kubectl_events", "frontend image tag does not exist in the registry",
     r"frontend:v2\.3\.1: not found|Failed to pull image \"registry\.example\.com/shop/frontend"),
    ("kubectl_events", "api health check failing", r"Liveness probe failed: HTTP probe failed"),
    ("kubectl_events", "secret missing for a volume mount",
     r'secret "reports-s3-credentials" not found'),
    ("kubectl_describe_cache", "why does the cache pod keep restarting",
     r"Reason:\s+OOMKilled|Exit Code:\s+137"),
    # terraform plan (fixture)
    ("terraform_plan", "why will the orders database be recreated", r"# forces replacement"),
    ("terraform_plan", "how many resources will terraform delete",
     r"Plan: 2 to add, 1 to change, 3 to destroy"),
    ("terraform_plan", "ssh opened up to the whole internet", r'\+ "0\.0\.0\.0/0"'),
    ("terraform_plan", "deprecated argument warning", r"Warning: Argument is deprecated"),
    # Playwright (fixture)
    ("playwright", "why did the wrong password login test fail",
     r"Timed out 5000ms waiting for expect\(locator\)\.toBeVisible\(\)"),
    ("playwright", "checkout test could not reach the app server", r"ERR_CONNECTION_REFUSED"),
    ("playwright", "search filters by brand result count",
     r"Expected: 4|Received: 7|toHaveCount\(expected\) failed"),
    # go test -v with 150,000 subtests (about 25 MB)
    ("go_test_big", "which shard ended up with corrupted data after replication",
     r"shard 48213: crc32 of copied blocks|--- FAIL: TestShardSync/shard_48213"),
    ("go_test_big", "TestShardSync/shard_48213",
     r"shard 48213: crc32 of copied blocks is 919648d3"),
]
