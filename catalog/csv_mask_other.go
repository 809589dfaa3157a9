//go:build !amd64

package catalog

// structMask sets out[k] to the structural-byte mask of the 64-byte block
// k of b (len(b) a multiple of 64, len(out) and len(hi) >= len(b)/64) and
// hi[k] to the mask of its non-ASCII bytes.
func structMask(b []byte, pat *[48]byte, out, hi []uint64) {
	structMaskGo(b, pat, out, hi)
}
