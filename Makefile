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
