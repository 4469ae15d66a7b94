# The project's verbs. Each one installs what is missing first.
.PHONY: demo test build bootstrap bench bench-s3 bench-pages bench-scale profile sanitize fuzz kill-tests example vapor-example fluent-interop

bootstrap:
	@scripts/bootstrap

build: bootstrap
	swift build

## demo: the main job end to end: builds dbcrypt, encrypts a sample
## plaintext database in place, queries it, exports it back and compares;
## then seals a token in the store inside it, and trades envelopes with Python.
## ENGINE=debian13 or ENGINE=sqlcipher4.19 runs it in that engine's root.
demo:
ifneq ($(filter debian13 sqlcipher4.19,$(ENGINE)),)
	@scripts/engine run $(ENGINE) scripts/demo
else
	@scripts/bootstrap
	@scripts/demo
endif

## test: every test, on every engine: the host's SQLCipher, then Debian 13's
## 4.6.1 and SQLCipher 4.19 in Debian roots that scripts/engine makes once
## with debootstrap (the host's Swift bound in). On each: the
## interoperability peers into the build folder's interop-venv, the README's
## quick start built and run, then the suite. ENGINE=host is the quick loop;
## ENGINE=debian13 or ENGINE=sqlcipher4.19 runs one root's.
ENGINE ?= all
test:
	@scripts/test $(if $(filter all,$(ENGINE)),,$(ENGINE))

## example: Examples/NotesServer, a Hummingbird 2 server on DBCryptFluent,
## built and driven with curl on a loopback port: CRUD, concurrent
## requests, a restart, a wrong key that refuses to start, and no note's
## text on disk (about 5 minutes the first time: Hummingbird builds).
example: bootstrap
	@scripts/example

## vapor-example: builds Examples/VaporConfigure, the README's Vapor
## configure.swift on DBCryptFluent (Vapor takes about 8 minutes to build
## here: not part of make test).
vapor-example: bootstrap
	@scripts/readme-examples
	rm -f Examples/VaporConfigure/.build/debug.yaml
	swift build --package-path Examples/VaporConfigure

## fluent-interop: Vapor's SQLite driver (fluent-sqlite-driver 4.9.0) and
## DBCryptFluent both ways, each end the real driver: Vapor writes, dbcrypt
## migrate, DBCryptFluent reads; DBCryptFluent writes, dbcrypt decrypt,
## Vapor's driver reads (the suite does the first on every engine, from a fixture).
fluent-interop: bootstrap
	@scripts/fluent-interop

## bench: every benchmark, in release mode: DBCrypt against the raw C API
## (W1-W4), the crypto providers, GRDB in a package of its own (W5), and the
## sealed store against LevelDB + JSON + AES-GCM in another (W8), and
## Fluent on DBCryptFluent against Vapor's SQLite driver in a third (W11).
## Results and what the ratios mean are in BENCHMARKS.md.
## ENGINE=host|debian13|sqlcipher4.19 runs the comparisons made on every
## engine (W1 and W2 against the raw C API, plaintext and encrypted against
## the crypto floor) on that engine only.
bench:
ifneq ($(filter host debian13 sqlcipher4.19,$(ENGINE)),)
	@scripts/bench-engine $(ENGINE)
else
	@scripts/bootstrap bench
	swift build -c release --product DBCryptBenchmarks
	.build/release/DBCryptBenchmarks insert-scan --rounds 11
	.build/release/DBCryptBenchmarks records --rounds 5
	.build/release/DBCryptBenchmarks overhead --rounds 5
	scripts/keyring-session .build/release/DBCryptBenchmarks open --rounds 5
	.build/release/DBCryptBenchmarks export --rounds 5
	.build/release/DBCryptBenchmarks pool --rounds 5
	.build/release/DBCryptBenchmarks backup --rounds 5
	@$(MAKE) --no-print-directory bench-s3
	.build/release/DBCryptBenchmarks observe --rounds 15
	.build/release/DBCryptBenchmarks provider --rounds 11
	@# SwiftPM may keep a stale build plan of a path dependency (DBCrypt)
	@# after files are added to it: forget the plans, keep the objects.
	rm -f Benchmarks/*/.build/release.yaml Benchmarks/*/.build/release/description.json
	swift build -c release --package-path Benchmarks/GRDBComparison
	Benchmarks/GRDBComparison/.build/release/GRDBComparison --rounds 11
	swift build -c release --package-path Benchmarks/SealedStoreComparison
	Benchmarks/SealedStoreComparison/.build/release/SealedStoreComparison --parts
	Benchmarks/SealedStoreComparison/.build/release/SealedStoreComparison --rounds 5
	swift build -c release --package-path Benchmarks/FluentComparison
	Benchmarks/FluentComparison/.build/release/FluentComparison bench --rounds 5
