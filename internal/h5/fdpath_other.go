//go:build !linux

package h5

// fdDir holds a name for each of the process's descriptors (opening one
// duplicates the descriptor on macOS and the BSDs).
const fdDir = "/dev/fd"
