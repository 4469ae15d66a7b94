# The project's verbs. Each one installs what is missing first.
.PHONY: demo test build bootstrap bench profile

bootstrap:
	@scripts/bootstrap

build: bootstrap
	swift build

## demo: the main job end to end: builds dbcrypt, encrypts a sample
## plaintext database in place, queries it, exports it back and compares.
demo: bootstrap
	@scripts/demo

## test: every test. The interoperability peers are installed into
## .build/interop-venv, the README's quick start is built and run, then the
## test suite runs.
test: bootstrap
	@scripts/interop-venv
	@scripts/run-quickstart >/dev/null
	swift test --disable-swift-testing

## bench: every benchmark, in release mode: DBCrypt against the raw C API
## (W1-W4), the crypto providers, and GRDB in a package of its own (W5).
## Results and what the ratios mean are in BENCHMARKS.md.
bench: bootstrap
	swift build -c release --product DBCryptBenchmarks
	.build/release/DBCryptBenchmarks insert-scan --rounds 11
	.build/release/DBCryptBenchmarks open --rounds 5
	.build/release/DBCryptBenchmarks export --rounds 5
	.build/release/DBCryptBenchmarks provider --rounds 11
	swift build -c release --package-path Benchmarks/GRDBComparison
	Benchmarks/GRDBComparison/.build/release/GRDBComparison --rounds 11

## profile: instruction counts of W1 and W2 under callgrind, DBCrypt against
## the raw C API: repeatable where timings are not.
profile: bootstrap
	@scripts/profile
