# The two entry points; everything else lives in scripts/.
.PHONY: run test e2e bindings fuzz

run: ## build and launch the desktop app, installing what is missing
	@scripts/run.sh

test: ## run every test (fmt, clippy, Rust, UI, end-to-end in the real webview)
	@scripts/test.sh

e2e: ## only the end-to-end tests (expects a built app)
	@scripts/e2e.sh

bindings: ## regenerate the TypeScript IPC types from crates/protocol
	@UPDATE_BINDINGS=1 cargo test -p nomos-protocol --test bindings

fuzz: ## fuzz the classifier, the eval manifest parser and the SSE parser (FUZZ_SECONDS each, default 300)
	@scripts/fuzz.sh

# Benchmarks of DESIGN §14 (report, never gate): one table in artifacts/bench/table.md.
.PHONY: bench bench-ui
bench: ## run every DESIGN §14 benchmark, core and app, and print one table (BENCH_QUICK=1: short form)
	@scripts/bench.sh

bench-ui: ## only the app rows of the table (release app and a bare Tauri window under Xvfb)
	@scripts/bench.sh --ui-only
