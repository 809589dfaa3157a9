// Package dictstr decodes dictionary-encoded string columns into plain
// string arrays, in two passes (sum the lengths, then copy) with no
// per-row allocation. It is the one decoder below the engine (which
// decodes its dictionary columns where an operator needs plain strings)
// and the materializer (which streams plain strings to clients that do
// not take dictionaries).
package dictstr
