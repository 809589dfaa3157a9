package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quarrydb/quarry/catalog/flightsrc"
)

// Every `quarry serve` flag can also be set from the environment
// (QUARRY_<FLAG>, upper case, '-' as '_') and from a TOML file named by
// --config (keys are the flag names). The precedence is flag > environment
// > file > default. Names come from the flag set itself, so a new flag is
// configurable everywhere without another declaration.

const (
	// configFlag names the config file; printConfigFlag prints the
	// effective configuration and exits. Neither is a file key.
	configFlag      = "config"
	printConfigFlag = "print-config"
	// envPrefix starts every environment variable name.
	envPrefix = "QUARRY_"
)

// errConfig marks a configuration error (bad file, key, value or
// environment variable).
var errConfig = errors.New("configuration")

// envName is the environment variable read for flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// layers records how each flag of a flag set got its value.
type layers struct {
	fs     *flag.FlagSet
	config string
	print  bool
	// raw holds the strings each flag was Set with, in order (its value
	// as given, also for flags whose String() does not show it).
	raw map[string][]string
	// source says where each flag set away from its default came from.
	source map[string]string
	// remotes are the config file's [[flightsql]] tables.
	remotes []flightsrc.Config
}

// newLayers adds --config and --print-config to fs and starts recording
// the values its flags are set with. Call it after every flag is
// registered and before fs.Parse.
func newLayers(fs *flag.FlagSet) *layers {
	l := &layers{fs: fs, raw: map[string][]string{}, source: map[string]string{}}
	fs.StringVar(&l.config, configFlag, "", "TOML file of settings: keys are the flag names (max-rows = 500); flags and "+envPrefix+"* environment variables override it")
	fs.BoolVar(&l.print, printConfigFlag, false, "print the effective configuration (as TOML, with where each value came from) and exit")
	fs.VisitAll(func(f *flag.Flag) {
		rec := recorder{Value: f.Value, name: f.Name, raw: l.raw}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = boolRecorder{rec}
		} else {
			f.Value = rec
		}
	})
	return l
}

// recorder wraps a flag.Value, keeping the strings it is Set with.
type recorder struct {
	flag.Value
	name string
	raw  map[string][]string
}

// String is the wrapped value's. The flag package also calls it on a zero
// recorder, which wraps nothing, to tell whether a default is worth
// printing in --help.
func (r recorder) String() string {
	if r.Value == nil {
		return ""
	}
	return r.Value.String()
}

func (r recorder) Set(s string) error {
	if err := r.Value.Set(s); err != nil {
		return err
	}
	r.raw[r.name] = append(r.raw[r.name], s)
	return nil
}

// boolRecorder keeps a boolean flag usable as --flag without a value.
type boolRecorder struct{ recorder }

func (boolRecorder) IsBoolFlag() bool { return true }

// String is the wrapped value's; a zero boolRecorder reads as false, a
// boolean flag's zero default.
func (b boolRecorder) String() string {
	if b.Value == nil {
		return "false"
	}
	return b.Value.String()
}

// fileKey reports whether name may appear in a config file.
func fileKey(name string) bool { return name != configFlag && name != printConfigFlag }

// apply sets, after fs.Parse, the flags not given on the command line from
// the environment, then from the config file (--config or
// QUARRY_CONFIG). An empty environment variable counts as unset.
func (l *layers) apply(lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) error {
	l.fs.Visit(func(f *flag.Flag) { l.source[f.Name] = "flag" })
	var errs []error
	l.fs.VisitAll(func(f *flag.Flag) {
		if _, set := l.source[f.Name]; set || f.Name == printConfigFlag {
			return
		}
		env := envName(f.Name)
		v, ok := lookupEnv(env)
		if !ok || v == "" {
			return
		}
		if err := l.fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%w: %s=%q: invalid value for --%s: %v", errConfig, env, v, f.Name, err))
			return
		}
		l.source[f.Name] = "env " + env
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if l.config == "" {
		return nil
	}
	data, err := readFile(l.config)
	if err != nil {
		return fmt.Errorf("%w: --config: %v", errConfig, err)
	}
	settings, err := parseConfigFile(l.config, data, l.fs)
	if err != nil {
		return err
	}
	if l.remotes, err = parseRemotes(l.config, data); err != nil {
		return err
	}
	for _, s := range settings {
		if _, set := l.source[s.key]; set {
			continue
		}
		for _, v := range s.values {
			if err := l.fs.Set(s.key, v); err != nil {
				return fmt.Errorf("%w: %s:%d: %s = %q: %v", errConfig, l.config, s.line, s.key, v, err)
			}
		}
		l.source[s.key] = fmt.Sprintf("file %s:%d", l.config, s.line)
	}
	return nil
}

// secretFlags are never printed.
var secretFlags = map[string]bool{"auth-token": true}

// printConfig writes the effective configuration as a TOML config file,
// one key per flag in name order, each with its source as a comment.
// Secrets are masked; flags without a printable default are commented out.
func (l *layers) printConfig(w io.Writer) error {
	var names []string
	l.fs.VisitAll(func(f *flag.Flag) {
		if fileKey(f.Name) {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	for _, name := range names {
		f := l.fs.Lookup(name)
		src, ok := l.source[name]
		if !ok {
			src = "default"
		}
		vals := l.raw[name]
		if !ok {
			vals = []string{f.DefValue}
		}
		var line string
		switch {
		case secretFlags[name] && ok:
			line = fmt.Sprintf("# %s = (%d value(s), hidden)", name, len(vals))
		case len(vals) == 1 && vals[0] == "" && !ok:
			line = fmt.Sprintf("# %s: not set", name)
		case len(vals) > 1:
			parts := make([]string, len(vals))
			for i, v := range vals {
				parts[i] = strconv.Quote(v)
			}
			line = fmt.Sprintf("%s = [%s]", name, strings.Join(parts, ", "))
		default:
			v := vals[len(vals)-1]
			if _, ok := unwrap(f.Value).(flag.Getter); ok {
				v = f.Value.String() // the value as parsed: 90m shows as 1h30m0s
			}
			line = fmt.Sprintf("%s = %s", name, tomlLiteral(f.Value, v))
		}
		if _, err := fmt.Fprintf(w, "%-40s # %s\n", line, src); err != nil {
			return err
		}
	}
	return printRemotes(w, l.remotes, "file "+l.config)
}

// tomlLiteral writes s, a value of v, as a TOML value of v's type: bools
// and numbers bare, everything else (durations too) as a string.
func tomlLiteral(v flag.Value, s string) string {
	if b, ok := v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		if _, err := strconv.ParseBool(s); err == nil {
			return strings.ToLower(s)
		}
	}
	if g, ok := unwrap(v).(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64:
			if _, err := strconv.ParseInt(s, 0, 64); err == nil {
				return s
			}
		case float64:
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return strconv.FormatFloat(f, 'g', -1, 64)
			}
		case time.Duration, string:
		}
	}
	return strconv.Quote(s)
}

// unwrap returns the flag.Value a recorder wraps.
func unwrap(v flag.Value) flag.Value {
	switch r := v.(type) {
	case recorder:
		return r.Value
	case boolRecorder:
		return r.Value
	}
	return v
}

// applyOS is apply for the real process: os.LookupEnv
// and os.ReadFile.
func (l *layers) applyOS() error { return l.apply(os.LookupEnv, os.ReadFile) }
