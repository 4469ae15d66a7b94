# The project's verbs. Each one installs what is missing first.
.PHONY: demo test build bootstrap bench

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

## bench: the benchmarks, in release mode; results go in BENCHMARKS.md.
bench: bootstrap
	swift build -c release --product DBCryptBenchmarks
	.build/release/DBCryptBenchmarks provider --rounds 11
