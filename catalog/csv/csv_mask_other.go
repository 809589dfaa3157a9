//go:build !amd64

package csv

// structMask sets, for each 64-byte block k of b (len(b) a multiple of 64;
// out, nq and hi at least len(b)/64 long), out[k] to the mask of its
// structural bytes (delimiter, '\n', '"'), nq[k] to the mask of its '\n'
// and '"' bytes and hi[k] to the mask of its non-ASCII bytes.
func structMask(b []byte, pat *[48]byte, out, nq, hi []uint64) {
	structMaskGo(b, pat, out, nq, hi)
}
