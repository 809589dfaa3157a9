package main

import (
	"context"
	"flag"
	"os"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/internal/obs"
)

// config holds the flags shared by the verbs that open a data root.
type config struct {
	app       app.Config
	logFormat string
	logLevel  string
}

// register adds the shared flags to fs.
func (c *config) register(fs *flag.FlagSet) {
	c.app.RegisterFlags(fs)
	fs.StringVar(&c.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
}

// open wires the app for one CLI invocation, logging to stderr.
func open(ctx context.Context, cfg config) (*app.App, error) {
	cfg.app.Logger = obs.NewLogger(os.Stderr, cfg.logFormat, cfg.logLevel)
	cfg.app.Version = version
	return app.Open(ctx, cfg.app)
}
