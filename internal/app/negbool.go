package app

import "strconv"

// negBool is a boolean flag stored negated, so that the zero Config keeps
// the feature on: --sql=false sets *p (NoSQL) to true.
type negBool struct{ p *bool }

func (f negBool) String() string {
	if f.p == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.p)
}

func (f negBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.p = !v
	return nil
}

func (f negBool) IsBoolFlag() bool { return true }
