package main

import (
	"context"
	"os"

	"github.com/quarrydb/quarry/flightsql"
	"github.com/quarrydb/quarry/internal/app"
	mcptransport "github.com/quarrydb/quarry/mcpapi/transport"
)

// flightFacade is `serve --flightsql-addr`: the Flight SQL facade next to
// the MCP transport, with the HTTP transport's tokens.
type flightFacade struct {
	flags  flightsql.Flags
	tokens []mcptransport.Token
	limits *mcptransport.Limiter
}

// check loads the tokens and applies the loopback-or-auth rule before the
// data is opened.
func (f *flightFacade) check(http *mcptransport.HTTPFlags) error {
	if err := f.flags.Check(); err != nil {
		return err
	}
	if f.flags.Addr == "" {
		return nil
	}
	f.limits = http.Limiter()
	var err error
	if f.tokens, err = mcptransport.LoadTokens(http.Sources(os.Getenv)); err != nil {
		return err
	}
	return mcptransport.RequireAuth("Flight SQL", f.flags.Addr, f.tokens)
}

// start binds the facade and serves it until the returned stop is called.
func (f *flightFacade) start(ctx context.Context, a *app.App) (stop func(), err error) {
	if f.flags.Addr == "" {
		return func() {}, nil
	}
	srv, err := flightsql.New(flightsql.Options{Addr: f.flags.Addr, Service: a.Service, Tokens: f.tokens,
		Logger: a.Config.Logger, Version: version, Limits: f.limits, TLSCert: f.flags.TLSCert, TLSKey: f.flags.TLSKey})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(ctx); err != nil {
			a.Config.Logger.Error("flightsql stopped", "error", err.Error())
		}
	}()
	return func() { cancel(); <-done }, nil
}
