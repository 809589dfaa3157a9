package funcs

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// String functions. Positions and lengths count characters (Unicode code
// points), 1-based; results are utf8.

// MaxStringLen caps the values lpad, rpad, repeat and the other functions
// that grow a string produce, in bytes.
const MaxStringLen = 1 << 20

var strType = arrow.BinaryTypes.String

// ErrTooLong is the error of a string function whose result would exceed MaxStringLen.
var ErrTooLong = fmt.Errorf("result longer than %d bytes", MaxStringLen)

// strMap declares a function of one string.
func strMap(name, doc string, f func(string) string) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: 1, MaxArgs: 1, Params: []Arg{ArgString}, Signature: name + "(s)", Doc: doc,
		ResultDoc: "string", Result: fixed(strType),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error { o.Str(f(a[0].Str(i))); return nil }), nil
		}}
}

// strRows declares a general string function computed row by row with nulls propagated.
func strRows(name, sig, doc string, params []Arg, minArgs, maxArgs int, result arrow.DataType, f RowFunc) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: minArgs, MaxArgs: maxArgs, Params: params, Signature: sig, Doc: doc,
		ResultDoc: TypeName(result), Result: fixed(result),
		Prepare: func(c *CallInfo) (Kernel, error) { return Rows(c.Result, true, f), nil }}
}

// runeSlice returns the characters [from, to) of s (clamped), 0-based.
func runeSlice(s string, from, to int64) string {
	if from < 0 {
		from = 0
	}
	if to <= from {
		return ""
	}
	start, end := len(s), len(s)
	k := int64(0)
	for i := range s {
		if k == from {
			start = i
		}
		if k == to {
			end = i
			break
		}
		k++
	}
	if start > end {
		return ""
	}
	return s[start:end]
}

func runeLen(s string) int64 { return int64(utf8.RuneCountInString(s)) }

func trimDecl(name, doc string, f func(s, cut string) string) *ScalarDecl {
	return strRows(name, name+"(s[, chars])", doc, []Arg{ArgString}, 1, 2, strType, func(a []Col, i int, o *Out) error {
		cut := " "
		if len(a) > 1 {
			cut = a[1].Str(i)
		}
		o.Str(f(a[0].Str(i), cut))
		return nil
	})
}

func affix(name, doc string, f func(s, t string) bool) *ScalarDecl {
	return strRows(name, name+"(s, t)", doc, []Arg{ArgString}, 2, 2, arrow.FixedWidthTypes.Boolean, func(a []Col, i int, o *Out) error {
		o.Bool(f(a[0].Str(i), a[1].Str(i)))
		return nil
	})
}

func pad(name string, left bool) *ScalarDecl {
	return strRows(name, name+"(s, n[, fill])", fmt.Sprintf("pads s on the %s with fill (default a space) to n characters, or truncates it to n; n capped at %s bytes of output",
		map[bool]string{true: "left", false: "right"}[left], thousands(MaxStringLen)),
		[]Arg{ArgString, ArgInt, ArgString}, 2, 3, strType, func(a []Col, i int, o *Out) error {
			s, n := a[0].Str(i), a[1].Int(i)
			fill := " "
			if len(a) > 2 {
				fill = a[2].Str(i)
			}
			l := runeLen(s)
			switch {
			case n <= 0:
				o.Str("")
			case n <= l:
				o.Str(runeSlice(s, 0, n))
			case fill == "":
				o.Str(s)
			default:
				if n > MaxStringLen || int64(len(s))+(n-l)*int64(len(fill)) > MaxStringLen {
					return ErrTooLong
				}
				p := strings.Repeat(fill, int((n-l)/runeLen(fill))+1)
				p = runeSlice(p, 0, n-l)
				if left {
					o.Str(p + s)
				} else {
					o.Str(s + p)
				}
			}
			return nil
		})
}

// regexDecl declares a regexp function whose pattern is argument 1 (a literal, compiled once per query).
func regexDecl(name, sig, doc string, params []Arg, minArgs, maxArgs int, result arrow.DataType,
	f func(re *regexp.Regexp, c *CallInfo) (RowFunc, error)) *ScalarDecl {
	return &ScalarDecl{Name: name, MinArgs: minArgs, MaxArgs: maxArgs, Params: params, Signature: sig,
		Doc:       doc + "; [RE2](https://pkg.go.dev/regexp/syntax) pattern, a string literal of at most " + thousands(MaxPatternLen) + " bytes compiled once per query",
		ResultDoc: TypeName(result), Result: fixed(result),
		Prepare: func(c *CallInfo) (Kernel, error) {
			re, err := compilePattern(c.Consts[1], nil)
			if err != nil || re == nil {
				return nullKernel(c.Result), err
			}
			rf, err := f(re, c)
			if err != nil {
				return nil, err
			}
			return Rows(c.Result, true, rf), nil
		}}
}

