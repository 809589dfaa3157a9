# Quarry: the two set-up commands are `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
ADDR ?= 127.0.0.1:8765
DATA ?=
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
export CGO_ENABLED := 1

.PHONY: all setup build run test vet lint unit fuzz bench clean

all: build

setup:
	@./scripts/setup.sh

build: setup
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/quarry ./cmd/quarry

# Serve the bundled demo data (or DATA=/path) over Streamable HTTP.
run: build
	./bin/quarry serve --transport http --addr $(ADDR) $(if $(DATA),--data $(DATA),)

vet: setup
	$(GO) vet ./...

lint: setup
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) run $(STATICCHECK) ./...

# Every test, with the race detector. End-to-end tests build bin/quarry themselves.
unit: build
	$(GO) test -race -count=1 -timeout 20m ./...

test: vet lint unit

# Short fuzzing pass over every parser (FUZZTIME per target).
FUZZTIME ?= 20s
fuzz: setup
	@for t in $$($(GO) test -list 'Fuzz.*' ./... | awk '/^Fuzz/{f[n++]=$$1} /^ok/{for(i=0;i<n;i++) print $$2":"f[i]; n=0}'); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; echo "== $$pkg $$fn"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; done

bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
