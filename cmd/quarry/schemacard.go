package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarrydb/quarry/catalog"
)

const schemaCardUsage = `Usage:
  quarry schema-card init DATASET [--data DIR] [--out FILE] [--force]
      print a starter schema card for DATASET (every column with its inferred type and any role,
      description and unit it already has) to stdout, or write it to FILE. Fill in roles,
      descriptions and units, then save it next to the data file as <file>.schema.json.
      Quarry never writes into the data root: an --out inside it is refused (the card is printed
      to stdout instead, and the exit status is 1) — copy it there yourself.
  quarry schema-card check [--data DIR]
      validate every schema card (<file>.schema.json, <stem>.schema.json, _overall.json) under the
      data root, and read every CSV file under its card's read options and type overrides (a value
      that does not parse is reported with its row and column); print the problems and exit 1 if
      there are any.
`

// cmdSchemaCard runs `quarry schema-card init|check`.
func cmdSchemaCard(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "init" && args[0] != "check") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, schemaCardUsage)
			return nil
		}
		fmt.Fprint(stderr, schemaCardUsage)
		return errUsage
	}
	if args[0] == "check" {
		return cmdSchemaCardCheck(ctx, args[1:], stdout, stderr)
	}
	var cfg config
	flags := newFlagSet("schema-card init", "schema-card init DATASET [--data DIR] [--out FILE] [--force]", stderr)
	cfg.register(flags)
	out := flags.String("out", "", "write the card to FILE instead of stdout (never inside the data root)")
	force := flags.Bool("force", false, "overwrite FILE if it exists")
	pos, err := parse(flags, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "quarry schema-card init: name exactly one dataset (see 'quarry catalog')")
		return errUsage
	}
	cfg.logLevel = quietLevel(cfg.logLevel)
	a, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	d, err := a.Catalog.Lookup(pos[0])
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(catalog.StarterCard(d), "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = stdout.Write(b)
		return err
	}
	target, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	if inside(a.Root, target) {
		fmt.Fprintf(stderr, "quarry schema-card init: refusing to write %s: it is inside the data root %s, which Quarry never writes to.\n"+
			"The card is printed below; save it yourself as %s.\n", *out, a.Root, suggestedName(d))
		if _, err := stdout.Write(b); err != nil {
			return err
		}
		return errRefused
	}
	mode := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		mode = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(target, mode, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists (pass --force to overwrite)", *out)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s; save it next to the data file as %s\n", *out, suggestedName(d))
	return nil
}

// Exit-1 outcomes whose details were already printed.
var (
	errRefused      = errors.New("nothing written inside the data root (the card is on stdout)")
	errCardProblems = errors.New("some schema cards have problems")
)

func cmdSchemaCardCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("schema-card check", "schema-card check [--data DIR]", stderr)
	cfg.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		fmt.Fprintln(stderr, "quarry schema-card check: takes no arguments")
		return errUsage
	}
	cfg.logLevel = quietLevel(cfg.logLevel)
	a, err := open(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	cards, problems := 0, 0
	for _, d := range a.Catalog.Datasets() {
		if d.Card != nil {
			cards++
		}
	}
	for _, d := range a.Catalog.Diagnostics() {
		if catalog.IsCardFile(filepath.Base(d.Path)) || catalog.IsCardReadProblem(d) {
			problems++
			fmt.Fprintf(stdout, "%s: %s: %s\n", d.Path, d.Level, d.Reason)
		}
	}
	if problems > 0 {
		return errCardProblems
	}
	fmt.Fprintf(stdout, "schema cards OK (%d datasets have a card)\n", cards)
	return nil
}

// quietLevel keeps the catalog's scan warnings off stderr unless the user
// asked for a level explicitly.
func quietLevel(level string) string {
	if level == "info" {
		return "error"
	}
	return level
}

// suggestedName is where a dataset's card goes, relative to the data root.
func suggestedName(d *catalog.Dataset) string {
	return d.Path + catalog.CardSuffix
}

// inside reports whether p is root or below it (symlinks in p's existing
// prefix resolved).
func inside(root, p string) bool {
	resolved := p
	for dir, rest := p, ""; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			resolved = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	rel, err := filepath.Rel(root, resolved)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