// replTemplate turns \1 style group references into Go's ${1}.
var backref = regexp.MustCompile(`\\(\d)`)

var stringScalars = []*ScalarDecl{
	{Name: "||", Operator: true, MinArgs: 2, MaxArgs: 2, Params: []Arg{ArgAsString}, Signature: "a || b",
		Doc: "concatenation (other types are cast to strings)", ResultDoc: "string", Result: fixed(strType),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, true, func(a []Col, i int, o *Out) error {
				if len(a[0].Str(i))+len(a[1].Str(i)) > MaxStringLen {
					return ErrTooLong
				}
				o.Str(a[0].Str(i) + a[1].Str(i))
				return nil
			}), nil
		}},
	strMap("lower", "lower case (Unicode)", strings.ToLower),
	strMap("upper", "upper case (Unicode)", strings.ToUpper),
	strRows("length", "length(s)", "number of characters", []Arg{ArgString}, 1, 1, arrow.PrimitiveTypes.Int64,
		func(a []Col, i int, o *Out) error { o.Int(runeLen(a[0].Str(i))); return nil }),
	strRows("substr", "substr(s, start[, len])", "the characters at positions start to start+len-1 (default: to the end; 1-based, a negative start counts from the end; positions before the first character are empty: `substr('ab', 0, 2)` = 'a')",
		[]Arg{ArgString, ArgInt, ArgInt}, 2, 3, strType, func(a []Col, i int, o *Out) error {
			s, start := a[0].Str(i), a[1].Int(i)
			if start < 0 {
				start += runeLen(s) + 1
			}
			end := int64(1) << 62
			if len(a) > 2 {
				end = start + max(a[2].Int(i), 0)
			}
			o.Str(runeSlice(s, start-1, end-1))
			return nil
		}),
	strRows("left", "left(s, n)", "the first n characters (negative n: all but the last -n)", []Arg{ArgString, ArgInt}, 2, 2, strType,
		func(a []Col, i int, o *Out) error {
			s, n := a[0].Str(i), a[1].Int(i)
			if n < 0 {
				n += runeLen(s)
			}
			o.Str(runeSlice(s, 0, n))
			return nil
		}),
	strRows("right", "right(s, n)", "the last n characters (negative n: all but the first -n)", []Arg{ArgString, ArgInt}, 2, 2, strType,
		func(a []Col, i int, o *Out) error {
			s, n := a[0].Str(i), a[1].Int(i)
			l := runeLen(s)
			if n < 0 {
				n += l
			}
			o.Str(runeSlice(s, l-max(n, 0), l))
			return nil
		}),
	trimDecl("trim", "removes the characters of chars (default: spaces) from both ends", strings.Trim),
	trimDecl("ltrim", "removes the characters of chars (default: spaces) from the start", strings.TrimLeft),
	trimDecl("rtrim", "removes the characters of chars (default: spaces) from the end", strings.TrimRight),
	{Name: "concat", MinArgs: 1, MaxArgs: -1, Params: []Arg{ArgAsString}, Signature: "concat(a, b, ...)",
		Doc: "concatenation of the arguments (other types are cast to strings)", Nulls: "null arguments are skipped (never null)",
		ResultDoc: "string", Result: fixed(strType),
		Prepare: func(c *CallInfo) (Kernel, error) {
			return Rows(c.Result, false, func(a []Col, i int, o *Out) error {
				var b strings.Builder
				for _, v := range a {
					if !v.Null(i) {
						if b.Len()+len(v.Str(i)) > MaxStringLen {
							return ErrTooLong
						}
						b.WriteString(v.Str(i))
					}
				}
				o.Str(b.String())
				return nil
			}), nil
		}},
	strRows("replace", "replace(s, from, to)", "replaces every occurrence of from by to", []Arg{ArgString}, 3, 3, strType,
		func(a []Col, i int, o *Out) error {
			s, from, to := a[0].Str(i), a[1].Str(i), a[2].Str(i)
			if from != "" && len(to) > len(from) && len(s)+strings.Count(s, from)*(len(to)-len(from)) > MaxStringLen {
				return ErrTooLong
			}
			if from == "" {
				o.Str(s)
				return nil
			}
			o.Str(strings.ReplaceAll(s, from, to))
			return nil
		}),
	strRows("split_part", "split_part(s, sep, n)", "the n-th field (1-based; negative counts from the end) of s split at sep; '' when out of range",
		[]Arg{ArgString, ArgString, ArgInt}, 3, 3, strType, func(a []Col, i int, o *Out) error {
			s, sep, n := a[0].Str(i), a[1].Str(i), a[2].Int(i)
			parts := []string{s}
			if sep != "" {
				parts = strings.Split(s, sep)
			}
			if n < 0 {
				n += int64(len(parts)) + 1
			}
			if n >= 1 && n <= int64(len(parts)) {
				o.Str(parts[n-1])
			} else {
				o.Str("")
			}
			return nil
		}),
	affix("starts_with", "s begins with t", strings.HasPrefix),
	affix("ends_with", "s ends with t", strings.HasSuffix),
	affix("contains", "t occurs in s", strings.Contains),
	strRows("strpos", "strpos(s, t)", "position of the first t in s in characters (1-based; 0 when absent); also `position(t IN s)`",
		[]Arg{ArgString}, 2, 2, arrow.PrimitiveTypes.Int64, func(a []Col, i int, o *Out) error {
			s := a[0].Str(i)
			k := strings.Index(s, a[1].Str(i))
			if k < 0 {
				o.Int(0)
			} else {
				o.Int(runeLen(s[:k]) + 1)
			}
			return nil
		}),
	regexDecl("regexp_matches", "regexp_matches(s, pattern)", "the pattern matches somewhere in s (anchor with `^`/`$`)",
		[]Arg{ArgString, ArgText}, 2, 2, arrow.FixedWidthTypes.Boolean, func(re *regexp.Regexp, _ *CallInfo) (RowFunc, error) {
			return func(a []Col, i int, o *Out) error { o.Bool(re.MatchString(a[0].Str(i))); return nil }, nil
		}),
	regexDecl("regexp_extract", "regexp_extract(s, pattern[, group])", "the first match (or its capture group, a literal) in s; '' when none",
		[]Arg{ArgString, ArgText, ArgIntLit}, 2, 3, strType, func(re *regexp.Regexp, c *CallInfo) (RowFunc, error) {
			g := 0
			if len(c.Consts) > 2 {
				if c.Consts[2] == nil || c.Consts[2].Null || c.Consts[2].Int < 0 || c.Consts[2].Int > int64(re.NumSubexp()) {
					return nil, fmt.Errorf("regexp_extract: group must be an integer literal in [0, %d]", re.NumSubexp())
				}
				g = int(c.Consts[2].Int)
			}
			return func(a []Col, i int, o *Out) error {
				s := a[0].Str(i)
				m := re.FindStringSubmatchIndex(s)
				if m == nil || m[2*g] < 0 {
					o.Str("")
				} else {
					o.Str(s[m[2*g]:m[2*g+1]])
				}
				return nil
			}, nil
		}),
	regexDecl("regexp_replace", "regexp_replace(s, pattern, repl[, flags])",
		"replaces the first match (every match with flags 'g') by repl, in which `\\1` or `$1` is a capture group",
		[]Arg{ArgString, ArgText, ArgString, ArgText}, 3, 4, strType, func(re *regexp.Regexp, c *CallInfo) (RowFunc, error) {
			global := false
			if len(c.Consts) > 3 {
				if c.Consts[3] == nil || c.Consts[3].Null || strings.Trim(c.Consts[3].Str, "g") != "" {
					return nil, fmt.Errorf("regexp_replace: flags must be 'g' or ''")
				}
				global = c.Consts[3].Str != ""
			}
			return func(a []Col, i int, o *Out) error {
				s, repl := a[0].Str(i), backref.ReplaceAllString(a[2].Str(i), "$${$1}")
				var r string
				if global {
					r = re.ReplaceAllString(s, repl)
				} else if m := re.FindStringSubmatchIndex(s); m != nil {
					r = s[:m[0]] + string(re.ExpandString(nil, repl, s, m)) + s[m[1]:]
				} else {
					r = s
				}
				if len(r) > MaxStringLen {
					return ErrTooLong
				}
				o.Str(r)
				return nil
			}, nil
		}),
	pad("lpad", true),
	pad("rpad", false),
	strRows("repeat", "repeat(s, n)", fmt.Sprintf("s repeated n times (n ≤ 0: ''); at most %s bytes", thousands(MaxStringLen)),
		[]Arg{ArgString, ArgInt}, 2, 2, strType, func(a []Col, i int, o *Out) error {
			s, n := a[0].Str(i), a[1].Int(i)
			if n <= 0 || s == "" {
				o.Str("")
				return nil
			}
			if n > MaxStringLen/int64(len(s)) {
				return ErrTooLong
			}
			o.Str(strings.Repeat(s, int(n)))
			return nil
		}),
	strMap("reverse", "the characters in reverse order", func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	}),
}
