package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/quarrydb/quarry/catalog/flightsrc"
	"github.com/quarrydb/quarry/internal/qerr"
)

// maxConfigBytes bounds a config file.
const maxConfigBytes = 1 << 20

// fileSetting is one key of a config file: the flag it sets, the strings
// to Set it with (several for an array) and its line.
type fileSetting struct {
	key    string
	values []string
	line   int
}

// parseConfigFile parses a TOML config file whose keys are the names of
// fs's flags (all at the top level: no tables). Values are strings,
// integers, floats, booleans or, for repeatable flags, arrays of those.
// Errors name the file and line; an unknown key also lists the known keys
// and the closest ones.
func parseConfigFile(name string, data []byte, fs *flag.FlagSet) ([]fileSetting, error) {
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%w: %s: %d bytes; a config file may have at most %d", errConfig, name, len(data), maxConfigBytes)
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("%w: %s:%d: %v", errConfig, name, row, de)
		}
		return nil, fmt.Errorf("%w: %s: %v", errConfig, name, err)
	}
	lines, err := keyLines(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errConfig, name, err)
	}
	var known []string
	fs.VisitAll(func(f *flag.Flag) {
		if fileKey(f.Name) {
			known = append(known, f.Name)
		}
	})
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return lines[keys[i]] < lines[keys[j]] || lines[keys[i]] == lines[keys[j]] && keys[i] < keys[j]
	})
	out := make([]fileSetting, 0, len(keys))
	for _, k := range keys {
		if k == flightsrc.ConfigKey {
			continue // [[flightsql]] remotes: parseRemotes
		}
		line := lines[k]
		f := fs.Lookup(k)
		if f == nil || !fileKey(k) {
			msg := fmt.Sprintf("%s:%d: unknown key %q", name, line, k)
			if s := qerr.Suggest(k, known, 3); len(s) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, ", "))
			}
			if _, table := doc[k].(map[string]any); table {
				msg += "; settings are top-level keys, not tables"
			}
			return nil, fmt.Errorf("%w: %s; known keys: %s", errConfig, msg, strings.Join(known, ", "))
		}
		values, err := settingValues(doc[k], strings.Contains(f.Usage, "repeatable"))
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %s: %v", errConfig, name, line, k, err)
		}
		out = append(out, fileSetting{key: k, values: values, line: line})
	}
	return out, nil
}

// parseRemotes returns the [[flightsql]] remotes of a config file.
func parseRemotes(name string, data []byte) ([]flightsrc.Config, error) {
	list, err := flightsrc.ParseConfig(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	return list, nil
}

// printRemotes writes remotes as [[flightsql]] tables. Headers may hold
// credentials: only their names are shown, in a comment (like tokens,
// they are not in the output read back).
func printRemotes(w io.Writer, remotes []flightsrc.Config, source string) error {
	if len(remotes) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\n# Arrow Flight SQL remotes (%s)\n", source); err != nil {
		return err
	}
	for _, r := range remotes {
		names := make([]string, 0, len(r.Headers))
		for k := range r.Headers {
			names = append(names, k)
		}
		sort.Strings(names)
		r.Headers = nil
		b, err := toml.Marshal(struct {
			Remotes []flightsrc.Config `toml:"flightsql"`
		}{[]flightsrc.Config{r}})
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		if len(names) > 0 {
			if _, err := fmt.Fprintf(w, "# headers = (%s, values hidden)\n", strings.Join(names, ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}

// settingValues turns a decoded TOML value into the strings flag.Set takes.
func settingValues(v any, repeatable bool) ([]string, error) {
	if arr, ok := v.([]any); ok {
		if !repeatable {
			return nil, errors.New("an array is only accepted for a repeatable flag")
		}
		out := make([]string, 0, len(arr))
		for _, e := range arr {
			s, err := scalarString(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := scalarString(v)
	if err != nil {
		return nil, err
	}
	return []string{s}, nil
}

func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("a %T value is not accepted: use a string, number or boolean", v)
}

// keyLines maps each top-level key (the first part of a dotted key, the
// name of a table) to the line where it first appears.
func keyLines(data []byte) (map[string]int, error) {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.KeyValue && e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		it := e.Key()
		if !it.Next() {
			continue
		}
		k := it.Node()
		if _, seen := lines[string(k.Data)]; !seen {
			lines[string(k.Data)] = p.Shape(k.Raw).Start.Line
		}
	}
	return lines, p.Error()
}
