// Package codecheck holds repository-wide checks of the Go source that run
// as tests (go test ./internal/codecheck): today, that no function outside
// generated code and a named allow-list of hot loops is over MaxFuncLines
// lines. It has no code of its own beyond the limit.
package codecheck

// MaxFuncLines is the longest a non-generated, non-test Go function may be,
// in lines from its func keyword to its closing brace, unless the check's
// allow-list names it with a reason.
const MaxFuncLines = 150