endif

## bench-s3: W12, continuous backup to the local radosgw that scripts/s3-server
## starts: a writer's commits/s with no backup, a directory's and the
## bucket's; requests per minute at 100 commits/s; restoring 256 MiB from
## the bucket against boto3 downloading the same objects (boto3 in a venv
## under the build folder). About 5 minutes.
bench-s3: bootstrap
	scripts/s3-server start
	test -x .build/bench-venv/bin/python || python3 -m venv .build/bench-venv
	.build/bench-venv/bin/python -c "import boto3" 2>/dev/null || .build/bench-venv/bin/pip install -q boto3
	swift build -c release --product DBCryptBenchmarks
	. .build/s3-server/env && .build/release/DBCryptBenchmarks s3 --rounds 7 --python .build/bench-venv/bin/python

## bench-pages: W9, the page reader's verify and decrypt throughput against
## this machine's crypto floor (openssl speed), on 256 MiB and on 2 GiB with
## peak memory (about 2 minutes, 4.3 GB of temporary disk).
bench-pages: bootstrap
	swift build -c release --product DBCryptBenchmarks
	.build/release/DBCryptBenchmarks pages --rounds 5 --megabytes 256
	.build/release/DBCryptBenchmarks pages --rounds 2 --megabytes 2048

## bench-scale: dbcrypt migrate, decrypt and check on plaintext databases of
## 1 GiB and 2 GiB, time and peak memory of each against the Debian sqlcipher
## shell's bare export (about 5 minutes, 9 GB of temporary disk).
bench-scale: bootstrap
	swift build -c release --product DBCryptBenchmarks
	swift build -c release --product dbcrypt
	.build/release/DBCryptBenchmarks scale --dbcrypt .build/release/dbcrypt --gigabytes 1,2

## profile: instruction counts of W1 and W2 under callgrind, DBCrypt against
## the raw C API: repeatable where timings are not.
profile: bootstrap
	@scripts/profile

## sanitize: every test under ThreadSanitizer, then AddressSanitizer
## (about 10 minutes on 2 cores with the first builds; not part of make test).
sanitize: bootstrap
	@scripts/sanitize

## fuzz: the libFuzzer harnesses in Fuzz/ (dates and values, key text, database
## files, SQL text, sealed values, envelopes, key text and store entries, SQLCipher pages and WAL frames read without SQLCipher), each for FUZZ_SECONDS (default 60) from the seeds in Fuzz/Corpus.
fuzz: bootstrap
	@scripts/fuzz

## kill-tests: the full kill campaign: every kill test with the counts and
## fixtures it was written with, KILL_SCALE (default 10) times as many kills
## (make test runs each point where a kill matters once or twice, on small
## fixtures). ENGINE=debian13 or ENGINE=sqlcipher4.19 runs it in that root.
kill-tests:
ifneq ($(filter debian13 sqlcipher4.19,$(ENGINE)),)
	@DBCRYPT_KILL_SCALE=$${KILL_SCALE:-10} scripts/engine run $(ENGINE) scripts/kill-tests
else
	@scripts/bootstrap
	@DBCRYPT_KILL_S3=1 DBCRYPT_KILL_SCALE=$${KILL_SCALE:-10} scripts/kill-tests
endif
