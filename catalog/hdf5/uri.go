package hdf5

import (
	"net/url"
	"strings"

	"github.com/quarrydb/quarry/internal/qerr"
)

// URIScheme is the scheme of HDF5 object URIs.
const URIScheme = "h5"

const uriPrefix = URIScheme + "://"

// maxURILen bounds the URIs ParseURI accepts.
const maxURILen = 8192

// ParseURI splits an object URI of the form
//
//	h5://<file path relative to the data root>?path=<internal path>
//
// into the (percent-decoded) file path and internal path. The internal path
// defaults to "/" and is normalized to start with "/" with empty and "."
// components removed. The file path is returned as written (slash
// separated); an absolute path is returned as is for the caller to check
// against the root, and a path with ".." components is refused with
// path_outside_root. Other query parameters are ignored. Malformed URIs
// fail with invalid_argument.
func ParseURI(uri string) (relFile, internalPath string, err error) {
	bad := func(format string, args ...any) error {
		return qerr.Invalid(qerr.CodeInvalidArgument, format, args...).
			WithHint("use h5://<file path relative to the data root>?path=/<group or dataset>, e.g. h5://physics/experiment.h5?path=/detector/image")
	}
	if len(uri) > maxURILen {
		return "", "", bad("the URI is too long (%d bytes)", len(uri))
	}
	if len(uri) < len(uriPrefix) || !strings.EqualFold(uri[:len(uriPrefix)], uriPrefix) {
		return "", "", bad("%q is not an h5:// URI", uri)
	}
	rest := uri[len(uriPrefix):]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	rawFile, rawQuery, _ := strings.Cut(rest, "?")
	file, err := url.PathUnescape(rawFile)
	if err != nil {
		return "", "", bad("the file part of %q is not valid percent-encoding", uri)
	}
	if file == "" {
		return "", "", bad("the URI %q names no file", uri)
	}
	if strings.IndexByte(file, 0) >= 0 {
		return "", "", bad("the file path contains a NUL byte")
	}
	for _, c := range strings.Split(file, "/") {
		if c == ".." {
			return "", "", qerr.New(qerr.ErrPermission, qerr.CodePathOutsideRoot, "the file path %q climbs out of the data root", file).
				WithHint("name files relative to the data root without \"..\"")
		}
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", bad("the query of %q is not valid: %v", uri, err)
	}
	ip := "/"
	if vs, ok := q["path"]; ok {
		if len(vs) > 1 {
			return "", "", bad("the URI has more than one path parameter")
		}
		ip = vs[0]
	}
	ip, err = CleanInternalPath(ip)
	if err != nil {
		return "", "", bad("%v", err)
	}
	return file, ip, nil
}

// CleanInternalPath normalizes an HDF5 internal path: leading "/" added,
// empty and "." components dropped ("" and "/" both mean the root group).
func CleanInternalPath(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", qerr.Invalid(qerr.CodeInvalidArgument, "the internal path contains a NUL byte")
	}
	comps := splitInternal(p)
	return "/" + strings.Join(comps, "/"), nil
}

func splitInternal(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			continue
		}
		out = append(out, c)
	}
	return out
}

// FormatURI builds the URI of an object: relFile is slash separated and
// relative to the data root, internalPath an HDF5 path ("" = "/").
func FormatURI(relFile, internalPath string) string {
	ip, err := CleanInternalPath(internalPath)
	if err != nil {
		ip = "/"
	}
	var sb strings.Builder
	sb.WriteString(uriPrefix)
	sb.WriteString(escape(relFile))
	sb.WriteString("?path=")
	sb.WriteString(escape(ip))
	return sb.String()
}

// escape percent-encodes everything but unreserved characters and "/".
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/':
			sb.WriteByte(c)
		default:
			sb.WriteByte('%')
			sb.WriteByte(hex[c>>4])
			sb.WriteByte(hex[c&15])
		}
	}
	return sb.String()
}
